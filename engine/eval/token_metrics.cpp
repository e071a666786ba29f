#include "arc/eval/token_metrics.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "arc/kernels/sampling.h"

namespace arc::eval {

double log_sum_exp(std::span<const float> logits) {
  float mx = -std::numeric_limits<float>::infinity();
  for (float v : logits) mx = std::max(mx, v);
  if (!std::isfinite(mx)) return mx;
  double sum = 0;
  for (float v : logits) sum += std::exp(static_cast<double>(v) - mx);
  return mx + std::log(sum);
}

int32_t argmax(std::span<const float> logits) {
  return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

double token_nll(std::span<const float> logits, int32_t target) {
  return log_sum_exp(logits) - static_cast<double>(logits[static_cast<size_t>(target)]);
}

double kl_divergence(std::span<const float> ref, std::span<const float> model) {
  const double lse_r = log_sum_exp(ref), lse_q = log_sum_exp(model);
  double kl = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double lp = ref[i] - lse_r;
    const double p = std::exp(lp);
    if (p > 0) kl += p * (lp - (model[i] - lse_q));
  }
  return std::max(kl, 0.0);  // rounding can leave -1e-17 for identical rows
}

double ExpRow::lse() const {
  return static_cast<double>(max) + std::log(sum);
}

void exp_row(std::span<const float> x, ExpRow& out) {
  const int64_t n = static_cast<int64_t>(x.size());
  out.e.resize(x.size());
  out.max = kernels::row_max(x.data(), n);
  kernels::tempered_probs(x.data(), n, out.max, 1.0, out.e.data());
  double s = 0;
  for (double v : out.e) s += v;
  out.sum = s;
}

double kl_divergence(std::span<const float> ref, const ExpRow& re, std::span<const float> model,
                     double lse_q) {
  // sum_i p_i (lp_i - lq_i) with lp_i - lq_i = (r_i - q_i) - (lse_r - lse_q): the differences of
  // the raw logits are exact in double, and the constant leaves the sum (sum p_i = 1).
  double dot = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    // Entries R gives no mass add nothing (even where Q's logit is -inf).
    if (re.e[i] != 0)
      dot += re.e[i] * (static_cast<double>(ref[i]) - static_cast<double>(model[i]));
  }
  return std::max(dot / re.sum - (re.lse() - lse_q), 0.0);
}

