#include "arc/eval/report.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "arc/eval/stats.h"

namespace arc::eval {
namespace {

// The figures derived from the per-token vectors, shared by both outputs.
struct Figures {
  Summary nll, nll_ref, diff, kl, lo, hi, gap;
  double ppl = 0, ppl_lo = 0, ppl_hi = 0;
  double ref_ppl = 0, ref_lo = 0, ref_hi = 0;
  double dppl = 0, dppl_lo = 0, dppl_hi = 0;  // PPL(model) - PPL(reference)
  double top1 = 0, top1_se = 0;
  bool with_ref = false, saved = false;
};

Figures figures(const EvalResult& r) {
  Figures f;
  f.nll = summarize(r.nll);
  f.ppl = std::exp(f.nll.mean);
  f.ppl_lo = std::exp(f.nll.mean - kZ95 * f.nll.se);
  f.ppl_hi = std::exp(f.nll.mean + kZ95 * f.nll.se);
  f.with_ref = !r.nll_ref.empty();
  if (!f.with_ref) return f;
  f.nll_ref = summarize(r.nll_ref);
  f.ref_ppl = std::exp(f.nll_ref.mean);
  f.ref_lo = std::exp(f.nll_ref.mean - kZ95 * f.nll_ref.se);
  f.ref_hi = std::exp(f.nll_ref.mean + kZ95 * f.nll_ref.se);
  // Paired per-token differences: PPL(model) = PPL(ref) * exp(mean difference), and the
  // interval of the difference is far narrower than either perplexity's (the hard tokens are
  // hard for both models).
  std::vector<double> d(r.nll.size());
  for (size_t i = 0; i < d.size(); ++i) d[i] = r.nll[i] - r.nll_ref[i];
  f.diff = summarize(d);
  f.dppl = f.ref_ppl * std::expm1(f.diff.mean);
  f.dppl_lo = f.ref_ppl * std::expm1(f.diff.mean - kZ95 * f.diff.se);
  f.dppl_hi = f.ref_ppl * std::expm1(f.diff.mean + kZ95 * f.diff.se);
  f.kl = summarize(r.kl);
  double agree = 0;
  for (uint8_t a : r.top1) agree += a;
  const double n = static_cast<double>(r.top1.size());
  f.top1 = n > 0 ? agree / n : 0;
  f.top1_se = n > 1 ? std::sqrt(f.top1 * (1 - f.top1) / n) : 0;
  f.saved = !r.kl_hi.empty();
  if (f.saved) {
    // The mean and its error from the unbiased per-token values; percentiles stay those of the
    // clamped ones.
    const Summary sampled = summarize(r.kl_sampled);
    f.kl.mean = sampled.mean;
    f.kl.se = sampled.se;
    f.lo = summarize(r.kl_lo);
    f.hi = summarize(r.kl_hi);
    std::vector<double> gap(r.kl.size());
    for (size_t i = 0; i < gap.size(); ++i) gap[i] = r.kl_hi[i] - r.kl_lo[i];
    f.gap = summarize(gap);
  }
  return f;
}

nlohmann::json interval(double lo, double hi) {
  return nlohmann::json::array({lo, hi});
}

std::string commas(int64_t v) {
  std::string s = std::to_string(v < 0 ? -v : v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return v < 0 ? "-" + s : s;
}

std::string fmt(const char* f, double a, double b = 0, double c = 0, double d = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, f, a, b, c, d);
  return buf;
}

}  // namespace

std::string report_json(const ReportInfo& info, const EvalResult& r) {
  const Figures f = figures(r);
  const int64_t scored = static_cast<int64_t>(r.nll.size());
  nlohmann::json j = {
      {"model", info.model},
      {"text", info.text},
      {"text_tokens", info.text_tokens},
      {"ctx", info.ctx},
      {"stride", info.stride},
      {"backend", info.backend},
      {"tp", info.tp},
      {"windows", {{"done", r.windows_done}, {"planned", r.windows_planned}}},
      {"interrupted", r.interrupted},
      {"tokens_scored", scored},
      {"tokens_fed", r.tokens_fed},
      {"seconds", r.seconds},
      {"forward_seconds", r.forward_seconds},
      {"tokens_per_s", r.seconds > 0 ? r.tokens_fed / r.seconds : 0.0},
      {"confidence",
       "95% intervals: mean +- 1.96 standard errors of the per-token values (tokens treated as "
       "independent)"},
      {"perplexity",
       {{"value", f.ppl},
        {"ci95", interval(f.ppl_lo, f.ppl_hi)},
        {"mean_nll", f.nll.mean},
        {"mean_nll_se", f.nll.se}}},
  };
  if (f.with_ref) {
    nlohmann::json ref = {
        {"model", info.reference},
        {"kind", info.reference_kind},
        {"perplexity",
         {{"value", f.ref_ppl},
          {"ci95", interval(f.ref_lo, f.ref_hi)},
          {"mean_nll", f.nll_ref.mean},
          {"mean_nll_se", f.nll_ref.se}}},
        {"delta_perplexity",
         {{"value", f.dppl},
          {"ci95", interval(f.dppl_lo, f.dppl_hi)},
          {"mean_nll_difference", f.diff.mean},
          {"mean_nll_difference_se", f.diff.se}}},
        {"kl",
         {{"mean", f.kl.mean},
          {"se", f.kl.se},
          {"ci95", interval(f.kl.mean - kZ95 * f.kl.se, f.kl.mean + kZ95 * f.kl.se)},
          {"median", f.kl.median},
          {"p90", f.kl.p90},
          {"p99", f.kl.p99},
          {"max", f.kl.max}}},
        {"top1_agreement",
         {{"value", f.top1},
          {"se", f.top1_se},
          {"ci95", interval(f.top1 - kZ95 * f.top1_se, f.top1 + kZ95 * f.top1_se)}}},
    };
    if (f.saved) {
      ref["kl_compression"] = {
          {"top_k", info.saved_top_k},
          {"tail_target", info.saved_tail_target},
          {"tail_samples", info.saved_tail_samples},
          {"mean_entries", info.saved_mean_entries},
          {"kl_is",
           "estimate: the kept entries exactly, the rest from its samples; mean and se from the "
           "unbiased per-token values, percentiles from them clamped into each token's bounds"},
          {"mean_lower_bound", f.lo.mean},
          {"mean_upper_bound", f.hi.mean},
          {"max_gap", f.gap.max},
      };
    }
    j["reference"] = ref;
  }
  return j.dump(2);
}

std::string report_text(const ReportInfo& info, const EvalResult& r) {
  const Figures f = figures(r);
  std::string s;
  s += "model          " + info.model + "\n";
  s += "text           " + info.text + " (" + commas(info.text_tokens) + " tokens), ctx " +
       commas(info.ctx) + ", stride " + commas(info.stride) + "\n";
  s += "windows        " + commas(r.windows_done) + " of " + commas(r.windows_planned) +
       (r.interrupted ? " (stopped: the figures cover the windows done)" : "") + "\n";
  s += "scored         " + commas(static_cast<int64_t>(r.nll.size())) + " tokens" +
       fmt(" in %.1f s, %.1f tok/s through the model", r.seconds,
           r.seconds > 0 ? static_cast<double>(r.tokens_fed) / r.seconds : 0.0) +
       " (" + info.backend + ", tp " + std::to_string(info.tp) + ")\n";
  s += fmt("               %.1f s in the forward (logits on the host), %.1f s scoring\n",
           r.forward_seconds, r.seconds - r.forward_seconds);
  s += fmt("perplexity     %.4f (95%% CI %.4f - %.4f)\n", f.ppl, f.ppl_lo, f.ppl_hi);
  if (!f.with_ref) return s;
  s += "reference      " + info.reference + " (" + info.reference_kind + ")\n";
  s += fmt("  perplexity   %.4f (95%% CI %.4f - %.4f)\n", f.ref_ppl, f.ref_lo, f.ref_hi);
  s += fmt("  delta ppl    %+.4f (95%% CI %+.4f .. %+.4f), paired per token\n", f.dppl, f.dppl_lo,
           f.dppl_hi);
  s += fmt("  KL mean      %.6f +- %.6f (95%% CI)\n", f.kl.mean, kZ95 * f.kl.se);
  s += fmt("  KL median    %.6f, p90 %.6f, p99 %.6f, max %.6f\n", f.kl.median, f.kl.p90, f.kl.p99,
           f.kl.max);
  s += fmt("  top-1 agree  %.2f%% +- %.2f%% (95%% CI)\n", 100 * f.top1, 100 * kZ95 * f.top1_se);
  if (f.saved) {
    s += fmt(
        "  compression  saved logits: %.1f entries a token (at most %.0f, rest under %g), "
        "%.0f samples of the rest\n",
        info.saved_mean_entries, info.saved_top_k, info.saved_tail_target, info.saved_tail_samples);
    s +=
        fmt("               KL mean above estimated from them; the full KL's mean lies in "
            "[%.6f, %.6f] for certain\n",
            f.lo.mean, f.hi.mean);
  }
  return s;
}

}  // namespace arc::eval
