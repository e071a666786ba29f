// Device-side sampling for the forward executor: what one step must prepare per logit row
// (arc/kernels/candidates.h), what comes back, and the optional backend capability that computes
// the candidates where the logits live. A backend without it (the CPU) has its rows downloaded and
// the same candidates computed on the host (kernels::top_candidates_ref), so every backend feeds
// the sampler the same thing.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "arc/kernels/candidates.h"

namespace arc {

// Queried with dynamic_cast, as the capabilities of arc/backend_caps.h.
class CandidateSelector {
 public:
  virtual ~CandidateSelector() = default;
  // Enqueues kernels::TopCandidatesArgs on the backend's stream; every pointer is backend memory.
  // Never recorded in a step graph (the row requests change every step).
  virtual void top_candidates(const kernels::TopCandidatesArgs& a) = 0;
};

// The sampling side of one step, one entry per logit row (ForwardBatch::logit_rows order); no
// entries at all: the step returns nothing.
struct StepSampling {
  // k == 0: this row comes down whole (prompt scores, or what candidates cannot serve).
  std::vector<kernels::CandidateRow> rows;
  std::vector<int32_t> pen_tokens;  // the rows' pen_begin / pen_end index these
  std::vector<int32_t> pen_counts;
};

// What a step returns with StepSampling.
struct StepCandidates {
  int64_t n_rows = 0;
  int64_t n_vocab = 0;
  int32_t k_stride = 0;
  std::vector<int32_t> ids;      // [n_rows, k_stride]; row r's first rows[r].k are valid
  std::vector<float> values;     // [n_rows, k_stride]
  std::vector<double> stats;     // [n_rows, 3] (kernels::TopCandidatesArgs::stats)
  std::vector<int32_t> k;        // [n_rows] valid candidates per row (0: see full)
  std::vector<int64_t> full_at;  // [n_rows] row index into `full`, or -1
  std::vector<float> full;       // [n, n_vocab] whole raw rows

  std::span<const float> full_row(int64_t r) const {
    if (full_at[r] < 0) return {};
    return {full.data() + full_at[r] * n_vocab, static_cast<size_t>(n_vocab)};
  }
};

}  // namespace arc
