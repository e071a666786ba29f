#include "BenchResult.h"

#include <QCoreApplication>
#include <QJsonDocument>

namespace arc::app {

BenchSummary BenchSummary::fromJson(const QJsonValue& v) {
  BenchSummary s;
  if (v.isDouble()) {  // a bare number: the median
    s.valid = true;
    s.median = s.mean = s.min = s.max = s.p90 = s.p99 = v.toDouble();
    s.count = 1;
    return s;
  }
  if (!v.isObject()) return s;
  const QJsonObject o = v.toObject();
  const QJsonValue med = o.value(QLatin1String("median")).isDouble()
                             ? o.value(QLatin1String("median"))
                             : o.value(QLatin1String("p50"));
  if (!med.isDouble()) return s;
  s.valid = true;
  s.median = med.toDouble();
  auto get = [&](const char* k) {
    const QJsonValue x = o.value(QLatin1String(k));
    return x.isDouble() ? x.toDouble() : s.median;
  };
  s.mean = get("mean");
  s.min = get("min");
  s.max = get("max");
  s.p90 = get("p90");
  s.p99 = get("p99");
  s.count = o.value(QLatin1String("count")).toInt();
  return s;
}

QJsonValue BenchSummary::toJson() const {
  if (!valid) return QJsonValue(QJsonValue::Null);
  return QJsonObject{{QStringLiteral("median"), median}, {QStringLiteral("mean"), mean},
                     {QStringLiteral("min"), min},       {QStringLiteral("max"), max},
                     {QStringLiteral("p90"), p90},       {QStringLiteral("p99"), p99},
                     {QStringLiteral("count"), count}};
}

BenchResult BenchResult::fromJson(const QJsonObject& o) {
  BenchResult r;
  r.raw = o;
  auto str = [&](const char* k) { return o.value(QLatin1String(k)).toString(); };
  r.scenario = str("scenario");
  r.concurrency = qMax(1, o.value(QLatin1String("concurrency")).toInt(1));
  r.runs = o.value(QLatin1String("runs")).toInt();
  r.requests = o.value(QLatin1String("requests")).toInt();
  r.errors = o.value(QLatin1String("errors")).toInt();
  r.firstError = str("first_error");
  r.ttftMs = BenchSummary::fromJson(o.value(QLatin1String("ttft_ms")));
  r.tpotMs = BenchSummary::fromJson(o.value(QLatin1String("tpot_ms")));
  r.itlMs = BenchSummary::fromJson(o.value(QLatin1String("itl_ms")));
  r.e2eMs = BenchSummary::fromJson(o.value(QLatin1String("e2e_ms")));
  r.outputTokensPerSec = BenchSummary::fromJson(o.value(QLatin1String("output_tokens_per_s")));
  r.prefillTokensPerSec = BenchSummary::fromJson(o.value(QLatin1String("prefill_tokens_per_s")));
  // total_tokens_per_s is the median as a number; accept a summary object too.
  r.totalTokensPerSec = BenchSummary::fromJson(o.value(QLatin1String("total_tokens_per_s"))).median;
  r.promptTokens = BenchSummary::fromJson(o.value(QLatin1String("prompt_tokens"))).median;
  r.outputTokens = BenchSummary::fromJson(o.value(QLatin1String("output_tokens"))).median;
  r.server = str("server");
  r.model = str("model");
  r.profile = str("profile");
  r.startedAt = str("started_at");
  return r;
}

QString BenchResult::key() const {
  return QStringLiteral("%1 @%2").arg(scenario).arg(concurrency);
}

BenchLine parseBenchLine(const QByteArray& line) {
  BenchLine out;
  const QByteArray t = line.trimmed();
  if (t.isEmpty()) {
    out.error = QCoreApplication::translate("BenchResult", "empty line");
    return out;
  }
  QJsonParseError pe;
  const QJsonDocument doc = QJsonDocument::fromJson(t, &pe);
  if (pe.error != QJsonParseError::NoError || !doc.isObject()) {
    out.error =
        QCoreApplication::translate("BenchResult", "not a JSON object: %1")
            .arg(pe.error != QJsonParseError::NoError ? pe.errorString() : QStringLiteral("?"));
    return out;
  }
  const QJsonObject o = doc.object();
  if (o.value(QLatin1String("scenario")).isString()) {
    out.kind = BenchLine::Kind::Result;
    out.result = BenchResult::fromJson(o);
    return out;
  }
  if (o.contains(QLatin1String("error"))) {
    out.kind = BenchLine::Kind::FatalError;
    const QJsonValue e = o.value(QLatin1String("error"));
    out.error =
        e.isString() ? e.toString() : e.toObject().value(QLatin1String("message")).toString();
    return out;
  }
  out.error = QCoreApplication::translate("BenchResult", "no \"scenario\" in the line");
  return out;
}

}  // namespace arc::app
