// Host implementation of the sampling candidates (arc/kernels/candidates.h): the CPU path of the
// sampler and the oracle of the CUDA kernel.
#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>
#include <vector>

#include "arc/kernels/candidates.h"

namespace arc::kernels {

namespace {

// Larger logit -> larger key; -0 and +0 equal; NaN as -inf (the CUDA kernel's order).
uint32_t order_key(float x) {
  if (std::isnan(x)) x = -INFINITY;
  uint32_t u = std::bit_cast<uint32_t>(x);
  if (u == 0x80000000u) u = 0;
  return (u & 0x80000000u) != 0 ? ~u : (u | 0x80000000u);
}

// log-sum-exp as the sampler's logprobs compute it: float differences, double sum.
double log_sum_exp(const float* l, int64_t n) {
  const float mx = *std::max_element(l, l + n);
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += std::exp(static_cast<double>(l[i] - mx));
  return mx + std::log(sum);
}

}  // namespace

float penalised_logit(float x, int32_t count, float repetition, float presence, float frequency) {
  if (repetition != 1.0f) x = x > 0 ? x / repetition : x * repetition;
  if (count > 0) {
    const float f = frequency * static_cast<float>(count);  // rounded before the add: no FMA
    x -= presence + f;
  }
  return x;
}

const float* penalised_row(const TopCandidatesArgs& a, int64_t r, std::vector<float>& scratch) {
  const int64_t n_vocab = a.n_vocab;
  const CandidateRow& row = a.rows[r];
  const float* raw = a.logits + r * n_vocab;
  if (row.pen_end <= row.pen_begin) return raw;
  float* w = a.work != nullptr ? a.work + r * n_vocab : nullptr;
  if (w == nullptr) {
    scratch.resize(static_cast<size_t>(n_vocab));
    w = scratch.data();
  }
  std::copy(raw, raw + n_vocab, w);
  for (int32_t j = row.pen_begin; j < row.pen_end; ++j) {
    const int32_t t = a.pen_tokens[j];
    if (t < 0 || t >= n_vocab) continue;
    w[t] = penalised_logit(w[t], a.pen_counts[j], row.repetition_penalty, row.presence_penalty,
                           row.frequency_penalty);
  }
  return w;
}

void top_candidates_ref(const TopCandidatesArgs& a) {
  const int64_t n_vocab = a.n_vocab;
  if (n_vocab <= 0) return;
  std::vector<float> local;
  std::vector<int32_t> idx;
  for (int64_t r = 0; r < a.n_rows; ++r) {
    const CandidateRow& row = a.rows[r];
    if (row.k < 1 || row.k > kMaxCandidates) continue;
    const float* raw = a.logits + r * n_vocab;
    double* stats = a.stats + 3 * r;
    stats[0] = stats[1] = stats[2] = 0.0;
    if ((row.flags & kCandidateLse) != 0) stats[0] = log_sum_exp(raw, n_vocab);

    const float* l = penalised_row(a, r, local);  // [n_vocab]

    const int64_t k = std::min<int64_t>(row.k, n_vocab);
    auto better = [&](int32_t x, int32_t y) {
      const uint32_t kx = order_key(l[x]), ky = order_key(l[y]);
      return kx > ky || (kx == ky && x < y);
    };
    int32_t* ids = a.ids + r * a.k_stride;
    float* values = a.values + r * a.k_stride;
    if (k == 1) {
      int32_t best = 0;
      for (int32_t i = 1; i < n_vocab; ++i) {
        if (better(i, best)) best = i;
      }
      ids[0] = best;
    } else {
      idx.resize(static_cast<size_t>(n_vocab));
      std::iota(idx.begin(), idx.end(), 0);
      if (k < n_vocab) std::nth_element(idx.begin(), idx.begin() + (k - 1), idx.end(), better);
      std::sort(idx.begin(), idx.begin() + k, better);
      std::copy(idx.begin(), idx.begin() + k, ids);
    }
    for (int64_t i = 0; i < k; ++i) values[i] = l[ids[i]];
    stats[1] = values[0];
    if ((row.flags & kCandidateMass) != 0 && row.temperature > 0.0f) {
      // As the sampler's probabilities: exp((x - max) / T) in double.
      const double mx = values[0];
      double sum = 0.0;
      for (int64_t i = 0; i < n_vocab; ++i) sum += std::exp((l[i] - mx) / row.temperature);
      stats[2] = sum;
    }
  }
}

}  // namespace arc::kernels