void compress_row(std::span<const float> ref, int32_t target, CompressedLogits& out,
                  CompressScratch& scratch) {
  const int64_t v = static_cast<int64_t>(ref.size());
  const int64_t k_max = std::min<int64_t>(std::max(out.k, 1), v);
  ExpRow& ex = scratch.exp;
  exp_row(ref, ex);
  const double lse = ex.lse();
  // p_i = e_i / sum, log p_i = x_i - lse: no exp beyond the one pass of exp_row.
  auto prob = [&](int64_t i) { return ex.e[static_cast<size_t>(i)] / ex.sum; };
  // The k_max-th largest value by a selection over plain floats (an index sort with a comparator
  // that reads the row costs several times more at 152k entries).
  std::vector<float>& vals = scratch.values;
  vals.assign(ref.begin(), ref.end());
  std::nth_element(vals.begin(), vals.begin() + (k_max - 1), vals.end(), std::greater<float>());
  const float tau = vals[static_cast<size_t>(k_max - 1)];
  // Kept: everything above tau, then the lowest ids equal to it up to k_max; descending by value,
  // ties by the lower id, so the kept set and its order are deterministic.
  std::vector<int32_t>& kept = scratch.ids;
  kept.clear();
  for (int64_t i = 0; i < v; ++i) {
    if (ref[i] > tau) kept.push_back(static_cast<int32_t>(i));
  }
  int64_t last_tie = -1;  // the highest id equal to tau that is kept
  for (int64_t i = 0; i < v && static_cast<int64_t>(kept.size()) < k_max; ++i) {
    if (ref[i] == tau) kept.push_back(static_cast<int32_t>(last_tie = i));
  }
  std::sort(kept.begin(), kept.end(),
            [&](int32_t a, int32_t b) { return ref[a] > ref[b] || (ref[a] == ref[b] && a < b); });
  // The mass of everything not kept, summed directly (1 - kept mass would lose it to
  // cancellation when small); then entries are given back to the tail from the end of the kept
  // ones while the tail stays under the target.
  double mass = 0, plogp = 0;
  for (int64_t i = 0; i < v; ++i) {
    if (ref[i] < tau || (ref[i] == tau && i > last_tie)) {
      const double p = prob(i);
      mass += p;
      if (p > 0) plogp += p * (ref[i] - lse);
    }
  }
  int64_t keep = static_cast<int64_t>(kept.size());
  while (keep > 1) {
    const int32_t id = kept[keep - 1];
    const double p = prob(id);
    if (mass + p >= out.tail_target) break;
    mass += p;
    if (p > 0) plogp += p * (ref[id] - lse);
    --keep;
  }
  for (int64_t j = 0; j < keep; ++j) {
    out.ids.push_back(kept[j]);
    out.logp.push_back(static_cast<float>(ref[kept[j]] - lse));
  }
  // Tail samples: systematic sampling of the tail's mass along the ids. The kept entries are
  // kept[0, keep); everything else is tail (given-back entries included).
  if (out.samples > 0 && mass > 0) {
    std::vector<float>& mark = scratch.values;  // reused: 1 where an id is kept
    mark.assign(static_cast<size_t>(v), 0.0f);
    for (int64_t j = 0; j < keep; ++j) mark[kept[j]] = 1.0f;
    // A per-row offset in [0, 1) from the row's own numbers, so the grid does not line up with
    // the same ids in every row (deterministic: the same logits sample the same ids).
    uint64_t h = 1469598103934665603ull ^ static_cast<uint64_t>(target);
    uint64_t bits;
    std::memcpy(&bits, &mass, sizeof bits);
    h = (h ^ bits) * 1099511628211ull;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 32;
    const double offset = static_cast<double>(h >> 11) * 0x1.0p-53;
    const double step = mass / out.samples;
    double next = offset * step, cum = 0;
    int32_t taken = 0;
    int64_t last = -1;
    for (int64_t i = 0; i < v && taken < out.samples; ++i) {
      if (mark[static_cast<size_t>(i)] != 0) continue;
      cum += prob(i);
      last = i;
      while (taken < out.samples && cum > next) {
        out.sample_ids.push_back(static_cast<int32_t>(i));
        out.sample_logp.push_back(static_cast<float>(ref[i] - lse));
        next += step;
        ++taken;
      }
    }
    // Rounding can leave the last grid point just past the summed mass: the last tail id.
    for (; taken < out.samples && last >= 0; ++taken) {
      out.sample_ids.push_back(static_cast<int32_t>(last));
      out.sample_logp.push_back(static_cast<float>(ref[last] - lse));
    }
  }
  out.sample_begin.push_back(static_cast<int64_t>(out.sample_ids.size()));
  out.begin.push_back(static_cast<int64_t>(out.ids.size()));
  out.tail_mass.push_back(mass);
  out.tail_plogp.push_back(plogp);
  out.target_logp.push_back(static_cast<float>(ref[target] - lse));
}

void append_rows(CompressedLogits& dst, const CompressedLogits& src) {
  const int64_t base = static_cast<int64_t>(dst.ids.size());
  dst.ids.insert(dst.ids.end(), src.ids.begin(), src.ids.end());
  dst.logp.insert(dst.logp.end(), src.logp.begin(), src.logp.end());
  for (size_t r = 1; r < src.begin.size(); ++r) dst.begin.push_back(base + src.begin[r]);
  const int64_t sbase = static_cast<int64_t>(dst.sample_ids.size());
  dst.sample_ids.insert(dst.sample_ids.end(), src.sample_ids.begin(), src.sample_ids.end());
  dst.sample_logp.insert(dst.sample_logp.end(), src.sample_logp.begin(), src.sample_logp.end());
  for (size_t r = 1; r < src.sample_begin.size(); ++r) {
    dst.sample_begin.push_back(sbase + src.sample_begin[r]);
  }
  dst.tail_mass.insert(dst.tail_mass.end(), src.tail_mass.begin(), src.tail_mass.end());
  dst.tail_plogp.insert(dst.tail_plogp.end(), src.tail_plogp.begin(), src.tail_plogp.end());
  dst.target_logp.insert(dst.target_logp.end(), src.target_logp.begin(), src.target_logp.end());
}

