#include "sched/sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_map>

namespace arc {

int32_t argmax(std::span<const float> logits) {
  int32_t best = 0;
  for (size_t i = 1; i < logits.size(); ++i) {
    if (logits[i] > logits[best]) best = static_cast<int32_t>(i);
  }
  return best;
}

namespace {
double log_sum_exp(std::span<const float> logits) {
  const float mx = *std::max_element(logits.begin(), logits.end());
  double sum = 0.0;
  for (float l : logits) sum += std::exp(static_cast<double>(l - mx));
  return mx + std::log(sum);
}
}  // namespace

float token_logprob(std::span<const float> logits, int32_t token) {
  if (token < 0 || static_cast<size_t>(token) >= logits.size()) return -INFINITY;
  return static_cast<float>(logits[static_cast<size_t>(token)] - log_sum_exp(logits));
}

std::vector<TokenScore> top_logprobs(std::span<const float> logits, int n) {
  const double lse = log_sum_exp(logits);
  std::vector<int32_t> idx(logits.size());
  std::iota(idx.begin(), idx.end(), 0);
  n = std::max(0, std::min<int>(n, static_cast<int>(idx.size())));
  std::partial_sort(idx.begin(), idx.begin() + n, idx.end(), [&](int32_t a, int32_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  });
  std::vector<TokenScore> out;
  for (int i = 0; i < n; ++i) out.push_back({idx[i], static_cast<float>(logits[idx[i]] - lse)});
  return out;
}

Sampler::Sampler(const SamplingParams& p)
    : p_(p), rng_(p.seed ? *p.seed : std::random_device{}()) {}

int32_t Sampler::sample(std::span<const float> logits, std::span<const int32_t> history,
                        int64_t n_prompt) {
  const size_t n_vocab = logits.size();
  if (n_vocab == 0) return 0;
  const bool penalise =
      p_.repetition_penalty != 1.0f || p_.presence_penalty != 0.0f || p_.frequency_penalty != 0.0f;
  std::span<const float> l = logits;
  if (penalise && !history.empty()) {
    work_.assign(logits.begin(), logits.end());
    std::unordered_map<int32_t, int> output_counts;
    for (size_t i = static_cast<size_t>(std::max<int64_t>(0, n_prompt)); i < history.size(); ++i) {
      output_counts[history[i]]++;
    }
    if (p_.repetition_penalty != 1.0f) {
      std::vector<bool> seen(n_vocab, false);
      for (int32_t t : history) {
        if (t < 0 || static_cast<size_t>(t) >= n_vocab || seen[t]) continue;
        seen[t] = true;
        float& x = work_[static_cast<size_t>(t)];
        x = x > 0 ? x / p_.repetition_penalty : x * p_.repetition_penalty;
      }
    }
    for (const auto& [t, count] : output_counts) {
      if (t < 0 || static_cast<size_t>(t) >= n_vocab) continue;
      work_[static_cast<size_t>(t)] -= p_.presence_penalty + p_.frequency_penalty * count;
    }
    l = work_;
  }
  if (p_.temperature <= 0.0f || p_.top_k == 1) return argmax(l);

  idx_.resize(n_vocab);
  std::iota(idx_.begin(), idx_.end(), 0);
  size_t k = n_vocab;
  if (p_.top_k > 0) k = std::min<size_t>(k, static_cast<size_t>(p_.top_k));
  auto by_logit = [&](int32_t a, int32_t b) { return l[a] > l[b] || (l[a] == l[b] && a < b); };
  if (k < n_vocab) {
    std::nth_element(idx_.begin(), idx_.begin() + static_cast<int64_t>(k), idx_.end(), by_logit);
    idx_.resize(k);
  }
  std::sort(idx_.begin(), idx_.end(), by_logit);
  std::vector<double> prob(k);
  const double mx = l[idx_[0]];
  double sum = 0.0;
  for (size_t i = 0; i < k; ++i) {
    prob[i] = std::exp((l[idx_[i]] - mx) / p_.temperature);
    sum += prob[i];
  }
  size_t keep = k;
  if (p_.top_p < 1.0f) {  // nucleus: the shortest prefix whose mass reaches top_p
    double acc = 0.0;
    for (size_t i = 0; i < k; ++i) {
      acc += prob[i] / sum;
      if (acc >= p_.top_p) {
        keep = i + 1;
        break;
      }
    }
  }
  if (p_.min_p > 0.0f) {  // drop tokens below min_p x the best token's probability
    const double floor = prob[0] * p_.min_p;
    size_t m = 1;
    while (m < keep && prob[m] >= floor) ++m;
    keep = m;
  }
  double total = 0.0;
  for (size_t i = 0; i < keep; ++i) total += prob[i];
  std::uniform_real_distribution<double> u(0.0, total);
  double r = u(rng_);
  for (size_t i = 0; i < keep; ++i) {
    r -= prob[i];
    if (r <= 0.0) return idx_[i];
  }
  return idx_[keep - 1];
}

}  // namespace arc
