#include "CatalogEntry.h"

#include <QCoreApplication>
#include <QJsonArray>
#include <QJsonDocument>

#include "SeedTitles.h"

namespace arc::app {

namespace {

// The first of several keys that holds a value.
QJsonValue pick(const QJsonObject& o, std::initializer_list<const char*> keys) {
  for (const char* k : keys) {
    const QJsonValue v = o.value(QLatin1String(k));
    if (!v.isUndefined() && !v.isNull()) return v;
  }
  return QJsonValue(QJsonValue::Undefined);
}

// Parameters as billions: accepts 30.5 (already billions, under 1e5), 30500000000, or "30.5B".
double billions(const QJsonValue& v) {
  if (v.isString()) {
    QString s = v.toString().trimmed().toUpper();
    double scale = 1;
    if (s.endsWith(QLatin1Char('B')))
      s.chop(1);
    else if (s.endsWith(QLatin1Char('M'))) {
      s.chop(1);
      scale = 1e-3;
    }
    return s.toDouble() * scale;
  }
  const double d = v.toDouble();
  return d > 1e5 ? d / 1e9 : d;
}

qint64 bytesOf(const QJsonObject& o) {
  // The catalog's published figure: {"weights": {"value": 164, "unit": "GB" | "GiB"}}.
  const QJsonObject fig = o.value(QLatin1String("weights")).toObject();
  if (fig.value(QLatin1String("value")).isDouble()) {
    const double v = fig.value(QLatin1String("value")).toDouble();
    return fig.value(QLatin1String("unit")).toString() == QLatin1String("GiB")
               ? qint64(v * double(1ll << 30))
               : qint64(v * 1e9);
  }
  const QJsonValue b = pick(o, {"size_bytes", "file_bytes", "bytes"});
  if (!b.isUndefined()) return b.toInteger(qint64(b.toDouble()));
  const QJsonValue gb = pick(o, {"size_gb", "file_gb"});
  if (!gb.isUndefined()) return qint64(gb.toDouble() * 1e9);
  const QJsonValue gib = pick(o, {"size_gib"});
  if (!gib.isUndefined()) return qint64(gib.toDouble() * double(1ll << 30));
  return 0;
}

QString sourceOf(const QJsonValue& v) {
  if (v.isString()) return v.toString();
  const QJsonObject o = v.toObject();
  QString s = pick(o, {"name", "title", "seed"}).toString();
  const QString url = o.value(QLatin1String("url")).toString();
  if (!url.isEmpty()) s = s.isEmpty() ? url : s + QStringLiteral(" (") + url + QLatin1Char(')');
  return s;
}

void appendSpeeds(QList<PublishedSpeed>& out, const QJsonValue& speeds, const QString& build) {
  for (const QJsonValue& sv : speeds.toArray()) {
    const QJsonObject s = sv.toObject();
    PublishedSpeed ps;
    ps.tokensPerSec =
        pick(s, {"tok_s", "tokens_per_s", "decode_tokens_per_s", "tps", "value"}).toDouble();
    ps.source = sourceOf(pick(s, {"source", "sources"}));
    QStringList what;
    if (!build.isEmpty()) what << build;
    for (const char* k : {"what", "kind", "setup", "build", "quant", "engine", "hardware"})
      if (s.value(QLatin1String(k)).isString()) what << s.value(QLatin1String(k)).toString();
    if (s.value(QLatin1String("boxes")).isDouble())
      what << QCoreApplication::translate("CatalogEntry", "%n box(es)", nullptr,
                                          s.value(QLatin1String("boxes")).toInt());
    ps.what = what.join(QStringLiteral(", "));
    out.append(ps);
  }
}

}  // namespace

qint64 CatalogEntry::sizeBytes() const {
  if (fileBytes > 0) return fileBytes;
  qint64 best = 0;
  for (const CatalogBuild& b : builds)
    if (b.sizeBytes > 0 && (best == 0 || b.sizeBytes < best)) best = b.sizeBytes;
  if (best == 0 && !builds.isEmpty() && paramsB > 0 && builds.first().bitsPerWeight > 0)
    best = qint64(paramsB * 1e9 * builds.first().bitsPerWeight / 8.0);
  return best;
}

CatalogEntry CatalogEntry::fromCatalogJson(const QJsonObject& o) {
  CatalogEntry e;
  e.raw = o;
  e.id = pick(o, {"id", "name"}).toString();
  e.name = pick(o, {"name", "display_name", "id"}).toString();
  e.family = pick(o, {"family", "arch", "architecture"}).toString();
  const QJsonValue arch = pick(o, {"architecture_summary", "description", "architecture"});
  e.architecture = arch.isString() ? arch.toString() : e.family;
  e.paramsB =
      billions(pick(o, {"params_b", "total_params_b", "params", "total_params", "n_params"}));
  e.activeParamsB = billions(pick(o, {"active_params_b", "active_params", "n_active_params"}));
  if (e.activeParamsB <= 0) e.activeParamsB = e.paramsB;
  e.contextLength = pick(o, {"context_length", "max_context", "n_ctx"}).toInteger();
  e.license = o.value(QLatin1String("license")).toString();
  const QJsonValue builds = pick(o, {"builds", "quants", "quantizations"});
  for (const QJsonValue& bv : builds.toArray()) {
    const QJsonObject b = bv.toObject();
    CatalogBuild cb;
    cb.name = pick(b, {"name", "quant", "type", "id"}).toString();
    cb.bitsPerWeight = pick(b, {"bits_per_weight", "bpw"}).toDouble();
    cb.sizeBytes = bytesOf(b);
    e.builds.append(cb);
  }
  appendSpeeds(e.speeds, pick(o, {"speeds", "published_speeds", "measurements"}), QString());
  for (const QJsonValue& bv : builds.toArray())
    appendSpeeds(e.speeds, bv.toObject().value(QLatin1String("speeds")),
                 pick(bv.toObject(), {"name", "quant"}).toString());
  for (const QJsonValue& bv : builds.toArray()) {
    const QJsonObject b = bv.toObject();
    for (const QJsonValue& qv : b.value(QLatin1String("quality")).toArray()) {
      const QJsonObject q = qv.toObject();
      PublishedQuality pq;
      pq.build = pick(b, {"name", "quant"}).toString();
      pq.what = q.value(QLatin1String("what")).toString();
      pq.against = q.value(QLatin1String("against")).toString();
      pq.kl = q.value(QLatin1String("kl")).toDouble(-1);
      pq.top1Percent = q.value(QLatin1String("top1_percent")).toDouble(-1);
      pq.source = sourceOf(q.value(QLatin1String("source")));
      e.quality.append(pq);
    }
  }
  // The catalog's "arch" object: a one-line summary of what the fit calculator uses.
  const QJsonObject a = o.value(QLatin1String("arch")).toObject();
  if (!a.isEmpty() && e.architecture == e.family) {
    QStringList parts;
    if (!e.family.isEmpty()) parts << e.family;
    if (a.value(QLatin1String("layers")).toInteger() > 0)
      parts << QCoreApplication::translate("CatalogEntry", "%1 layers")
                   .arg(a.value(QLatin1String("layers")).toInteger());
    if (a.value(QLatin1String("hidden")).toInteger() > 0)
      parts << QCoreApplication::translate("CatalogEntry", "hidden %1")
                   .arg(a.value(QLatin1String("hidden")).toInteger());
    const QString att = a.value(QLatin1String("attention")).toString();
    if (att == QLatin1String("gqa"))
      parts << QCoreApplication::translate("CatalogEntry", "GQA, %1 KV heads")
                   .arg(a.value(QLatin1String("kv_heads")).toInteger());
    else if (att == QLatin1String("mla"))
      parts << QCoreApplication::translate("CatalogEntry", "MLA attention");
    else
      parts << QCoreApplication::translate("CatalogEntry", "KV layout not published");
    e.architecture = parts.join(QStringLiteral(", "));
    if (e.contextLength <= 0) e.contextLength = a.value(QLatin1String("max_context")).toInteger();
  }
  return e;
}

CatalogEntry CatalogEntry::fromLocalJson(const QJsonObject& o) {
  CatalogEntry e = fromCatalogJson(o);
  e.path = o.value(QLatin1String("path")).toString();
  if (e.name.isEmpty()) e.name = e.path.section(QLatin1Char('/'), -1);
  if (e.id.isEmpty()) e.id = e.path;
  e.fileBytes = bytesOf(o);
  e.quant = pick(o, {"quant", "file_type", "dtype"}).toString();
  // What the engine read from the file's header: family, parameters (all, and those a token uses
  // in a MoE) and the trained context.
  const QJsonObject summary = o.value(QLatin1String("summary")).toObject();
  if (e.family.isEmpty()) e.family = summary.value(QLatin1String("architecture")).toString();
  if (e.architecture.isEmpty()) e.architecture = e.family;
  const double params = summary.value(QLatin1String("n_params")).toDouble();
  if (e.paramsB <= 0 && params > 0) e.paramsB = params / 1e9;
  const double active = summary.value(QLatin1String("n_active_params")).toDouble();
  if (active > 0 && active < params) e.activeParamsB = active / 1e9;
  if (e.activeParamsB <= 0) e.activeParamsB = e.paramsB;
  if (e.contextLength <= 0)
    e.contextLength = summary.value(QLatin1String("hyperparameters"))
                          .toObject()
                          .value(QLatin1String("context_length"))
                          .toInteger();
  e.projector = o.value(QLatin1String("mmproj")).toBool();
  e.visionModel = o.contains(QLatin1String("vision_projector"));
  e.visionProjector = o.value(QLatin1String("vision_projector")).toString();
  return e;
}

QList<CatalogEntry> parseCatalog(const QByteArray& json, QString* error) {
  QJsonParseError perr;
  const QJsonDocument doc = QJsonDocument::fromJson(json, &perr);
  QList<CatalogEntry> out;
  if (perr.error != QJsonParseError::NoError) {
    if (error)
      *error = QCoreApplication::translate("CatalogEntry", "the catalog is not valid JSON: %1")
                   .arg(perr.errorString());
    return out;
  }
  const QJsonArray arr =
      doc.isArray() ? doc.array() : doc.object().value(QLatin1String("models")).toArray();
  // Sources cite seed documents by file name; people see the titles the catalog gives.
  QHash<QString, QString> titles;
  const QJsonObject seeds = doc.object().value(QLatin1String("seeds")).toObject();
  for (auto it = seeds.begin(); it != seeds.end(); ++it) titles.insert(it.key(), it->toString());
  for (const QJsonValue& v : arr) {
    if (!v.isObject()) continue;
    CatalogEntry e = CatalogEntry::fromCatalogJson(v.toObject());
    if (e.id.isEmpty()) continue;
    for (PublishedSpeed& s : e.speeds) s.source = withSeedTitles(s.source, titles);
    for (PublishedQuality& q : e.quality) q.source = withSeedTitles(q.source, titles);
    out.append(e);
  }
  return out;
}

SizeClass sizeClassOf(double paramsB) {
  if (paramsB < 30) return SizeClass::Small;
  if (paramsB <= 150) return SizeClass::Medium;
  return SizeClass::Large;
}

}  // namespace arc::app
