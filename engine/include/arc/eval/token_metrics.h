// Per-token figures from logit rows, in double precision: the negative log-likelihood of the
// next token, the KL divergence of a model's next-token distribution Q from a reference's R, and
// the same KL from a reference row compressed to its top entries plus the remaining mass (what
// --save-logits keeps), with bounds that always hold.
//
// KL(R||Q) = sum_i p_i (log p_i - log q_i), in nats, p = softmax(reference), q = softmax(model).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace arc::eval {

// log(sum_i exp(x_i)), in double.
double log_sum_exp(std::span<const float> logits);
// The first index holding the largest value (ties: the lowest id, as greedy decoding picks).
int32_t argmax(std::span<const float> logits);
// -log softmax(logits)[target].
double token_nll(std::span<const float> logits, int32_t target);
// KL(R||Q) of two whole rows of the same length.
double kl_divergence(std::span<const float> ref, std::span<const float> model);

// A row's exponentials exp(x_i - max) in double, by the sampler's vectorised kernel
// (kernels::tempered_probs: the difference taken in double, exp within a few ulp of libm's).
// With them a row costs one exp pass for its log-sum-exp, its NLL, a KL and its compression.
struct ExpRow {
  std::vector<double> e;  // [n] exp(x_i - max)
  float max = 0;
  double sum = 0;  // sum of e
  double lse() const;
};
void exp_row(std::span<const float> x, ExpRow& out);
// KL(R||Q) = sum_i p_i (r_i - q_i) - (lse_r - lse_q) from R's exponentials (no exp per entry).
double kl_divergence(std::span<const float> ref, const ExpRow& ref_exp,
                     std::span<const float> model, double lse_model);

// Reference rows kept as their most probable entries plus what the rest adds up to. A row keeps
// entries, most probable first, until the rest holds less than `tail_target` of the mass or `k`
// entries are kept: peaked rows (most of a text) cost a few entries, flat ones up to k. Row r's
// entries are ids/logp[begin[r] .. begin[r + 1]), by log-probability descending (ties: lower id
// first), so ids[begin[r]] is the reference's greedy token.
//
// The rest is also sampled: `samples` ids drawn from the rest in proportion to p (systematic
// sampling along the ids with an offset from the row), each with its log p. They make the KL's
// unknown tail term estimable without bias (see kl_from_compressed).
struct CompressedLogits {
  int32_t k = 0;                         // most entries a row keeps
  int32_t samples = 0;                   // tail samples a row keeps (none when the rest is empty)
  std::vector<int64_t> sample_begin{0};  // [n_rows + 1] offsets into sample_ids / sample_logp
  std::vector<int32_t> sample_ids;
  std::vector<float> sample_logp;
  double tail_target = 0;          // a row stops keeping entries once the rest holds less than this
  std::vector<int64_t> begin{0};   // [n_rows + 1] offsets into ids and logp
  std::vector<int32_t> ids;        // kept ids
  std::vector<float> logp;         // log p_i of the kept entries
  std::vector<double> tail_mass;   // [n_rows] the mass of the entries not kept
  std::vector<double> tail_plogp;  // [n_rows] sum over the entries not kept of p_i log p_i
  std::vector<float> target_logp;  // [n_rows] log p of the token that came next in the text
  int64_t n_rows() const { return static_cast<int64_t>(tail_mass.size()); }
};

// Buffers compress_row reuses between calls (one per thread).
struct CompressScratch {
  std::vector<float> values;
  std::vector<int32_t> ids;
  ExpRow exp;
};
// Appends `ref` (one row of logits) compressed as out.k and out.tail_target say.
void compress_row(std::span<const float> ref, int32_t target, CompressedLogits& out,
                  CompressScratch& scratch);
// Appends src's rows to dst (the same k and tail_target).
void append_rows(CompressedLogits& dst, const CompressedLogits& src);

// What a compressed reference row says about KL(R||Q) for a whole model row `model`.
//
// Write S for the kept ids, T for the rest, r = R(T), p_k = the smallest kept p. Exactly:
//   KL = sum_S p_i (log p_i - log q_i) + sum_T p_i log p_i - sum_T p_i log q_i.
// The first two terms are known (tail_plogp is stored). Of the last only the total mass r is
// known, and every p_i in T is at most p_k. Over all such tails, -sum_T p_i log q_i is largest
// when the mass sits, p_k at a time, on the ids of T with the smallest q, and smallest when it
// sits on those with the largest q (a linear function over a box-constrained simplex takes its
// extremes at such vertices). That gives `hi` and one lower bound; the log-sum inequality gives
// another, r log(r / Q(T)) for the whole tail term (the coarse-grained KL of the top-k entries
// plus one bucket for the rest, the usual compressed-logit estimate); `lo` is the larger. The
// true KL lies in [lo, hi].
//
// `sampled`: the tail term sum_T p_i (log p_i - log q_i) = r E_{i ~ R_T}[log p_i - log q_i]
// estimated from the row's tail samples: unbiased, so means over tokens converge on the full
// KL's, but noisy for one row (the per-token standard error of the mean includes that noise).
// `estimate` is the same clamped into [lo, hi]: never impossible for one token, but clamping
// lifts the noisy low ones, so its mean leans high; eval takes means from `sampled` and
// percentiles from `estimate`. Without samples both are lo.
struct KlBounds {
  double sampled = 0;
  double estimate = 0;
  double lo = 0;
  double hi = 0;
};
// `model_exp`: exp_row(model), which the caller has for the model's NLL anyway.
KlBounds kl_from_compressed(const CompressedLogits& ref, int64_t row, std::span<const float> model,
                            const ExpRow& model_exp, std::vector<double>& scratch);

}  // namespace arc::eval
