#include "ModelFilterProxy.h"

#include "ModelListModel.h"

namespace arc::app {

ModelFilterProxy::ModelFilterProxy(QObject* parent) : QSortFilterProxyModel(parent) {
  setDynamicSortFilter(true);
}

// Qt 6.4 has no begin/endFilterChange; invalidateFilter() re-runs the filter.
void ModelFilterProxy::setSearchText(const QString& text) {
  m_search = text.trimmed();
  invalidateFilter();
}
void ModelFilterProxy::setFamily(const QString& family) {
  m_family = family;
  invalidateFilter();
}
void ModelFilterProxy::setSizeClass(SizeClass c) {
  m_size = c;
  invalidateFilter();
}
void ModelFilterProxy::setFitsOnly(bool on) {
  m_fitsOnly = on;
  invalidateFilter();
}

bool ModelFilterProxy::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const {
  const QAbstractItemModel* m = sourceModel();
  const QModelIndex name = m->index(sourceRow, ModelListModel::NameColumn, sourceParent);
  const QString family = name.data(ModelListModel::FamilyRole).toString();
  if (!m_search.isEmpty() && !name.data().toString().contains(m_search, Qt::CaseInsensitive) &&
      !family.contains(m_search, Qt::CaseInsensitive) &&
      !name.data(Qt::ToolTipRole).toString().contains(m_search, Qt::CaseInsensitive))
    return false;
  if (!m_family.isEmpty() && family != m_family) return false;
  if (m_size != SizeClass::Any &&
      sizeClassOf(name.data(ModelListModel::ParamsRole).toDouble()) != m_size)
    return false;
  if (m_fitsOnly && name.data(ModelListModel::FitsRole).toInt() != int(ModelListModel::Fit::Yes))
    return false;
  return true;
}

bool ModelFilterProxy::lessThan(const QModelIndex& left, const QModelIndex& right) const {
  // Numbers sort as numbers, not as their formatted text.
  if (left.column() == ModelListModel::ParamsColumn ||
      left.column() == ModelListModel::SizeColumn ||
      left.column() == ModelListModel::ActiveColumn) {
    const auto* m = qobject_cast<const ModelListModel*>(sourceModel());
    if (m) {
      const CatalogEntry* a = m->entryAt(left.row());
      const CatalogEntry* b = m->entryAt(right.row());
      if (a && b) {
        if (left.column() == ModelListModel::SizeColumn) return a->sizeBytes() < b->sizeBytes();
        if (left.column() == ModelListModel::ActiveColumn)
          return a->activeParamsB < b->activeParamsB;
        return a->paramsB < b->paramsB;
      }
    }
  }
  return QSortFilterProxyModel::lessThan(left, right);
}

}  // namespace arc::app
