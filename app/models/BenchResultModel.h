// The results of one benchmark run as a table: one row per scenario (prompt set and streams), the
// seeds' way of quoting figures (median with min–max). Rows are appended as results arrive.
#pragma once

#include <QAbstractTableModel>

#include "BenchResult.h"

namespace arc::app {

class BenchResultModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    ScenarioColumn = 0,
    StreamsColumn,
    TtftColumn,        // ms, median (min–max)
    TpotColumn,        // ms, median
    ItlColumn,         // ms, p90
    E2eColumn,         // s, median
    StreamRateColumn,  // tokens/s per stream, median (min–max)
    TotalRateColumn,   // tokens/s of all streams together
    ErrorsColumn,
    ColumnCount
  };
  // Unformatted numbers (the median) for sorting and charts.
  static constexpr int ValueRole = Qt::UserRole + 1;

  explicit BenchResultModel(QObject* parent = nullptr);

  void setResults(const QList<BenchResult>& results);
  void append(const BenchResult& result);
  void clear();
  const QList<BenchResult>& results() const { return m_results; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

 private:
  QList<BenchResult> m_results;
};

}  // namespace arc::app
