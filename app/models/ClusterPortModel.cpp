#include "ClusterPortModel.h"

#include <QBrush>
#include <QColor>

namespace arc::app {

ClusterPortModel::ClusterPortModel(QObject* parent) : QAbstractTableModel(parent) {}

void ClusterPortModel::setSnapshot(const ClusterSnapshot& s) {
  beginResetModel();
  m_rows.clear();
  QStringList seen;  // two ranks on one box list the same ports
  for (const ClusterBox& b : s.boxes) {
    if (seen.contains(b.host)) continue;
    seen.append(b.host);
    for (const ClusterPort& p : b.ports) m_rows.append({b.host, p});
  }
  endResetModel();
}

int ClusterPortModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(m_rows.size());
}

int ClusterPortModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

ClusterPortModel::Health ClusterPortModel::health(const ClusterPort& p) {
  if (!p.linkUp && !p.active) return Health::Down;
  if (!p.active) return Health::Warning;  // cable in, RDMA not running
  if (!p.operstate.isEmpty() && p.operstate != QLatin1String("up")) return Health::Warning;
  if (p.linkLayer == QLatin1String("Ethernet") && p.mtu > 0 && p.mtu < kSmallMtu)
    return Health::Warning;
  return Health::Good;
}

QString ClusterPortModel::hint(const Row& r) const {
  const ClusterPort& p = r.port;
  if (!p.linkUp && !p.active) return tr("No link: no cable, or the other box's port is down.");
  if (!p.active) return tr("Link up but RDMA not active: check the interface on both boxes.");
  if (!p.operstate.isEmpty() && p.operstate != QLatin1String("up"))
    return tr("Interface %1 is %2: bring it up.").arg(p.netdev, p.operstate);
  if (p.linkLayer == QLatin1String("Ethernet") && p.mtu > 0 && p.mtu < kSmallMtu)
    return tr("MTU %1 is small for RoCE: set 9000 on both boxes.").arg(p.mtu);
  return {};
}

QVariant ClusterPortModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= m_rows.size()) return {};
  const Row& r = m_rows.at(index.row());
  const ClusterPort& p = r.port;
  const Health h = health(p);
  if (role == HealthRole) return int(h);
  if (role == Qt::BackgroundRole && index.column() == StateColumn) {
    switch (h) {
      case Health::Good:
        return QBrush(QColor(0x3a, 0x9a, 0x4a, 90));
      case Health::Warning:
        return QBrush(QColor(0xe0, 0x7b, 0x24, 110));
      case Health::Down:
        return QBrush(QColor(0x88, 0x88, 0x88, 70));  // often just an unused port
    }
  }
  if (role == Qt::DisplayRole) {
    switch (index.column()) {
      case HostColumn:
        return r.host;
      case DeviceColumn:
        return tr("%1 port %2").arg(p.device).arg(p.port);
      case StateColumn:
        if (p.state.isEmpty() && p.physState.isEmpty()) return tr("unknown");
        return tr("%1 (%2)").arg(p.state.isEmpty() ? tr("?") : p.state,
                                 p.physState.isEmpty() ? tr("?") : p.physState);
      case RateColumn:
        return p.rateGbps >= 0 ? tr("%1 Gb/s").arg(p.rateGbps) : p.rate;
      case InterfaceColumn:
        if (p.netdev.isEmpty()) return tr("none found");
        return p.operstate.isEmpty() ? p.netdev : tr("%1 (%2)").arg(p.netdev, p.operstate);
      case MtuColumn:
        return p.mtu > 0 ? QVariant(p.mtu) : QVariant(tr("?"));
      case HintColumn:
        return hint(r);
    }
  }
  if (role == Qt::ToolTipRole) return p.rate;
  return {};
}

QVariant ClusterPortModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case HostColumn:
      return tr("Box");
    case DeviceColumn:
      return tr("RDMA port");
    case StateColumn:
      return tr("State");
    case RateColumn:
      return tr("Rate");
    case InterfaceColumn:
      return tr("Interface");
    case MtuColumn:
      return tr("MTU");
    case HintColumn:
      return tr("Hint");
  }
  return {};
}

}  // namespace arc::app
