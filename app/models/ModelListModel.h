// The catalog or the local GGUF files as a table: one row per model. The loaded model is marked
// (bold, "loaded" in the status column) and each row can carry a fit verdict for the current
// cluster settings, set by the Models controller.
#pragma once

#include <QAbstractTableModel>
#include <QHash>

#include "CatalogEntry.h"

namespace arc::app {

class ModelListModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    NameColumn = 0,
    FamilyColumn,
    ParamsColumn,
    ActiveColumn,
    SizeColumn,
    FitsColumn,
    ColumnCount
  };
  enum Role { FamilyRole = Qt::UserRole + 1, ParamsRole, FitsRole, LoadedRole, IdRole };
  enum class Fit { Unknown = -1, No = 0, Yes = 1 };

  explicit ModelListModel(QObject* parent = nullptr);
  // "7.6 B", "12.5 M", or the count itself for tiny (demo) models; empty when unknown.
  static QString paramsText(double billions);

  void setEntries(const QList<CatalogEntry>& entries);
  const QList<CatalogEntry>& entries() const { return m_entries; }
  const CatalogEntry* entryAt(int row) const;
  int rowOf(const QString& id) const;  // by id, else (local files) by path
  QStringList families() const;

  void setFit(const QString& id, Fit fit);
  void clearFits();
  Fit fitOf(const QString& id) const { return m_fits.value(id, Fit::Unknown); }
  // Marks the model with this path (local) or id (catalog) as loaded; empty: none.
  void setLoaded(const QString& pathOrId);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

 private:
  bool isLoaded(const CatalogEntry& e) const;

  QList<CatalogEntry> m_entries;
  QHash<QString, Fit> m_fits;
  QString m_loaded;
};

}  // namespace arc::app
