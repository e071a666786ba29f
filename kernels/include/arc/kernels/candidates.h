// Sampling candidates: per logit row, the sampler's penalties applied, the k best tokens with their
// penalised logits, and the row statistics the sampler needs to finish on those k tokens alone
// (engine/sched/sampler.h). A step then downloads k ids and values per row instead of the whole
// vocabulary row.
//
// The order is the host sampler's: higher penalised logit first, lower token id on ties (+0 and
// -0 are equal; NaN counts as -inf). Penalties are exactly the sampler's arithmetic, in float, with
// no fused multiply-add: x' = x > 0 ? x / rep : x * rep for every distinct history token (when
// rep != 1), then x' -= presence + frequency * count for tokens the output holds (count > 0).
//
// top_candidates_ref is the scalar reference (the oracle of top_candidates, the fast host path of
// the CPU backend, and of the CUDA kernel); cuda::top_candidates (kernels/cuda/candidates.cu)
// computes the same on a stream.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace arc::kernels {

// Largest k a row may ask for.
inline constexpr int32_t kMaxCandidates = 1024;

enum CandidateFlags : uint32_t {
  kCandidateLse = 1u,   // stats[0]: log-sum-exp of the raw row (logprobs)
  kCandidateMass = 2u,  // stats[2]: sum of exp((x' - max') / temperature) over the penalised row
};

// One logit row's request. Plain data: uploaded as is to a device.
struct CandidateRow {
  int32_t k = 1;          // candidates wanted, 1..kMaxCandidates (clamped to n_vocab)
  uint32_t flags = 0;     // CandidateFlags
  int32_t pen_begin = 0;  // this row's range of pen_tokens / pen_counts
  int32_t pen_end = 0;
  float repetition_penalty = 1.0f;  // 1: off
  float presence_penalty = 0.0f;
  float frequency_penalty = 0.0f;
  float temperature = 1.0f;  // with kCandidateMass; > 0
};

struct TopCandidatesArgs {
  const float* logits = nullptr;  // [n_rows, n_vocab] raw logits
  int64_t n_rows = 0;
  int64_t n_vocab = 0;
  const CandidateRow* rows = nullptr;  // [n_rows]
  // Distinct history tokens of each row (prompt and output) and how often each occurs in the
  // output; a row with pen_begin == pen_end has no penalties.
  const int32_t* pen_tokens = nullptr;  // [n_pen]
  const int32_t* pen_counts = nullptr;  // [n_pen]
  // Penalised copies of the rows that have penalties (the raw logits stay intact for a full-row
  // download afterwards); may be null when no row has penalties.
  float* work = nullptr;    // [n_rows, n_vocab]
  int32_t k_stride = 0;     // row stride of ids / values, >= every row's k
  int32_t* ids = nullptr;   // [n_rows, k_stride] best first; entries past a row's k untouched
  float* values = nullptr;  // [n_rows, k_stride] penalised logits of ids
  // [n_rows, 3]: lse of the raw row (kCandidateLse), max penalised logit, tempered mass
  // (kCandidateMass); entries not asked for are 0.
  double* stats = nullptr;
};

// The sampler's penalty of one logit (see the file comment); count: occurrences in the output.
float penalised_logit(float x, int32_t count, float repetition, float presence, float frequency);

// The row top_candidates_ref and top_candidates select from: row r of a.logits itself when it
// has no penalties, else a penalised copy in row r of a.work (in `scratch`, resized to n_vocab,
// when a.work is null). History tokens outside the vocabulary are ignored. [n_vocab]
const float* penalised_row(const TopCandidatesArgs& a, int64_t r, std::vector<float>& scratch);

// Host implementation; every pointer is host memory. Rows with k outside 1..kMaxCandidates are
// skipped.
void top_candidates_ref(const TopCandidatesArgs& a);

// The same on the host in linear time (kernels/cpu/candidates.cpp): ids and values equal
// top_candidates_ref's, the stats differ from its sums by rounding only. The CPU backend's path.
void top_candidates(const TopCandidatesArgs& a);

namespace cpu {
enum class IsaLevel : int;  // arc/kernels/cpu_dispatch.h
// top_candidates with the sums of one instruction-set level (tests); false when the machine
// lacks it.
bool top_candidates_at(IsaLevel level, const TopCandidatesArgs& a);
}  // namespace cpu

}  // namespace arc::kernels
