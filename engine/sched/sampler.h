// Token sampling from logits: greedy, temperature, top-k, top-p, with a seeded generator.
// The serving work grows this (min-p, penalties, stop strings); logprobs are reported here.
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <vector>

namespace arc {

struct SamplingParams {
  float temperature = 0.0f;  // <= 0: greedy (argmax; ties go to the lowest id)
  int top_k = 0;             // 0: no limit
  float top_p = 1.0f;        // nucleus mass kept
  uint64_t seed = 0;
};

struct TokenLogprob {
  int32_t token = 0;
  float logprob = 0.0f;
};

class Sampler {
 public:
  explicit Sampler(const SamplingParams& p) : p_(p), rng_(p.seed) {}
  // logits: [n_vocab].
  int32_t sample(std::span<const float> logits);
  const SamplingParams& params() const { return p_; }

 private:
  SamplingParams p_;
  std::mt19937_64 rng_;
};

// The n most likely tokens with log-softmax values (of the raw logits), best first.
std::vector<TokenLogprob> top_logprobs(std::span<const float> logits, int n);

// Index of the largest logit (lowest index on ties).
int32_t argmax(std::span<const float> logits);

}  // namespace arc
