// Token sampling from logits. Order of processing, as common servers do it: repetition penalty
// (over prompt and output), presence/frequency penalties (over the output), then greedy or
// temperature -> top-k -> top-p -> min-p -> a draw from a per-request seeded generator.
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "arc/service.h"

namespace arc {

struct TokenScore {
  int32_t token = 0;
  float logprob = 0.0f;
};

class Sampler {
 public:
  // Without a seed in `p` the generator is seeded from std::random_device.
  explicit Sampler(const SamplingParams& p);
  // logits: [n_vocab]. history: the sequence so far (prompt then output); the first n_prompt
  // tokens are the prompt.
  int32_t sample(std::span<const float> logits, std::span<const int32_t> history = {},
                 int64_t n_prompt = 0);
  const SamplingParams& params() const { return p_; }

 private:
  SamplingParams p_;
  std::mt19937_64 rng_;
  std::vector<float> work_;  // [n_vocab] penalised logits
  std::vector<int32_t> idx_;
};

// The n most likely tokens with log-softmax values (of the raw logits), best first.
std::vector<TokenScore> top_logprobs(std::span<const float> logits, int n);
// log-softmax of one token.
float token_logprob(std::span<const float> logits, int32_t token);

// Index of the largest logit (lowest index on ties).
int32_t argmax(std::span<const float> logits);

}  // namespace arc
