#include "ModelListModel.h"

#include <QFont>

#include "EngineEvents.h"
#include "NumberFormat.h"

namespace arc::app {

ModelListModel::ModelListModel(QObject* parent) : QAbstractTableModel(parent) {}

void ModelListModel::setEntries(const QList<CatalogEntry>& entries) {
  beginResetModel();
  m_entries = entries;
  endResetModel();
}

const CatalogEntry* ModelListModel::entryAt(int row) const {
  return row >= 0 && row < m_entries.size() ? &m_entries[row] : nullptr;
}

int ModelListModel::rowOf(const QString& id) const {
  for (int i = 0; i < m_entries.size(); ++i)
    if (m_entries[i].id == id) return i;
  // A local file is also found by its path (its id is the name the engine gave it).
  for (int i = 0; i < m_entries.size(); ++i)
    if (!id.isEmpty() && m_entries[i].path == id) return i;
  return -1;
}

QStringList ModelListModel::families() const {
  QStringList out;
  for (const CatalogEntry& e : m_entries)
    if (!e.family.isEmpty() && !out.contains(e.family)) out << e.family;
  out.sort();
  return out;
}

void ModelListModel::setFit(const QString& id, Fit fit) {
  if (m_fits.value(id, Fit::Unknown) == fit) return;
  m_fits.insert(id, fit);
  const int row = rowOf(id);
  if (row >= 0) emit dataChanged(index(row, 0), index(row, ColumnCount - 1));
}

void ModelListModel::clearFits() {
  if (m_fits.isEmpty()) return;
  m_fits.clear();
  if (!m_entries.isEmpty())
    emit dataChanged(index(0, 0), index(int(m_entries.size()) - 1, ColumnCount - 1));
}

void ModelListModel::setLoaded(const QString& pathOrId) {
  if (m_loaded == pathOrId) return;
  m_loaded = pathOrId;
  if (!m_entries.isEmpty())
    emit dataChanged(index(0, 0), index(int(m_entries.size()) - 1, ColumnCount - 1));
}

bool ModelListModel::isLoaded(const CatalogEntry& e) const {
  if (m_loaded.isEmpty()) return false;
  return e.isLocal() ? e.path == m_loaded : e.id == m_loaded;
}

int ModelListModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(m_entries.size());
}

int ModelListModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QString ModelListModel::paramsText(double billions) {
  if (billions <= 0) return {};
  if (billions >= 1) return tr("%1 B").arg(decimal(billions, 1));
  if (billions >= 1e-3) return tr("%1 M").arg(decimal(billions * 1e3, 1));
  return QLocale().toString(qint64(billions * 1e9 + 0.5));  // a demo model's few thousand
}

QVariant ModelListModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const CatalogEntry& e = m_entries[index.row()];
  const Fit fit = fitOf(e.id);
  switch (role) {
    case FamilyRole:
      return e.family;
    case ParamsRole:
      return e.paramsB;
    case FitsRole:
      return int(fit);
    case LoadedRole:
      return isLoaded(e);
    case IdRole:
      return e.id;
    case Qt::FontRole:
      if (isLoaded(e)) {
        QFont f;
        f.setBold(true);
        return f;
      }
      return {};
    case Qt::ToolTipRole:
      return e.isLocal() ? e.path : e.name;
    case Qt::TextAlignmentRole:
      if (index.column() == ParamsColumn || index.column() == ActiveColumn ||
          index.column() == SizeColumn)
        return int(Qt::AlignRight | Qt::AlignVCenter);
      return {};
    case Qt::DisplayRole:
      break;
    default:
      return {};
  }
  switch (index.column()) {
    case NameColumn:
      return isLoaded(e) ? tr("%1 (loaded)").arg(e.name) : e.name;
    case FamilyColumn:
      return e.family;
    case ParamsColumn:
      return paramsText(e.paramsB);
    case ActiveColumn:
      return paramsText(e.activeParamsB);
    case SizeColumn:
      return e.sizeBytes() > 0 ? tr("%1 GiB").arg(decimal(double(e.sizeBytes()) / double(1ll << 30),
                                                          e.sizeBytes() < (1ll << 30) ? 2 : 1))
                               : QString();
    case FitsColumn:
      return fit == Fit::Yes ? tr("fits") : fit == Fit::No ? tr("does not fit") : QString();
  }
  return {};
}

QVariant ModelListModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case NameColumn:
      return tr("Model");
    case FamilyColumn:
      return tr("Family");
    case ParamsColumn:
      return tr("Parameters");
    case ActiveColumn:
      return tr("Active");
    case SizeColumn:
      return tr("Size");
    case FitsColumn:
      return tr("Fit");
  }
  return {};
}

}  // namespace arc::app
