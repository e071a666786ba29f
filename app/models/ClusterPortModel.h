// Every RDMA port of every box: state coloured by health, and the hint for a port that is down,
// not active, or behind an interface with a small MTU.
#pragma once

#include <QAbstractTableModel>

#include "ClusterSnapshot.h"

namespace arc::app {

class ClusterPortModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    HostColumn = 0,
    DeviceColumn,
    StateColumn,
    RateColumn,
    InterfaceColumn,
    MtuColumn,
    HintColumn,
    ColumnCount
  };
  enum class Health { Good = 0, Warning = 1, Down = 2 };
  static constexpr int HealthRole = Qt::UserRole + 1;  // Health as int

  explicit ClusterPortModel(QObject* parent = nullptr);
  void setSnapshot(const ClusterSnapshot& s);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

  static Health health(const ClusterPort& p);
  // Below this, RoCE cannot use 4096-byte packets.
  static constexpr int kSmallMtu = 4200;

 private:
  struct Row {
    QString host;
    ClusterPort port;
  };
  QString hint(const Row& r) const;
  QList<Row> m_rows;
};

}  // namespace arc::app