namespace {

// -sum of `weight` on each of the first m of `neg_lq` in the order `first` picks, plus `rem` on
// the next: the cross term -sum p_i log q_i at one vertex of the feasible tails.
template <typename Cmp>
double vertex_cross(std::vector<double>& lq, int64_t m, double weight, double rem, Cmp first) {
  const int64_t n = static_cast<int64_t>(lq.size());
  const int64_t take = std::min(m + 1, n);
  std::nth_element(lq.begin(), lq.begin() + (take - 1), lq.end(), first);
  // After nth_element the first take-1 entries precede entry take-1; the rest follow it.
  double c = 0;
  for (int64_t j = 0; j < take - 1; ++j) c -= weight * lq[j];
  c -= (m < n ? rem : weight) * lq[take - 1];
  return c;
}

}  // namespace

KlBounds kl_from_compressed(const CompressedLogits& ref, int64_t row, std::span<const float> model,
                            const ExpRow& qe, std::vector<double>& scratch) {
  const double lse_q = qe.lse();
  const int64_t b0 = ref.begin[row];
  const int64_t k = ref.begin[row + 1] - b0;
  const int32_t* ids = ref.ids.data() + b0;
  const float* logp = ref.logp.data() + b0;
  scratch.resize(model.size());
  for (size_t i = 0; i < model.size(); ++i) scratch[i] = model[i] - lse_q;
  double kl_s = 0, p_k = 0, q_kept = 0;
  constexpr double kTaken = std::numeric_limits<double>::infinity();  // marks kept ids
  for (int64_t j = 0; j < k; ++j) {
    const double p = std::exp(static_cast<double>(logp[j]));
    kl_s += p * (logp[j] - scratch[ids[j]]);
    if (scratch[ids[j]] != kTaken) q_kept += qe.e[static_cast<size_t>(ids[j])];
    scratch[ids[j]] = kTaken;
    p_k = p;
  }
  const double r = ref.tail_mass[row];
  KlBounds b;
  b.lo = b.hi = b.estimate = b.sampled = kl_s;
  // The tail: Q's log-probabilities of the ids not kept.
  std::erase(scratch, kTaken);
  if (r <= 0 || scratch.empty()) return b;
  // The samples' log-ratios, before scratch is reordered below.
  const int64_t s0 = ref.sample_begin[row], s1 = ref.sample_begin[row + 1];
  double sampled = 0;
  for (int64_t j = s0; j < s1; ++j) {
    sampled += ref.sample_logp[j] - (model[ref.sample_ids[j]] - lse_q);
  }
  // Q's mass outside the kept ids, from the exponentials (summed over the tail itself when the
  // kept part is most of it, where the difference would cancel).
  double q_t = (qe.sum - q_kept) / qe.sum;
  if (q_t < 0.5) {
    q_t = 0;
    for (double lq : scratch) q_t += std::exp(lq);
  }
  // Each tail p_i is at most p_k; the stored log p_k is a float, so allow for its rounding.
  const double cap = p_k * (1 + 1e-6);
  const int64_t m = static_cast<int64_t>(r / cap);
  const double rem = r - static_cast<double>(m) * cap;
  const double c_hi = vertex_cross(scratch, m, cap, rem, std::less<double>());     // smallest q
  const double c_lo = vertex_cross(scratch, m, cap, rem, std::greater<double>());  // largest q
  const double plogp = ref.tail_plogp[row];
  const double coarse = q_t > 0 ? r * std::log(r / q_t) : std::numeric_limits<double>::infinity();
  b.lo = kl_s + std::max(plogp + c_lo, coarse);
  b.hi = kl_s + std::max(plogp + c_hi, coarse);
  b.lo = std::max(b.lo, 0.0);
  b.sampled = s1 > s0 ? kl_s + r * sampled / static_cast<double>(s1 - s0) : b.lo;
  b.estimate = std::clamp(b.sampled, b.lo, b.hi);
  return b;
}

}  // namespace arc::eval
