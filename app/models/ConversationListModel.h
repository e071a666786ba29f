// The saved conversations: one JSON file each under <AppDataLocation>/conversations/ID.json,
// written atomically (QSaveFile). A file that cannot be read is reported and skipped; it is never
// deleted or overwritten, and the others still load. Newest first.
#pragma once

#include <QAbstractListModel>
#include <QLocale>
#include <QStringList>

#include "Conversation.h"

namespace arc::app {

class ConversationListModel : public QAbstractListModel {
  Q_OBJECT
 public:
  enum Roles { IdRole = Qt::UserRole + 1, SearchTextRole, UpdatedRole, DateTextRole };

  explicit ConversationListModel(QObject* parent = nullptr);

  // The folder used when none is set: <AppDataLocation>/conversations.
  static QString defaultDirectory();
  // When a conversation last changed, as the list shows it: the time today, "Yesterday", the
  // weekday within a week, else the date (all in `locale` and local time).
  static QString dateText(const QDateTime& updated, const QDateTime& now, const QLocale& locale);
  // Reads every *.json in `dir` (created when missing). Problems go to loadErrors().
  void load(const QString& dir);
  QString directory() const { return m_dir; }
  QStringList loadErrors() const { return m_loadErrors; }

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QHash<int, QByteArray> roleNames() const override;

  // Creates an empty conversation (saved at once); returns its id.
  QString create(const QString& title = {});
  bool rename(const QString& id, const QString& title);
  // Deletes the conversation and its file.
  bool remove(const QString& id);
  int rowOf(const QString& id) const;
  Conversation* find(const QString& id);
  // Writes the conversation's file and refreshes its row; false (and lastError) on failure.
  bool save(const QString& id);
  QString lastError() const { return m_lastError; }

 signals:
  void saveFailed(const QString& message);

 private:
  QString pathOf(const QString& id) const;
  bool write(const Conversation& c);

  QString m_dir;
  QList<Conversation> m_items;
  QStringList m_loadErrors;
  QString m_lastError;
};

}  // namespace arc::app
