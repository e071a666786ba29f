#include "arc/eval/token_metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>

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
  return kl_divergence(ref, log_sum_exp(ref), model, log_sum_exp(model));
}

double kl_divergence(std::span<const float> ref, double lse_r, std::span<const float> model,
                     double lse_q) {
  double kl = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double lp = ref[i] - lse_r;
    const double p = std::exp(lp);
    if (p > 0) kl += p * (lp - (model[i] - lse_q));
  }
  return std::max(kl, 0.0);  // rounding can leave -1e-17 for identical rows
}

void compress_row(std::span<const float> ref, int32_t target, CompressedLogits& out,
                  std::vector<int32_t>& order) {
  const int64_t v = static_cast<int64_t>(ref.size());
  const int64_t k_max = std::min<int64_t>(std::max(out.k, 1), v);
  const double lse = log_sum_exp(ref);
  order.resize(static_cast<size_t>(v));
  for (int64_t i = 0; i < v; ++i) order[i] = static_cast<int32_t>(i);
  // Descending by value, ties by the lower id: the kept set and its order are deterministic.
  auto before = [&](int32_t a, int32_t b) {
    return ref[a] > ref[b] || (ref[a] == ref[b] && a < b);
  };
  std::nth_element(order.begin(), order.begin() + (k_max - 1), order.end(), before);
  std::sort(order.begin(), order.begin() + k_max, before);
  // The mass of everything past the first k_max, summed directly (1 - kept mass would lose it
  // to cancellation when small); then entries are given back to the tail from the end of the
  // kept ones while the tail stays under the target.
  double mass = 0, plogp = 0;
  for (int64_t j = k_max; j < v; ++j) {
    const double lp = ref[order[j]] - lse;
    const double p = std::exp(lp);
    mass += p;
    if (p > 0) plogp += p * lp;
  }
  int64_t keep = k_max;
  while (keep > 1) {
    const double lp = ref[order[keep - 1]] - lse;
    const double p = std::exp(lp);
    if (mass + p >= out.tail_target) break;
    mass += p;
    if (p > 0) plogp += p * lp;
    --keep;
  }
  for (int64_t j = 0; j < keep; ++j) {
    out.ids.push_back(order[j]);
    out.logp.push_back(static_cast<float>(ref[order[j]] - lse));
  }
  out.begin.push_back(static_cast<int64_t>(out.ids.size()));
  out.tail_mass.push_back(mass);
  out.tail_plogp.push_back(plogp);
  out.target_logp.push_back(static_cast<float>(ref[target] - lse));
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
                            std::vector<double>& scratch) {
  const double lse_q = log_sum_exp(model);
  const int64_t b0 = ref.begin[row];
  const int64_t k = ref.begin[row + 1] - b0;
  const int32_t* ids = ref.ids.data() + b0;
  const float* logp = ref.logp.data() + b0;
  scratch.resize(model.size());
  for (size_t i = 0; i < model.size(); ++i) scratch[i] = model[i] - lse_q;
  double kl_s = 0, p_k = 0;
  constexpr double kTaken = std::numeric_limits<double>::infinity();  // marks kept ids
  for (int64_t j = 0; j < k; ++j) {
    const double p = std::exp(static_cast<double>(logp[j]));
    kl_s += p * (logp[j] - scratch[ids[j]]);
    scratch[ids[j]] = kTaken;
    p_k = p;
  }
  const double r = ref.tail_mass[row];
  KlBounds b;
  b.lo = b.hi = kl_s;
  // The tail: Q's log-probabilities of the ids not kept.
  std::erase(scratch, kTaken);
  if (r <= 0 || scratch.empty()) return b;
  double q_t = 0;
  for (double lq : scratch) q_t += std::exp(lq);
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
  return b;
}

}  // namespace arc::eval
