// FitController's bridge to the fit library (arc_fit): the app's inputs become arc::fit's Cluster
// and Workload, its Report becomes a FitSummary. No arithmetic of its own: every number shown
// comes from arc::fit::compute. Without arc_fit the app still runs and says why planning is off.
#include <QCoreApplication>
#include <QFileInfo>

#include "FitController.h"
#include "NumberFormat.h"

#ifdef ARC_APP_HAVE_FIT
#include "arc/catalog.h"
#include "arc/fit.h"
#ifdef ARC_FIT_HAS_GGUF
#include "arc/fit_gguf.h"
#include "arc/fit_remote.h"
#endif
#endif

namespace arc::app {

#ifdef ARC_APP_HAVE_FIT

struct FitModel {
  std::vector<arc::fit::ModelSpec> specs;  // one per build (local files: one)
  QStringList errors;                      // why a build has no spec, same index
};

namespace {

QString verdictText(arc::fit::Verdict v) {
  switch (v) {
    case arc::fit::Verdict::kFits:
      return FitController::tr("fits");
    case arc::fit::Verdict::kTight:
      return FitController::tr("tight");
    case arc::fit::Verdict::kDoesNotFit:
      break;
  }
  return FitController::tr("does not fit");
}

BoxUsage usageOf(const arc::fit::BoxBudget& b) {
  BoxUsage u;
  u.weightsBytes = double(b.weights + b.ngram_tables);
  u.kvBytes = double(b.kv + b.recurrent_state);
  u.runtimeBytes = double(b.workspace + b.runtime);
  u.reserveBytes = double(b.reserve);
  u.usableBytes = double(b.usable);
  return u;
}

QString gib(double bytes) {
  return FitController::tr("%1 GiB").arg(decimal(bytes / double(1ll << 30), 1));
}
QString sizePair(double bytes) {  // "70.6 GiB (75.8 GB)"
  return FitController::tr("%1 (%2 GB)").arg(gib(bytes), decimal(bytes / 1e9, 1));
}

// The library's one-sentence reason (arc::fit make_reason, the same words in English), said in
// the app's language and number format: what a box uses of what it has, and for a model that
// does not fit, what limits it.
QString reasonText(const arc::fit::Report& r) {
  const arc::fit::BoxBudget& b = r.per_box;
  const int boxes = r.cluster.boxes;
  const QString per = boxes == 1 ? FitController::tr("on one box")
                                 : FitController::tr("on each of %1 boxes").arg(boxes);
  if (r.verdict == arc::fit::Verdict::kFits)
    return FitController::tr("uses %1 of the %2 a box has %3, leaving %4 of headroom")
        .arg(gib(double(b.used)), gib(double(b.usable)), per, gib(double(b.headroom)));
  if (r.verdict == arc::fit::Verdict::kTight)
    return FitController::tr(
               "uses %1 of the %2 a box has %3, leaving only %4 of headroom, under "
               "the %5 margin (a GB10 that runs out of memory freezes)")
        .arg(gib(double(b.used)), gib(double(b.usable)), per, gib(double(b.headroom)),
             gib(r.cluster.tight_below_gib * double(1ll << 30)));
  QString s = FitController::tr("needs %1 %2, %3 more than the %4 a box has")
                  .arg(sizePair(double(b.used)), per, sizePair(double(-b.headroom)),
                       sizePair(double(b.usable)));
  const uint64_t fixed = b.weights + b.ngram_tables + b.runtime + b.reserve + b.workspace;
  if (b.weights + b.ngram_tables > b.usable)
    s += FitController::tr("; the weights alone take %1 a box")
             .arg(gib(double(b.weights + b.ngram_tables)));
  else if (fixed <= b.usable && r.max_context > 0 && r.kv_known)
    s += FitController::tr(
             "; the KV cache for %1 tokens x %2 sequences takes %3 a box, and the "
             "largest context that fits is %4 tokens")
             .arg(QString::number(r.workload.context), QString::number(r.workload.concurrency),
                  gib(double(b.kv)), QString::number(r.max_context));
  if (r.model.ngram_table_bytes > 0 && !r.workload.ngram_on_disk)
    s += FitController::tr("; keeping the n-gram tables on disk would free %1 a box")
             .arg(gib(double(b.ngram_tables)));
  return s;
}

arc::fit::Cluster clusterFor(const FitInputs& in) {
  arc::fit::Cluster c;
  c.boxes = in.boxes;
  c.usable_gib = in.usableGiB;
  c.reserve_gib = in.reserveGiB;
  return c;
}

Result<arc::fit::Workload> workloadFor(const FitInputs& in) {
  arc::fit::Workload w;
  w.context = in.contextTokens;
  w.concurrency = in.concurrency;
  auto kv = arc::fit::parse_kv_dtype(in.kvDtype.toStdString());
  if (!kv.ok()) return kv.status();
  w.kv_dtype = *kv;
  return w;
}

}  // namespace

bool FitController::available() {
  return true;
}

QStringList FitController::kvDtypes() {
  QStringList out;
  for (auto t : {arc::fit::KvDtype::kF16, arc::fit::KvDtype::kBF16, arc::fit::KvDtype::kFp8,
                 arc::fit::KvDtype::kQ8_0, arc::fit::KvDtype::kQ4_0, arc::fit::KvDtype::kF32})
    out << QString::fromStdString(std::string(arc::fit::kv_dtype_name(t)));
  return out;
}

FitSummary FitController::compute(const CatalogEntry& entry, const FitInputs& inputs) {
  FitSummary s;
  s.boxes = inputs.boxes;
  if (!entry.fitModel || entry.fitModel->specs.empty()) {
    s.error = entry.fitModel && !entry.fitModel->errors.isEmpty()
                  ? entry.fitModel->errors.first()
                  : tr("the fit calculator has no numbers for this model");
    return s;
  }
  const int build = qBound(0, inputs.buildIndex, int(entry.fitModel->specs.size()) - 1);
  if (build < entry.fitModel->errors.size() && !entry.fitModel->errors[build].isEmpty()) {
    s.error = entry.fitModel->errors[build];
    return s;
  }
  auto workload = workloadFor(inputs);
  if (!workload.ok()) {
    s.error = QString::fromStdString(workload.status().message());
    return s;
  }
  auto report = arc::fit::compute(entry.fitModel->specs[build], clusterFor(inputs), *workload);
  if (!report.ok()) {
    s.error = QString::fromStdString(report.status().message());
    return s;
  }
  const arc::fit::Report& r = *report;
  s.valid = true;
  s.fits = r.verdict != arc::fit::Verdict::kDoesNotFit;
  s.verdict = verdictText(r.verdict);
  s.reason = reasonText(r);
  for (int b = 0; b < inputs.boxes; ++b) s.perBox << usageOf(r.per_box);
  s.maxContext = r.max_context;
  s.decodeCeilingTokensPerSec = r.decode_ceiling_tok_s;
  return s;
}

QString FitController::attachFitModels(QList<CatalogEntry>& entries, const QByteArray& json) {
  auto catalog =
      arc::catalog::parse_catalog(std::string_view(json.constData(), json.size()), "models.json");
  if (!catalog.ok()) return QString::fromStdString(catalog.status().message());
  for (CatalogEntry& e : entries) {
    const arc::catalog::Model* m = catalog->find(e.id.toStdString());
    if (!m) continue;
    auto fm = std::make_shared<FitModel>();
    for (const arc::catalog::Build& b : m->builds) {
      auto spec = arc::catalog::model_spec(*m, b);
      fm->specs.push_back(spec.ok() ? *spec : arc::fit::ModelSpec{});
      fm->errors << (spec.ok() ? QString() : QString::fromStdString(spec.status().message()));
    }
    e.fitModel = fm;
  }
  return {};
}

QString FitController::attachFitModel(CatalogEntry& e) {
#ifdef ARC_FIT_HAS_GGUF
  if (!QFileInfo(e.path).isReadable())
    return tr("the file is on the engine's machine, not readable here");
  auto spec = arc::fit::model_spec_from_gguf_file(e.path.toStdString());
  auto fm = std::make_shared<FitModel>();
  if (spec.ok()) {
    fm->specs.push_back(*spec);
    fm->errors << QString();
  } else {
    fm->errors << QString::fromStdString(spec.status().message());
  }
  e.fitModel = fm;
  return fm->errors.first();
#else
  Q_UNUSED(e);
  return tr("this build reads no GGUF files for planning");
#endif
}

QString FitController::attachRemoteFitModel(CatalogEntry& e, const QString& url,
                                            const QString& token, qint64* bytesRead) {
#ifdef ARC_FIT_HAS_GGUF
  arc::fit::RemoteOptions o;
  o.bearer_token = token.toStdString();
  auto remote = arc::fit::model_spec_from_gguf_url(url.toStdString(), o);
  auto fm = std::make_shared<FitModel>();
  if (remote.ok()) {
    fm->specs.push_back(remote->spec);
    fm->errors << QString();
    e.fileBytes = qint64(remote->file_bytes);
    if (bytesRead) *bytesRead = qint64(remote->bytes_read);
  } else {
    fm->errors << QString::fromStdString(remote.status().message());
  }
  e.fitModel = fm;
  return fm->errors.first();
#else
  Q_UNUSED(e);
  Q_UNUSED(url);
  Q_UNUSED(token);
  Q_UNUSED(bytesRead);
  return tr("this build reads no GGUF files for planning");
#endif
}

#else  // no arc_fit

struct FitModel {};

bool FitController::available() {
  return false;
}

QStringList FitController::kvDtypes() {
  return {QStringLiteral("f16")};
}

FitSummary FitController::compute(const CatalogEntry& entry, const FitInputs& inputs) {
  Q_UNUSED(entry);
  FitSummary s;
  s.boxes = inputs.boxes;
  s.error = QCoreApplication::translate("FitController",
                                        "the fit calculator (arc_fit) is not part of this build");
  return s;
}

QString FitController::attachFitModels(QList<CatalogEntry>&, const QByteArray&) {
  return {};
}
QString FitController::attachFitModel(CatalogEntry&) {
  return {};
}
QString FitController::attachRemoteFitModel(CatalogEntry&, const QString&, const QString&,
                                            qint64*) {
  return {};
}

#endif

}  // namespace arc::app
