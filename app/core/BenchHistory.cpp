#include "BenchHistory.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSaveFile>
#include <QStandardPaths>

namespace arc::app {

namespace {
QString joinInts(const QList<int>& v) {
  QStringList s;
  for (int i : v) s << QString::number(i);
  return s.join(QLatin1Char(','));
}
QString csvField(QString s) {
  if (s.contains(QLatin1Char(',')) || s.contains(QLatin1Char('"')) || s.contains(QLatin1Char('\n')))
    return QLatin1Char('"') + s.replace(QLatin1Char('"'), QStringLiteral("\"\"")) +
           QLatin1Char('"');
  return s;
}
QString n(double v, const BenchSummary& s) {
  return s.valid ? QString::number(v, 'f', 2) : QString();
}
}  // namespace

QStringList BenchSettings::arguments() const {
  QStringList a{QStringLiteral("bench-serve"), QStringLiteral("--url"), url,
                QStringLiteral("--json")};
  if (!apiKey.isEmpty()) a << QStringLiteral("--api-key") << apiKey;
  if (!model.isEmpty()) a << QStringLiteral("--model") << model;
  a << QStringLiteral("--profile") << profile;
  if (!prompts.isEmpty()) a << QStringLiteral("--prompts") << prompts.join(QLatin1Char(','));
  a << QStringLiteral("--long-prompt-tokens") << QString::number(longPromptTokens);
  if (profile == QLatin1String("custom")) {
    if (!concurrency.isEmpty()) a << QStringLiteral("--concurrency") << joinInts(concurrency);
    a << QStringLiteral("--runs") << QString::number(runs) << QStringLiteral("--max-tokens")
      << QString::number(maxTokens);
  }
  return a;
}

QJsonObject BenchSettings::toJson() const {
  QJsonArray conc;
  for (int c : concurrency) conc.append(c);
  return {{QStringLiteral("url"), url},
          {QStringLiteral("model"), model},
          {QStringLiteral("profile"), profile},
          {QStringLiteral("prompts"), QJsonArray::fromStringList(prompts)},
          {QStringLiteral("concurrency"), conc},
          {QStringLiteral("runs"), runs},
          {QStringLiteral("max_tokens"), maxTokens},
          {QStringLiteral("long_prompt_tokens"), longPromptTokens}};
}

BenchSettings BenchSettings::fromJson(const QJsonObject& o) {
  BenchSettings s;
  s.url = o.value(QLatin1String("url")).toString();
  s.model = o.value(QLatin1String("model")).toString();
  s.profile = o.value(QLatin1String("profile")).toString(s.profile);
  if (o.value(QLatin1String("prompts")).isArray()) {
    s.prompts.clear();
    for (const QJsonValue& v : o.value(QLatin1String("prompts")).toArray())
      s.prompts << v.toString();
  }
  if (o.value(QLatin1String("concurrency")).isArray()) {
    s.concurrency.clear();
    for (const QJsonValue& v : o.value(QLatin1String("concurrency")).toArray())
      s.concurrency << v.toInt();
  }
  s.runs = o.value(QLatin1String("runs")).toInt(s.runs);
  s.maxTokens = o.value(QLatin1String("max_tokens")).toInt(s.maxTokens);
  s.longPromptTokens = o.value(QLatin1String("long_prompt_tokens")).toInt(s.longPromptTokens);
  return s;
}

QJsonObject BenchRun::toJson() const {
  QJsonArray res;
  for (const BenchResult& r : results) res.append(r.toJson());
  QJsonObject o{{QStringLiteral("id"), id},
                {QStringLiteral("date"), date.toUTC().toString(Qt::ISODate)},
                {QStringLiteral("model"), model},
                {QStringLiteral("build"), build},
                {QStringLiteral("settings"), settings.toJson()},
                {QStringLiteral("results"), res}};
  if (!error.isEmpty()) o.insert(QStringLiteral("error"), error);
  return o;
}

BenchRun BenchRun::fromJson(const QJsonObject& o) {
  BenchRun r;
  r.id = o.value(QLatin1String("id")).toString();
  r.date = QDateTime::fromString(o.value(QLatin1String("date")).toString(), Qt::ISODate);
  r.model = o.value(QLatin1String("model")).toString();
  r.build = o.value(QLatin1String("build")).toString();
  r.settings = BenchSettings::fromJson(o.value(QLatin1String("settings")).toObject());
  for (const QJsonValue& v : o.value(QLatin1String("results")).toArray())
    if (v.isObject()) r.results.append(BenchResult::fromJson(v.toObject()));
  r.error = o.value(QLatin1String("error")).toString();
  return r;
}

QString BenchRun::title() const {
  return QStringLiteral("%1 · %2 · %3")
      .arg(date.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm")),
           model.isEmpty() ? QCoreApplication::translate("BenchHistory", "(model unknown)") : model,
           settings.url);
}

QByteArray BenchRun::toCsv() const {
  QStringList lines{QStringLiteral(
      "scenario,concurrency,runs,requests,errors,ttft_ms_median,ttft_ms_min,ttft_ms_max,"
      "tpot_ms_median,itl_ms_p90,e2e_ms_median,output_tokens_per_s_median,"
      "output_tokens_per_s_min,output_tokens_per_s_max,total_tokens_per_s,"
      "prefill_tokens_per_s_median,model,server,profile,started_at")};
  for (const BenchResult& r : results) {
    lines << QStringList{csvField(r.scenario),
                         QString::number(r.concurrency),
                         QString::number(r.runs),
                         QString::number(r.requests),
                         QString::number(r.errors),
                         n(r.ttftMs.median, r.ttftMs),
                         n(r.ttftMs.min, r.ttftMs),
                         n(r.ttftMs.max, r.ttftMs),
                         n(r.tpotMs.median, r.tpotMs),
                         n(r.itlMs.p90, r.itlMs),
                         n(r.e2eMs.median, r.e2eMs),
                         n(r.outputTokensPerSec.median, r.outputTokensPerSec),
                         n(r.outputTokensPerSec.min, r.outputTokensPerSec),
                         n(r.outputTokensPerSec.max, r.outputTokensPerSec),
                         QString::number(r.totalTokensPerSec, 'f', 2),
                         n(r.prefillTokensPerSec.median, r.prefillTokensPerSec),
                         csvField(r.model),
                         csvField(r.server),
                         csvField(r.profile),
                         csvField(r.startedAt)}
                 .join(QLatin1Char(','));
  }
  return (lines.join(QLatin1Char('\n')) + QLatin1Char('\n')).toUtf8();
}

QByteArray BenchRun::toJsonBytes() const {
  return QJsonDocument(toJson()).toJson(QJsonDocument::Indented);
}

QString BenchHistory::defaultPath() {
  return QDir(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation))
      .filePath(QStringLiteral("benchmarks.json"));
}

