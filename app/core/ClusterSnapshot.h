// What GET /engine/cluster and POST /engine/link-test answer, parsed defensively: a missing or
// odd field is left at its "unknown" value (-1 or empty), never trusted.
#pragma once

#include <QJsonObject>
#include <QList>
#include <QString>

namespace arc::app {

struct ClusterPort {
  QString device;  // RDMA device: mlx5_0, rocep1s0f0, ...
  int port = 0;
  QString state;      // ACTIVE, DOWN, INIT, ...
  QString physState;  // LinkUp, Polling, Disabled, ...
  QString rate;       // "200 Gb/sec (4X HDR)"
  double rateGbps = -1;
  QString linkLayer;  // Ethernet (RoCE) or InfiniBand
  QString netdev;
  int mtu = -1;
  QString operstate;
  bool active = false;
  bool linkUp = false;
};

struct ClusterFinding {
  QString code;  // stable: see engine/include/arc/cluster_probe.h diagnose()
  bool warning = false;
  QString subject;  // "mlx5_0 port 1", an interface name, "swap", ...
  QString message;  // the engine's English text
};

struct ClusterBox {
  int rank = 0;
  QString host;
  QString cpuModel;
  int cpuCores = -1;
  qint64 memTotal = -1;
  qint64 memAvailable = -1;
  qint64 swapTotal = -1;
  qint64 swapUsed = -1;
  qint64 pageCache = -1;
  qint64 dirty = -1;
  int swappiness = -1;
  QString gpuName;  // empty: none (gpuNote says why)
  qint64 gpuTotal = -1;
  qint64 gpuFree = -1;
  QString gpuNote;
  QList<ClusterPort> ports;
  QList<ClusterFinding> findings;
};

struct ClusterSnapshot {
  int ranks = 0;
  bool stale = false;  // a load held the other ranks: their part is from before
  QList<ClusterBox> boxes;
  static ClusterSnapshot fromJson(const QJsonObject& o);
};

struct LinkTestRow {
  qint64 bytes = 0;
  int iterations = 0;
  double seconds = 0;
  double algbwGBs = 0;
  double busbwGBs = 0;
  bool correct = false;
};

struct LinkTestReport {
  int ranks = 0;
  bool modelLoaded = false;
  QList<LinkTestRow> rows;
  static LinkTestReport fromJson(const QJsonObject& o);
};

}  // namespace arc::app
