// How a tensor-parallel run divides a MoE model's routed experts over N ranks: the expert width
// cut into whole quantization blocks per rank (the TP block split, arc/tp_split.h), or whole
// experts per rank (expert parallelism, EP). Free of tensors: the shard plan
// (arc/shard_plan.h) and the fit calculator share it.
//
// What crosses the link is the same either way: every rank computes a partial [n_tokens, n_embd]
// sum of the routed experts (its columns of every selected expert, or its own selected experts
// whole) and the all-reduce after the MoE block adds them. So the choice is by how evenly the
// ranks are loaded, measured as the busiest rank's expert weights read per token:
//   TP  decode and prefill: k experts x the largest rank's share of the expert width
//       (768 = 3 Q4_K blocks over 2 ranks: 512 + 256, the busiest rank reads 2/3 of k experts)
//   EP  decode: the expected most of a token's k routed experts that one rank holds, the k drawn
//       as k distinct experts uniformly (the router's balance loss aims at uniform use);
//       prefill: tokens spread evenly over the experts, the busiest rank's share of the experts
// EP is chosen when it is better on decode and no worse on prefill; when they are equal (an even
// block split always is at least as good) the block split stays. The router, the shared expert
// and dense FFN layers keep their TP split either way.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "arc/status.h"
#include "arc/tp_split.h"

namespace arc {

// --moe-split: tp, ep or auto (the rule above).
enum class MoeSplitMode : uint8_t { kAuto = 0, kTp = 1, kEp = 2 };
Result<MoeSplitMode> parse_moe_split(std::string_view s);
std::string_view moe_split_name(MoeSplitMode m);

// Whole experts per rank: rank r holds experts [begin[r], begin[r + 1]); the counts differ by at
// most one, the larger shares on the first ranks.
struct ExpertSplit {
  int64_t n_expert = 0;
  std::vector<int64_t> begin;  // [ranks + 1]
  int ranks() const { return static_cast<int>(begin.size()) - 1; }
  int64_t count(int r) const { return begin[r + 1] - begin[r]; }
};
ExpertSplit split_experts(int64_t n_expert, int ranks);

// The expected largest number of a token's k routed experts (k distinct, uniformly drawn) that
// one rank of `s` holds: exact, from the multivariate hypergeometric distribution.
double expected_busiest_experts(const ExpertSplit& s, int64_t k);

struct MoeSplitChoice {
  bool ep = false;
  MoeSplitMode requested = MoeSplitMode::kAuto;
  WidthSplit tp;        // the block split of the expert width (empty when it cannot split)
  ExpertSplit experts;  // whole experts per rank
  int64_t k = 0;        // experts routed per token
  // The busiest rank's expert weights read per token, in whole experts (ideal: k / ranks).
  double tp_decode = 0, ep_decode = 0;
  // The busiest rank's share of the expert work over a long prefill (ideal: 1 / ranks).
  double tp_prefill = 0, ep_prefill = 0;
};

// `tp`: the expert width's block split, or why it cannot split. Refused when the requested split
// cannot be made (EP with fewer experts than ranks, TP on a width that is not whole blocks).
Result<MoeSplitChoice> choose_moe_split(int64_t n_expert, int64_t k, const Result<WidthSplit>& tp,
                                        int ranks, MoeSplitMode mode);

// One line for logs, `bench --tp`, the fit report and /engine/status:
//   "routed experts: expert parallelism, 64 per rank of 128 whole experts (auto: busiest rank
//    reads 5.06 of 8 routed experts per token with whole experts vs 5.33 with the expert width
//    768 in 256-value blocks: 512 + 256 (...); prefill 50% vs 67%; the link carries the same
//    all-reduce)"
//   "routed experts: block split, a share of every expert per rank (--moe-split tp; ...)"
std::string describe(const MoeSplitChoice& c);

}  // namespace arc
