#include "QualityStore.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSaveFile>
#include <QStandardPaths>

#include <algorithm>

#include "NumberFormat.h"

namespace arc::app {
namespace {

double num(const QJsonObject& o, const char* key, double fallback = 0) {
  const QJsonValue v = o.value(QLatin1String(key));
  return v.isDouble() ? v.toDouble() : fallback;
}

}  // namespace

QualityRecord QualityRecord::fromEvalJson(const QJsonObject& o, const QDateTime& at) {
  QualityRecord r;
  const QJsonObject ppl = o.value(QLatin1String("perplexity")).toObject();
  if (!o.value(QLatin1String("model")).isString() || !ppl.value(QLatin1String("value")).isDouble())
    return r;
  r.model = o.value(QLatin1String("model")).toString();
  r.text = o.value(QLatin1String("text")).toString();
  r.measuredAt = at;
  r.perplexity = num(ppl, "value");
  r.tokensScored = o.value(QLatin1String("tokens_scored")).toInteger();
  r.interrupted = o.value(QLatin1String("interrupted")).toBool();
  const QJsonObject ref = o.value(QLatin1String("reference")).toObject();
  if (!ref.isEmpty()) {
    r.reference = ref.value(QLatin1String("model")).toString();
    r.referencePerplexity = num(ref.value(QLatin1String("perplexity")).toObject(), "value");
    const QJsonObject kl = ref.value(QLatin1String("kl")).toObject();
    r.klMean = num(kl, "mean", -1);
    const QJsonArray ci = kl.value(QLatin1String("ci95")).toArray();
    if (ci.size() == 2) {
      r.klLow = ci.at(0).toDouble();
      r.klHigh = ci.at(1).toDouble();
    }
    r.klP99 = num(kl, "p99");
    // eval reports agreement as a fraction.
    const double top1 = num(ref.value(QLatin1String("top1_agreement")).toObject(), "value", -1);
    r.top1Percent = top1 >= 0 ? 100.0 * top1 : -1;
  }
  return r;
}

QJsonObject QualityRecord::toJson() const {
  return {{QStringLiteral("model"), model},
          {QStringLiteral("reference"), reference},
          {QStringLiteral("text"), text},
          {QStringLiteral("measured_at"), measuredAt.toString(Qt::ISODate)},
          {QStringLiteral("perplexity"), perplexity},
          {QStringLiteral("reference_perplexity"), referencePerplexity},
          {QStringLiteral("kl_mean"), klMean},
          {QStringLiteral("kl_low"), klLow},
          {QStringLiteral("kl_high"), klHigh},
          {QStringLiteral("kl_p99"), klP99},
          {QStringLiteral("top1_percent"), top1Percent},
          {QStringLiteral("tokens_scored"), tokensScored},
          {QStringLiteral("interrupted"), interrupted}};
}

QualityRecord QualityRecord::fromJson(const QJsonObject& o) {
  QualityRecord r;
  r.model = o.value(QLatin1String("model")).toString();
  r.reference = o.value(QLatin1String("reference")).toString();
  r.text = o.value(QLatin1String("text")).toString();
  r.measuredAt =
      QDateTime::fromString(o.value(QLatin1String("measured_at")).toString(), Qt::ISODate);
  r.perplexity = num(o, "perplexity");
  r.referencePerplexity = num(o, "reference_perplexity");
  r.klMean = num(o, "kl_mean", -1);
  r.klLow = num(o, "kl_low");
  r.klHigh = num(o, "kl_high");
  r.klP99 = num(o, "kl_p99");
  r.top1Percent = num(o, "top1_percent", -1);
  r.tokensScored = o.value(QLatin1String("tokens_scored")).toInteger();
  r.interrupted = o.value(QLatin1String("interrupted")).toBool();
  return r;
}

QString QualityRecord::summary() const {
  auto tr = [](const char* s) { return QCoreApplication::translate("QualityRecord", s); };
  QStringList parts;
  if (klMean >= 0) {
    parts << tr("KL %1 (95%: %2-%3, p99 %4) against %5")
                 .arg(decimal(klMean, 4))
                 .arg(decimal(klLow, 4))
                 .arg(decimal(klHigh, 4))
                 .arg(decimal(klP99, 3))
                 .arg(QFileInfo(reference).fileName());
    if (top1Percent >= 0) parts << tr("top-1 %1%").arg(decimal(top1Percent, 2));
    parts << tr("perplexity %1 (reference %2)")
                 .arg(decimal(perplexity, 3))
                 .arg(decimal(referencePerplexity, 3));
  } else {
    parts << tr("perplexity %1").arg(decimal(perplexity, 3));
  }
  parts << tr("%1 tokens of %2, %3")
               .arg(tokensScored)
               .arg(text.isEmpty() ? tr("the built-in text") : text,
                    QLocale().toString(measuredAt.date(), QLocale::ShortFormat));
  if (interrupted) parts << tr("stopped early");
  return parts.join(QStringLiteral(", "));
}

QualityStore::QualityStore(QString fileName) : m_fileName(std::move(fileName)) {
  load();
}

QString QualityStore::defaultFileName() {
  return QDir(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation))
      .filePath(QStringLiteral("quality.json"));
}

void QualityStore::load() {
  QFile f(m_fileName);
  if (!f.open(QIODevice::ReadOnly)) return;  // none yet
  const QJsonArray a =
      QJsonDocument::fromJson(f.readAll()).object().value(QLatin1String("measurements")).toArray();
  for (const QJsonValue& v : a) {
    QualityRecord r = QualityRecord::fromJson(v.toObject());
    if (!r.model.isEmpty()) m_records.append(r);
  }
}

QList<QualityRecord> QualityStore::forModel(const QString& modelPath) const {
  QList<QualityRecord> out;
  const QString want = QFileInfo(modelPath).absoluteFilePath();
  for (const QualityRecord& r : m_records)
    if (QFileInfo(r.model).absoluteFilePath() == want) out.append(r);
  std::sort(out.begin(), out.end(), [](const QualityRecord& a, const QualityRecord& b) {
    return a.measuredAt > b.measuredAt;
  });
  return out;
}

bool QualityStore::add(const QualityRecord& r, QString* error) {
  m_records.removeIf([&r](const QualityRecord& o) {
    return o.model == r.model && o.reference == r.reference && o.text == r.text;
  });
  m_records.append(r);
  QJsonArray a;
  for (const QualityRecord& q : m_records) a.append(q.toJson());
  QDir().mkpath(QFileInfo(m_fileName).absolutePath());
  QSaveFile f(m_fileName);  // written whole or not at all
  if (!f.open(QIODevice::WriteOnly) ||
      f.write(QJsonDocument(QJsonObject{{QStringLiteral("measurements"), a}}).toJson()) < 0 ||
      !f.commit()) {
    if (error) *error = f.errorString();
    return false;
  }
  return true;
}

}  // namespace arc::app
