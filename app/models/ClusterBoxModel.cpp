#include "ClusterBoxModel.h"

#include "NumberFormat.h"

namespace arc::app {

ClusterBoxModel::ClusterBoxModel(QObject* parent) : QAbstractTableModel(parent) {}

void ClusterBoxModel::setSnapshot(const ClusterSnapshot& s) {
  beginResetModel();
  m_boxes = s.boxes;
  endResetModel();
}

int ClusterBoxModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(m_boxes.size());
}

int ClusterBoxModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QString ClusterBoxModel::gib(qint64 bytes) {
  if (bytes < 0) return tr("?");
  return tr("%1 GiB").arg(decimal(double(bytes) / double(1ll << 30), 1));
}

QVariant ClusterBoxModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= m_boxes.size()) return {};
  const ClusterBox& b = m_boxes.at(index.row());
  const bool memKnown = b.memTotal > 0 && b.memAvailable >= 0 && b.memAvailable <= b.memTotal;
  if (role == FractionRole) {
    switch (index.column()) {
      case MemoryColumn:
        if (!memKnown) return {};
        return double(b.memTotal - b.memAvailable) / double(b.memTotal);
      case SwapColumn:
        if (b.swapTotal <= 0 || b.swapUsed < 0) return {};
        return qBound(0.0, double(b.swapUsed) / double(b.swapTotal), 1.0);
      case PageCacheColumn:
        if (b.memTotal <= 0 || b.pageCache < 0) return {};
        return qBound(0.0, double(b.pageCache) / double(b.memTotal), 1.0);
    }
    return {};
  }
  if (role == Qt::DisplayRole) {
    switch (index.column()) {
      case HostColumn:
        return b.host.isEmpty() ? tr("(unknown)") : b.host;
      case RankColumn:
        return b.rank;
      case MemoryColumn:
        if (!memKnown) return tr("unknown");
        return tr("%1 used of %2").arg(gib(b.memTotal - b.memAvailable), gib(b.memTotal));
      case SwapColumn:
        if (b.swapTotal == 0) return tr("off");
        if (b.swapTotal < 0) return tr("unknown");
        return tr("%1 used of %2").arg(gib(b.swapUsed), gib(b.swapTotal));
      case PageCacheColumn:
        if (b.pageCache < 0) return tr("unknown");
        return b.dirty > 0 ? tr("%1 (%2 dirty)").arg(gib(b.pageCache), gib(b.dirty))
                           : gib(b.pageCache);
      case GpuColumn:
        if (b.gpuName.isEmpty())
          return b.gpuNote.isEmpty() ? tr("none") : tr("none (%1)").arg(b.gpuNote);
        if (b.gpuTotal > 0 && b.gpuFree >= 0)
          return tr("%1, %2 free of %3").arg(b.gpuName, gib(b.gpuFree), gib(b.gpuTotal));
        if (b.gpuTotal > 0) return tr("%1, %2").arg(b.gpuName, gib(b.gpuTotal));
        return b.gpuName;
    }
  }
  if (role == Qt::ToolTipRole && index.column() == HostColumn) {
    return b.cpuCores > 0 ? tr("%1, %2 CPUs").arg(b.cpuModel).arg(b.cpuCores) : b.cpuModel;
  }
  if (role == Qt::ToolTipRole && index.column() == GpuColumn)
    return data(index, Qt::DisplayRole);  // whole, where a narrow window cuts the cell
  return {};
}

QVariant ClusterBoxModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case HostColumn:
      return tr("Box");
    case RankColumn:
      return tr("Rank");
    case MemoryColumn:
      return tr("Memory");
    case SwapColumn:
      return tr("Swap");
    case PageCacheColumn:
      return tr("Page cache");
    case GpuColumn:
      return tr("GPU");
  }
  return {};
}

}  // namespace arc::app
