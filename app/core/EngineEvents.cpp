#include "EngineEvents.h"

#include <QCoreApplication>
#include <QJsonArray>

#include "NumberFormat.h"

namespace arc::app {

namespace {
qint64 i64(const QJsonObject& o, const char* key) {
  return o.value(QLatin1String(key)).toInteger();
}
double f64(const QJsonObject& o, const char* key) {
  return o.value(QLatin1String(key)).toDouble();
}
QString str(const QJsonObject& o, const char* key) {
  return o.value(QLatin1String(key)).toString();
}
}  // namespace

EngineState engineStateFromString(const QString& s) {
  if (s == QLatin1String("idle")) return EngineState::Idle;
  if (s == QLatin1String("loading")) return EngineState::Loading;
  if (s == QLatin1String("ready")) return EngineState::Ready;
  if (s == QLatin1String("error")) return EngineState::Error;
  return EngineState::Unknown;
}

QString engineStateName(EngineState s) {
  switch (s) {
    case EngineState::Idle:
      return QCoreApplication::translate("EngineState", "idle");
    case EngineState::Loading:
      return QCoreApplication::translate("EngineState", "loading");
    case EngineState::Ready:
      return QCoreApplication::translate("EngineState", "ready");
    case EngineState::Error:
      return QCoreApplication::translate("EngineState", "error");
    case EngineState::Unknown:
      break;
  }
  return QCoreApplication::translate("EngineState", "unknown");
}

QList<RankMemory> rankMemoryFromJson(const QJsonValue& v) {
  QList<RankMemory> out;
  const QJsonArray arr = v.toArray();
  for (const QJsonValue& e : arr) {
    const QJsonObject o = e.toObject();
    RankMemory m;
    m.rank = int(i64(o, "rank"));
    m.host = str(o, "host");
    m.usedBytes = i64(o, "used_bytes");
    m.availableBytes = i64(o, "available_bytes");
    m.totalBytes = i64(o, "total_bytes");
    out.append(m);
  }
  return out;
}

LoadProgress LoadProgress::fromJson(const QJsonObject& o) {
  LoadProgress p;
  p.rank = int(i64(o, "rank"));
  p.bytesDone = i64(o, "bytes_done");
  p.bytesTotal = i64(o, "bytes_total");
  p.model = str(o, "model");
  return p;
}

StatsSnapshot StatsSnapshot::fromJson(const QJsonObject& o) {
  StatsSnapshot s;
  s.state = engineStateFromString(str(o, "state"));
  s.decodeTokensPerSec = f64(o, "decode_tokens_per_s");
  s.prefillTokensPerSec = f64(o, "prefill_tokens_per_s");
  s.running = int(i64(o, "running"));
  s.waiting = int(i64(o, "waiting"));
  s.kvBlocksUsed = i64(o, "kv_blocks_used");
  s.kvBlocksTotal = i64(o, "kv_blocks_total");
  s.kvBlocksCached = i64(o, "kv_blocks_cached");
  s.prefixHitRate = f64(o, "prefix_hit_rate");
  s.generatedTokensTotal = i64(o, "generated_tokens_total");
  const QJsonValue ar = o.value(QLatin1String("allreduce_bytes_per_s"));
  if (ar.isDouble()) s.allreduceBytesPerSec = ar.toDouble();
  const QJsonValue acc = o.value(QLatin1String("acceptance_rate"));
  if (acc.isDouble()) s.acceptanceRate = acc.toDouble();
  const QJsonValue link = o.value(QLatin1String("link_utilization"));
  if (link.isDouble()) s.linkUtilization = link.toDouble();
  s.memory = rankMemoryFromJson(o.value(QLatin1String("memory")));
  return s;
}

RequestRecord RequestRecord::fromJson(const QJsonObject& o) {
  RequestRecord r;
  r.id = str(o, "id");
  r.finishReason = str(o, "finish_reason");
  r.queueMs = f64(o, "queue_ms");
  r.ttftMs = f64(o, "ttft_ms");
  r.prefillTokensPerSec = f64(o, "prefill_tokens_per_s");
  r.decodeTokensPerSec = f64(o, "decode_tokens_per_s");
  r.promptTokens = i64(o, "prompt_tokens");
  r.completionTokens = i64(o, "completion_tokens");
  r.cachedTokens = i64(o, "cached_tokens");
  r.totalMs = f64(o, "total_ms");
  return r;
}

EngineError EngineError::fromJson(const QJsonObject& o) {
  const QJsonObject inner =
      o.value(QLatin1String("error")).isObject() ? o.value(QLatin1String("error")).toObject() : o;
  EngineError e;
  e.message = str(inner, "message");
  if (e.message.isEmpty() && o.value(QLatin1String("error")).isString())
    e.message = o.value(QLatin1String("error")).toString();
  e.requiredBytes = i64(inner, "required_bytes");
  e.availableBytes = i64(inner, "available_bytes");
  return e;
}

QString EngineError::describe() const {
  QString text =
      message.isEmpty() ? QCoreApplication::translate("EngineError", "unknown error") : message;
  if (requiredBytes > 0 || availableBytes > 0)
    text += QCoreApplication::translate("EngineError", " (needs %1, available %2)")
                .arg(formatBytes(requiredBytes), formatBytes(availableBytes));
  return text;
}

LoadedModel LoadedModel::fromJson(const QJsonObject& o) {
  LoadedModel m;
  m.id = str(o, "id");
  m.path = str(o, "path");
  m.architecture = str(o, "architecture");
  m.contextLength = i64(o, "context_length");
  return m;
}

EngineStatus EngineStatus::fromJson(const QJsonObject& o) {
  EngineStatus s;
  s.state = engineStateFromString(str(o, "state"));
  s.version = str(o, "version");
  if (o.value(QLatin1String("model")).isObject())
    s.model = LoadedModel::fromJson(o.value(QLatin1String("model")).toObject());
  else if (o.value(QLatin1String("model")).isString())
    s.model.id = o.value(QLatin1String("model")).toString();
  s.ranks = qMax(1, int(i64(o, "ranks")));
  s.backend = str(o, "backend");
  s.backendReason = str(o, "backend_reason");
  s.device = o.contains(QLatin1String("device")) ? int(i64(o, "device")) : -1;
  s.memory = rankMemoryFromJson(o.value(QLatin1String("memory")));
  return s;
}

QString formatBytes(qint64 bytes) {
  const double gib = double(bytes) / double(1ll << 30);
  if (gib >= 1.0) return QStringLiteral("%1 GiB").arg(decimal(gib, 1));
  const double mib = double(bytes) / double(1 << 20);
  if (mib >= 1.0) return QStringLiteral("%1 MiB").arg(decimal(mib, 1));
  return QStringLiteral("%1 B").arg(bytes);
}

}  // namespace arc::app
