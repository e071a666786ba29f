// bench --spec: decoding with drafts verified in one step, and what a verify step costs.
#pragma once

#include <cstdint>
#include <vector>

#include "arc/tp_session.h"
#include "sched/drafter.h"
#include "sched/sampler.h"

namespace arc::cli {

struct SpecCounters {
  uint64_t drafted = 0;   // tokens proposed and verified
  uint64_t accepted = 0;  // of those, the ones the model produced itself
  uint64_t steps = 0;     // forward steps of the decode
};

// Decodes until `history` holds n_prompt + n_gen tokens. On entry history is the prompt and the
// first generated token (sampled from the prompt's logits; its K/V not yet written). Each step
// runs the last token and up to k drafts (k from `k`), and keeps the drafts the sampler draws
// from the model's own rows (sched/drafter.h). A drafter that reads hidden states (mtp) gets
// those of the confirmed positions from `exec` (one rank).
Status spec_decode(TpDriver& drv, int32_t seq, std::vector<int32_t>& history, int64_t n_prompt,
                   int64_t n_gen, Sampler& sampler, SequenceDrafter& drafter, AdaptiveK& k,
                   SpecCounters& counters, ForwardExecutor* exec = nullptr);

// Seconds of one step of k + 1 tokens (all rows returned) over one of a single token, each at
// positions from `at` on, for k = 1 .. max_k: the median of `repeats` each.
Result<std::vector<double>> verify_costs(TpDriver& drv, int32_t seq, int64_t at, int max_k,
                                         int repeats);

}  // namespace arc::cli
