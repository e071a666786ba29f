#include "ClusterSnapshot.h"

#include <QJsonArray>

namespace arc::app {
namespace {

qint64 bytes(const QJsonObject& o, const char* key) {
  const QJsonValue v = o.value(QLatin1String(key));
  if (!v.isDouble() || v.toDouble() < 0) return -1;
  return qint64(v.toDouble());
}

int integer(const QJsonObject& o, const char* key) {
  const QJsonValue v = o.value(QLatin1String(key));
  return v.isDouble() && v.toDouble() >= 0 && v.toDouble() < 1e9 ? int(v.toDouble()) : -1;
}

QString text(const QJsonObject& o, const char* key) {
  return o.value(QLatin1String(key)).toString();
}

ClusterBox parseBox(const QJsonObject& node) {
  ClusterBox b;
  b.rank = qMax(0, integer(node, "rank"));
  b.host = text(node, "host");
  const QJsonObject p = node.value(QLatin1String("probe")).toObject();
  if (b.host.isEmpty()) b.host = text(p, "hostname");
  const QJsonObject cpu = p.value(QLatin1String("cpu")).toObject();
  b.cpuModel = text(cpu, "model");
  b.cpuCores = integer(cpu, "cores");
  const QJsonObject m = p.value(QLatin1String("memory")).toObject();
  b.memTotal = bytes(m, "total_bytes");
  b.memAvailable = bytes(m, "available_bytes");
  b.swapTotal = bytes(m, "swap_total_bytes");
  b.swapUsed = bytes(m, "swap_used_bytes");
  b.pageCache = bytes(m, "page_cache_bytes");
  b.dirty = bytes(m, "dirty_bytes");
  b.swappiness = integer(m, "swappiness");
  const QJsonArray gpus = p.value(QLatin1String("gpus")).toArray();
  if (!gpus.isEmpty()) {
    const QJsonObject g = gpus.first().toObject();
    b.gpuName = text(g, "name");
    b.gpuTotal = bytes(g, "total_bytes");
    b.gpuFree = bytes(g, "free_bytes");
  }
  b.gpuNote = text(p, "gpu_note");
  for (const QJsonValue& dv : p.value(QLatin1String("rdma")).toArray()) {
    const QJsonObject d = dv.toObject();
    for (const QJsonValue& pv : d.value(QLatin1String("ports")).toArray()) {
      const QJsonObject po = pv.toObject();
      ClusterPort port;
      port.device = text(d, "name");
      port.port = qMax(0, integer(po, "port"));
      port.state = text(po, "state");
      port.physState = text(po, "phys_state");
      port.rate = text(po, "rate");
      const QJsonValue g = po.value(QLatin1String("rate_gbps"));
      port.rateGbps = g.isDouble() ? g.toDouble() : -1;
      port.linkLayer = text(po, "link_layer");
      port.active = po.value(QLatin1String("active")).toBool();
      port.linkUp = po.value(QLatin1String("link_up")).toBool();
      const QJsonObject nd = po.value(QLatin1String("netdev")).toObject();
      port.netdev = text(nd, "name");
      port.mtu = integer(nd, "mtu");
      port.operstate = text(nd, "operstate");
      b.ports.append(port);
    }
  }
  for (const QJsonValue& fv : p.value(QLatin1String("findings")).toArray()) {
    const QJsonObject f = fv.toObject();
    ClusterFinding finding;
    finding.code = text(f, "code");
    finding.warning = text(f, "severity") == QLatin1String("warning");
    finding.subject = text(f, "subject");
    finding.message = text(f, "message");
    if (!finding.code.isEmpty()) b.findings.append(finding);
  }
  return b;
}

}  // namespace

ClusterSnapshot ClusterSnapshot::fromJson(const QJsonObject& o) {
  ClusterSnapshot s;
  s.stale = o.value(QLatin1String("stale")).toBool();
  for (const QJsonValue& v : o.value(QLatin1String("nodes")).toArray()) {
    if (v.isObject()) s.boxes.append(parseBox(v.toObject()));
  }
  s.ranks = qMax(integer(o, "ranks"), int(s.boxes.size()));
  return s;
}

LinkTestReport LinkTestReport::fromJson(const QJsonObject& o) {
  LinkTestReport r;
  r.ranks = qMax(0, integer(o, "ranks"));
  r.modelLoaded = o.value(QLatin1String("model_loaded")).toBool();
  for (const QJsonValue& v : o.value(QLatin1String("results")).toArray()) {
    const QJsonObject x = v.toObject();
    LinkTestRow row;
    row.bytes = qMax<qint64>(0, bytes(x, "bytes"));
    row.iterations = qMax(0, integer(x, "iterations"));
    row.seconds = x.value(QLatin1String("seconds")).toDouble();
    row.algbwGBs = x.value(QLatin1String("algbw_gbs")).toDouble();
    row.busbwGBs = x.value(QLatin1String("busbw_gbs")).toDouble();
    row.correct = x.value(QLatin1String("correct")).toBool();
    r.rows.append(row);
  }
  return r;
}

}  // namespace arc::app
