#include "sched/sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace arc {

int32_t argmax(std::span<const float> logits) {
  int32_t best = 0;
  for (size_t i = 1; i < logits.size(); ++i) {
    if (logits[i] > logits[best]) best = static_cast<int32_t>(i);
  }
  return best;
}

std::vector<TokenLogprob> top_logprobs(std::span<const float> logits, int n) {
  const float mx = *std::max_element(logits.begin(), logits.end());
  double sum = 0.0;
  for (float l : logits) sum += std::exp(static_cast<double>(l - mx));
  const float lse = mx + static_cast<float>(std::log(sum));
  std::vector<int32_t> idx(logits.size());
  std::iota(idx.begin(), idx.end(), 0);
  n = std::min<int>(n, static_cast<int>(idx.size()));
  std::partial_sort(idx.begin(), idx.begin() + n, idx.end(), [&](int32_t a, int32_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  });
  std::vector<TokenLogprob> out;
  for (int i = 0; i < n; ++i) out.push_back({idx[i], logits[idx[i]] - lse});
  return out;
}

int32_t Sampler::sample(std::span<const float> logits) {
  if (p_.temperature <= 0.0f || p_.top_k == 1) return argmax(logits);
  std::vector<int32_t> idx(logits.size());
  std::iota(idx.begin(), idx.end(), 0);
  size_t k = idx.size();
  if (p_.top_k > 0) k = std::min<size_t>(k, static_cast<size_t>(p_.top_k));
  std::partial_sort(idx.begin(), idx.begin() + static_cast<int64_t>(k), idx.end(),
                    [&](int32_t a, int32_t b) {
                      return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
                    });
  idx.resize(k);
  std::vector<double> prob(k);
  const double mx = logits[idx[0]];
  double sum = 0.0;
  for (size_t i = 0; i < k; ++i) {
    prob[i] = std::exp((logits[idx[i]] - mx) / p_.temperature);
    sum += prob[i];
  }
  // Nucleus: the shortest prefix whose mass reaches top_p.
  size_t keep = k;
  if (p_.top_p < 1.0f) {
    double acc = 0.0;
    for (size_t i = 0; i < k; ++i) {
      acc += prob[i] / sum;
      if (acc >= p_.top_p) {
        keep = i + 1;
        break;
      }
    }
  }
  double total = 0.0;
  for (size_t i = 0; i < keep; ++i) total += prob[i];
  std::uniform_real_distribution<double> u(0.0, total);
  double r = u(rng_);
  for (size_t i = 0; i < keep; ++i) {
    r -= prob[i];
    if (r <= 0.0) return idx[i];
  }
  return idx[keep - 1];
}

}  // namespace arc
