// Search and filters over a ModelListModel: text (name, family), family, size class, fits only.
#pragma once

#include <QSortFilterProxyModel>

#include "CatalogEntry.h"

namespace arc::app {

class ModelFilterProxy : public QSortFilterProxyModel {
  Q_OBJECT
 public:
  explicit ModelFilterProxy(QObject* parent = nullptr);

  void setSearchText(const QString& text);
  void setFamily(const QString& family);  // empty: all
  void setSizeClass(SizeClass c);
  void setFitsOnly(bool on);

 protected:
  bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;
  bool lessThan(const QModelIndex& left, const QModelIndex& right) const override;

 private:
  QString m_search;
  QString m_family;
  SizeClass m_size = SizeClass::Any;
  bool m_fitsOnly = false;
};

}  // namespace arc::app
