// Two benchmark runs side by side: one row per scenario (prompt set @ streams) found in either
// run, with each run's tokens/s and TTFT and the change from A to B.
#pragma once

#include <QAbstractTableModel>

#include "BenchHistory.h"

namespace arc::app {

class BenchCompareModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    ScenarioColumn = 0,
    RateAColumn,  // tokens/s per stream (total for several streams), run A
    RateBColumn,
    RateChangeColumn,  // (B - A) / A, percent
    TtftAColumn,
    TtftBColumn,
    ColumnCount
  };
  static constexpr int ValueRole = Qt::UserRole + 1;

  explicit BenchCompareModel(QObject* parent = nullptr);

  void setRuns(const BenchRun& a, const BenchRun& b);
  void clear();

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

  // The figure a scenario is compared by: one stream's decode rate, or the total of several.
  static double rateOf(const BenchResult& r);
  // How a column header names a run: "qwen3-8b-q4_k_m, 12/7/26 6:30 PM" (model and date).
  static QString runLabel(const BenchRun& run);

 private:
  struct Row {
    QString key;
    const BenchResult* a = nullptr;
    const BenchResult* b = nullptr;
  };
  BenchRun m_a, m_b;
  QList<Row> m_rows;
  QString m_titleA, m_titleB;  // runLabel() of each
  QString m_fullA, m_fullB;    // BenchRun::title(), for the tooltip
};

}  // namespace arc::app
