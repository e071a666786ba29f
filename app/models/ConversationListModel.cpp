#include "ConversationListModel.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QSaveFile>
#include <QStandardPaths>
#include <QUuid>

#include <algorithm>

namespace arc::app {

namespace {
// A conversation file bigger than this is not one the app wrote (images included).
constexpr qint64 kMaxFileBytes = 256LL * 1024 * 1024;
}  // namespace

ConversationListModel::ConversationListModel(QObject* parent) : QAbstractListModel(parent) {}

QString ConversationListModel::defaultDirectory() {
  return QDir(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation))
      .filePath(QStringLiteral("conversations"));
}

void ConversationListModel::load(const QString& dir) {
  beginResetModel();
  m_dir = dir;
  m_items.clear();
  m_loadErrors.clear();
  QDir().mkpath(dir);
  const QFileInfoList files =
      QDir(dir).entryInfoList({QStringLiteral("*.json")}, QDir::Files, QDir::Name);
  for (const QFileInfo& fi : files) {
    QFile f(fi.filePath());
    QString why;
    if (fi.size() > kMaxFileBytes) {
      why = tr("the file is larger than %1 MiB").arg(kMaxFileBytes >> 20);
    } else if (!f.open(QIODevice::ReadOnly)) {
      why = f.errorString();
    } else {
      QJsonParseError err;
      const QJsonDocument doc = QJsonDocument::fromJson(f.readAll(), &err);
      Conversation c;
      QString detail;
      if (err.error != QJsonParseError::NoError)
        why = tr("not valid JSON (%1 at byte %2)").arg(err.errorString()).arg(err.offset);
      else if (!doc.isObject() || !Conversation::fromJson(doc.object(), c, &detail))
        why = tr("not a conversation (%1)").arg(detail);
      else if (c.id != fi.completeBaseName())
        why = tr("its id \"%1\" does not match the file name").arg(c.id);
      else
        m_items.append(c);
    }
    if (!why.isEmpty())
      m_loadErrors << tr("Skipped the conversation file %1: %2").arg(fi.filePath(), why);
  }
  std::stable_sort(
      m_items.begin(), m_items.end(),
      [](const Conversation& a, const Conversation& b) { return a.updated > b.updated; });
  endResetModel();
}

int ConversationListModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(m_items.size());
}

QString ConversationListModel::dateText(const QDateTime& updated, const QDateTime& now,
                                        const QLocale& locale) {
  if (!updated.isValid()) return {};
  const QDateTime t = updated.toLocalTime();
  const qint64 days = t.date().daysTo(now.toLocalTime().date());
  if (days <= 0) return locale.toString(t.time(), QLocale::ShortFormat);
  if (days == 1) return tr("Yesterday");
  if (days < 7) return locale.dayName(t.date().dayOfWeek(), QLocale::LongFormat);
  return locale.toString(t.date(), QLocale::ShortFormat);
}

QVariant ConversationListModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const Conversation& c = m_items.at(index.row());
  switch (role) {
    case Qt::DisplayRole:
    case Qt::EditRole:
      return c.title.isEmpty() ? tr("New conversation") : c.title;
    case Qt::ToolTipRole:
      return c.updated.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm"));
    case IdRole:
      return c.id;
    case UpdatedRole:
      return c.updated;
    case DateTextRole:
      return dateText(c.updated, QDateTime::currentDateTime(), QLocale());
    case SearchTextRole: {
      QString all = c.title;
      for (const ChatMessage& m : c.messages) all += QLatin1Char('\n') + m.content;
      return all;
    }
    default:
      return {};
  }
}

QHash<int, QByteArray> ConversationListModel::roleNames() const {
  QHash<int, QByteArray> r = QAbstractListModel::roleNames();
  r.insert(IdRole, "conversationId");
  r.insert(SearchTextRole, "searchText");
  r.insert(UpdatedRole, "updated");
  r.insert(DateTextRole, "dateText");
  return r;
}

QString ConversationListModel::create(const QString& title) {
  Conversation c;
  c.id = QUuid::createUuid().toString(QUuid::WithoutBraces);
  c.title = title;
  c.updated = QDateTime::currentDateTimeUtc();
  beginInsertRows({}, 0, 0);
  m_items.prepend(c);
  endInsertRows();
  write(c);
  return c.id;
}

bool ConversationListModel::rename(const QString& id, const QString& title) {
  Conversation* c = find(id);
  if (!c) return false;
  c->title = title.trimmed();
  return save(id);
}

bool ConversationListModel::remove(const QString& id) {
  const int row = rowOf(id);
  if (row < 0) return false;
  beginRemoveRows({}, row, row);
  m_items.removeAt(row);
  endRemoveRows();
  QFile::remove(pathOf(id));
  return true;
}

int ConversationListModel::rowOf(const QString& id) const {
  for (int i = 0; i < m_items.size(); ++i)
    if (m_items[i].id == id) return i;
  return -1;
}

Conversation* ConversationListModel::find(const QString& id) {
  const int row = rowOf(id);
  return row < 0 ? nullptr : &m_items[row];
}

bool ConversationListModel::save(const QString& id) {
  const int row = rowOf(id);
  if (row < 0) return false;
  m_items[row].updated = QDateTime::currentDateTimeUtc();
  const QModelIndex idx = index(row);
  emit dataChanged(idx, idx);
  return write(m_items[row]);
}

QString ConversationListModel::pathOf(const QString& id) const {
  return QDir(m_dir.isEmpty() ? defaultDirectory() : m_dir).filePath(id + QStringLiteral(".json"));
}

bool ConversationListModel::write(const Conversation& c) {
  if (m_dir.isEmpty()) return true;  // not bound to a folder (tests, or load() not called yet)
  QSaveFile f(pathOf(c.id));
  if (!f.open(QIODevice::WriteOnly) ||
      f.write(QJsonDocument(c.toJson()).toJson(QJsonDocument::Indented)) < 0 || !f.commit()) {
    m_lastError =
        tr("Could not save the conversation to %1: %2").arg(f.fileName(), f.errorString());
    emit saveFailed(m_lastError);
    return false;
  }
  return true;
}

}  // namespace arc::app