bool BenchHistory::load(const QString& path, QString* error) {
  m_runs.clear();
  QFile f(path);
  if (!f.exists()) return true;
  if (!f.open(QIODevice::ReadOnly)) {
    if (error) *error = f.errorString();
    return false;
  }
  QJsonParseError pe;
  const QJsonDocument doc = QJsonDocument::fromJson(f.readAll(), &pe);
  if (pe.error != QJsonParseError::NoError) {
    if (error)
      *error = QCoreApplication::translate("BenchHistory", "%1: not valid JSON at byte %2 (%3)")
                   .arg(path)
                   .arg(pe.offset)
                   .arg(pe.errorString());
    return false;
  }
  for (const QJsonValue& v : doc.object().value(QLatin1String("runs")).toArray())
    if (v.isObject()) m_runs.append(BenchRun::fromJson(v.toObject()));
  return true;
}

bool BenchHistory::save(const QString& path, QString* error) const {
  QDir().mkpath(QFileInfo(path).absolutePath());
  QJsonArray runs;
  for (const BenchRun& r : m_runs) runs.append(r.toJson());
  QSaveFile f(path);
  if (!f.open(QIODevice::WriteOnly)) {
    if (error) *error = f.errorString();
    return false;
  }
  f.write(QJsonDocument(QJsonObject{{QStringLiteral("version"), 1}, {QStringLiteral("runs"), runs}})
              .toJson(QJsonDocument::Indented));
  if (!f.commit()) {
    if (error) *error = f.errorString();
    return false;
  }
  return true;
}

void BenchHistory::add(const BenchRun& run) {
  m_runs.prepend(run);
  while (m_runs.size() > m_maxRuns) m_runs.removeLast();
}

void BenchHistory::remove(int index) {
  if (index >= 0 && index < m_runs.size()) m_runs.removeAt(index);
}

}  // namespace arc::app
