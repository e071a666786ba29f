// The saved benchmark runs as a list (newest first): date, model, server, profile, scenarios.
#pragma once

#include <QAbstractTableModel>

#include "BenchHistory.h"

namespace arc::app {

class BenchHistoryModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    DateColumn = 0,
    ModelColumn,
    ServerColumn,
    ProfileColumn,
    ResultColumn,
    ColumnCount
  };

  explicit BenchHistoryModel(QObject* parent = nullptr);

  void setRuns(const QList<BenchRun>& runs);
  const QList<BenchRun>& runs() const { return m_runs; }
  const BenchRun* runAt(int row) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

 private:
  QList<BenchRun> m_runs;
};

}  // namespace arc::app
