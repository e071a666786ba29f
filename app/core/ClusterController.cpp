#include "ClusterController.h"

#include "EngineClient.h"

namespace arc::app {

ClusterController::ClusterController(EngineClient* client, QObject* parent)
    : QObject(parent), m_client(client) {
  connect(m_client, &EngineClient::clusterReceived, this, [this](const QJsonObject& o) {
    m_snapshot = ClusterSnapshot::fromJson(o);
    m_hasSnapshot = true;
    m_refreshing = false;
    m_error.clear();
    emit changed();
  });
  connect(m_client, &EngineClient::clusterFailed, this, [this](const QString& message) {
    m_refreshing = false;
    m_error = message;
    emit changed();
  });
  connect(m_client, &EngineClient::requestFailed, this,
          [this](const QString& route, const QString& message) {
            if (route != QStringLiteral("/engine/cluster")) return;
            m_refreshing = false;
            m_error = message;
            emit changed();
          });
  connect(m_client, &EngineClient::linkTestFinished, this, [this](const QJsonObject& o) {
    m_linkTest = LinkTestReport::fromJson(o);
    m_linkRunning = false;
    m_linkError.clear();
    emit linkTestChanged();
  });
  connect(m_client, &EngineClient::linkTestFailed, this, [this](const QString& message) {
    m_linkRunning = false;
    m_linkTest = {};
    m_linkError = message;
    emit linkTestChanged();
  });
}

void ClusterController::refresh() {
  if (m_refreshing) return;
  m_refreshing = true;
  emit changed();
  m_client->fetchCluster();
}

void ClusterController::runLinkTest() {
  if (m_linkRunning) return;
  m_linkRunning = true;
  m_linkError.clear();
  emit linkTestChanged();
  m_client->runLinkTest({});
}

QString ClusterController::findingText(const ClusterFinding& f) {
  const QString s = f.subject;
  if (f.code == QLatin1String("rdma_none"))
    return tr("No RDMA device: the boxes talk over TCP, a fraction of the link's speed.");
  if (f.code == QLatin1String("rdma_none_active"))
    return tr("No RDMA port is active: traffic between the boxes falls back to TCP.");
  if (f.code == QLatin1String("port_no_link"))
    return tr("%1: no link. No cable, or the other box's port is down.").arg(s);
  if (f.code == QLatin1String("port_not_active"))
    return tr("%1: the link is up but the RDMA port is not active. Check the interface is up "
              "and configured on both boxes.")
        .arg(s);
  if (f.code == QLatin1String("netdev_down"))
    return tr("%1 is down: bring it up (ip link set %1 up).").arg(s);
  if (f.code == QLatin1String("mtu_small"))
    return tr("%1 has a small MTU: RoCE then sends packets under 4096 bytes. Set the same larger "
              "MTU (9000) on both boxes.")
        .arg(s);
  if (f.code == QLatin1String("rate_low"))
    return tr("%1 runs below the 200 Gb/s of a DGX Spark QSFP port: check the cable.").arg(s);
  if (f.code == QLatin1String("one_pcie_function"))
    return tr(
        "The ConnectX-7 has active ports on only one of its two PCIe links: one link tops "
        "out near 14 GB/s. Use both interfaces of the cable.");
  if (f.code == QLatin1String("swap_on"))
    return tr("Swap is on: a box that runs out of memory pages for hours instead of failing.");
  if (f.code == QLatin1String("swap_used"))
    return tr("Swap is in use: the box is short of memory. Free memory or load a smaller model.");
  if (f.code == QLatin1String("page_cache_large"))
    return tr(
        "Large page cache: on unified memory the GPU may not get it back in time. Drop it "
        "before a big load (sync; echo 3 | sudo tee /proc/sys/vm/drop_caches).");
  if (f.code == QLatin1String("dirty_large"))
    return tr("Many pages wait to be written to disk: run sync before a load.");
  return f.message;
}

QStringList ClusterController::hints() const {
  QStringList warnings, infos;
  QStringList seen;  // two ranks on one box report the same findings
  for (const ClusterBox& b : m_snapshot.boxes) {
    if (seen.contains(b.host)) continue;
    seen.append(b.host);
    for (const ClusterFinding& f : b.findings) {
      const QString line = tr("%1: %2").arg(b.host, findingText(f));
      (f.warning ? warnings : infos).append(line);
    }
  }
  return warnings + infos;
}

}  // namespace arc::app
