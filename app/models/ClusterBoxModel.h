// One row per rank of GET /engine/cluster: host, rank, memory / swap / page cache (as text and,
// through FractionRole, as the share a bar shows), GPU.
#pragma once

#include <QAbstractTableModel>

#include "ClusterSnapshot.h"

namespace arc::app {

class ClusterBoxModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    HostColumn = 0,
    RankColumn,
    MemoryColumn,
    SwapColumn,
    PageCacheColumn,
    GpuColumn,
    ColumnCount
  };
  // Share of the bar to fill (0..1) for the memory (used), swap (used) and page cache columns;
  // invalid when unknown.
  static constexpr int FractionRole = Qt::UserRole + 1;

  explicit ClusterBoxModel(QObject* parent = nullptr);
  void setSnapshot(const ClusterSnapshot& s);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

  static QString gib(qint64 bytes);

 private:
  QList<ClusterBox> m_boxes;
};

}  // namespace arc::app
