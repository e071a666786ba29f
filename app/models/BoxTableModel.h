// The 1–4 box table: for each cluster size, the verdict, memory used per box, the largest context
// at the chosen concurrency and the decode ceiling.
#pragma once

#include <QAbstractTableModel>

#include "FitSummary.h"

namespace arc::app {

class BoxTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    BoxesColumn = 0,
    VerdictColumn,
    PerBoxColumn,
    ContextColumn,
    CeilingColumn,
    ColumnCount
  };

  explicit BoxTableModel(QObject* parent = nullptr);
  void setSummaries(const QList<FitSummary>& rows);  // index 0 = 1 box
  const QList<FitSummary>& summaries() const { return m_rows; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

 private:
  QList<FitSummary> m_rows;
};

}  // namespace arc::app
