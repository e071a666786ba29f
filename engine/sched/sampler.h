// Token sampling from logits. Order of processing, as common servers do it: repetition penalty
// (over prompt and output), presence/frequency penalties (over the output), then greedy or
// temperature -> top-k -> top-p -> min-p -> a draw from a per-request seeded generator.
//
// The definition (sample_sorted in sampler.cpp, and the reference of the tests): sort the top-k
// tokens by logit (lower id on ties), p_i = exp((x_i - max) / T), keep the shortest prefix whose
// mass reaches top_p of the top-k mass, then the prefix with p_i >= min_p * p_0, and walk the
// kept prefix until the running mass reaches a uniform draw in [0, kept mass). Without a top-k
// below the vocabulary no row is sorted: the nucleus and the draw are walks over bands of values
// (sched/row_walk.h), the same decisions up to the rounding of the sums (a sum's order).
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <vector>

#include "arc/kernels/candidates.h"
#include "arc/service.h"
#include "sched/row_walk.h"

namespace arc {

struct TokenScore {
  int32_t token = 0;
  float logprob = 0.0f;
};

// One logit row's sampling candidates (arc/kernels/candidates.h), prepared on the device.
struct Candidates {
  std::span<const int32_t> ids;   // best first
  std::span<const float> values;  // penalised logits of ids
  double lse = 0.0;               // log-sum-exp of the raw row (with kCandidateLse)
  double mass = 0.0;  // sum of exp((x' - max') / temperature) over the row (kCandidateMass)
  int64_t n_vocab = 0;
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

  // Device-side sampling. What the step must prepare so that sample_candidates() can pick this
  // sequence's next token: fills `row` and appends the penalised history tokens to pen_tokens /
  // pen_counts. False when the whole row must be downloaded instead (logprobs with penalties:
  // logprobs are of the raw row; a top_k above kernels::kMaxCandidates).
  bool candidate_row(std::span<const int32_t> history, int64_t n_prompt, int64_t n_vocab,
                     int top_logprobs, kernels::CandidateRow& row, std::vector<int32_t>& pen_tokens,
                     std::vector<int32_t>& pen_counts) const;
  // The token sample() returns for the full row, from the candidates alone (same generator
  // draws, same arithmetic); nullopt when the candidates do not decide it (the nucleus or the
  // draw reaches past them, or lies within rounding of their edge). Then the generator is left
  // as it was, and sample() on the full row gives exactly the token of today.
  std::optional<int32_t> sample_candidates(const Candidates& c);

 private:
  // Top-k below the vocabulary: the k best sorted, then the definition's arithmetic.
  int32_t sample_top_k(std::span<const float> l, size_t k);
  // The kept prefix from sorted ids idx_ ([k]) and the draw, step by step as the definition.
  int32_t draw_sorted(std::span<const float> l, size_t k);
  // Whole vocabulary: walks instead of a sort.
  int32_t sample_row(std::span<const float> l);
  // The last token min-p keeps and the mass through it. l: [n_vocab]
  void min_p_cut(std::span<const float> l, float mx, double inv_t, int32_t& last, double& mass);

  SamplingParams p_;
  std::mt19937_64 rng_;
  std::vector<float> work_;  // [n_vocab] penalised logits
  std::vector<int32_t> idx_;
  std::vector<float> vals_;
  std::vector<double> prob_;  // sample_candidates, draw_sorted
  RowWalk walk_;
};

// Logprobs from candidates of a row without penalties (values == raw logits): as token_logprob /
// top_logprobs of the full row. nullopt when `token` is not a candidate.
std::optional<float> candidate_logprob(const Candidates& c, int32_t token);
std::vector<TokenScore> candidate_top_logprobs(const Candidates& c, int n);

// The n most likely tokens with log-softmax values (of the raw logits), best first.
std::vector<TokenScore> top_logprobs(std::span<const float> logits, int n);
// log-softmax of one token.
float token_logprob(std::span<const float> logits, int32_t token);

// Index of the largest logit (lowest index on ties).
int32_t argmax(std::span<const float> logits);

}  // namespace arc
