// Tensor-parallel shard plan: which part of every tensor a rank holds, derived from the family
// tables' Split column (arc/model_arch.h), and the rank's local config (heads and intermediate
// sizes divided), under which the ordinary forward runs on the shard.
//
//   Q / K/V heads      by KV-head slots (arc/tp_split.h): evenly where they divide, KV heads
//                      held by several ranks where there are fewer than ranks, and padded with
//                      zero heads where they do not divide (64 heads over 3 ranks)
//   attn_output        columns by the same heads (zero columns for zero heads)
//   MLA (deepseek2)    q_b / attn_q rows, k_b / v_b slices and attn_output columns by head
//                      (arc/tp_split.h split_latent_heads); q_a, kv_a_mqa and their norms
//                      replicated, and the latent cache whole on every rank: every head reads
//                      every latent, so cutting the latent would add a collective per layer for
//                      the scores, while computing it on each rank costs one small projection
//   dense / shared FFN gate/up rows, down columns (whole quantization blocks per rank, uneven
//                      where the blocks do not divide)
//   experts            every expert's gate/up rows and down columns (likewise), or whole
//                      experts per rank (expert parallelism: slices of the expert tensors and
//                      rows of the expert biases), chosen per model and rank count by
//                      arc/moe_split.h or --moe-split
//   output head        rows by vocabulary (uneven allowed), logits all-gathered
//   the rest           replicated (embeddings, norms, router, rope factors)
//
// What a rank takes of each tensor is a TensorShard: ranges of the split dimension and zero fill,
// derived from the dimension the tensor's spec names (Dim::kQ, kKv, kHead, kFf, kFfExp, kFfShexp,
// kVocab), so a family that adds a dimension adds its cut here. Row splits of one range are byte
// ranges of the mapped file; everything else is a repacked per-rank copy.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "arc/backend.h"
#include "arc/model_arch.h"
#include "arc/model_config.h"
#include "arc/moe_split.h"
#include "arc/status.h"
#include "arc/tp_split.h"

namespace arc {

class Model;
struct Weight;

// One piece of a rank's part along the split dimension: `count` values of the whole tensor from
// `begin`, or `count` zeros (padding) when `zero`.
struct ShardPart {
  int64_t begin = 0;
  int64_t count = 0;
  bool zero = false;
};

struct ShardPlan {
  int n_ranks = 1;
  int rank = 0;
  ModelConfig full;
  ModelConfig local;                 // n_head, n_kv_head, n_ff, n_ff_exp, n_ff_shexp for this rank
  int64_t kv_head_begin = 0;         // first KV head this rank holds
  int64_t ff_exp_begin = 0;          // first intermediate column of every expert this rank holds
  std::vector<int64_t> vocab_begin;  // [n_ranks + 1] output-head row ranges
  int64_t vocab_count() const { return vocab_begin[rank + 1] - vocab_begin[rank]; }
  HeadSplit heads;                  // how heads are cut and padded
  WidthSplit ff, ff_exp, ff_shexp;  // dense, expert and shared-expert widths (empty when absent
                                    // and ff_exp empty under expert parallelism)
  // MoE models: block split or whole experts, and why. Under expert parallelism the rank holds
  // experts [expert_begin, expert_begin + n_local_expert) whole (local.ep_*).
  bool has_moe = false;
  MoeSplitChoice moe;
  bool ep() const { return has_moe && moe.ep; }
  int64_t expert_begin = 0, n_local_expert = 0;
  // The rank's Q heads and KV heads in order, in units of heads: ranges of the model's heads and
  // zero heads (TensorShard parts).
  std::vector<ShardPart> q_parts, kv_parts;
  // One line per cut for logs, `bench --tp`, `inspect` (heads, then each width that exists).
  std::vector<std::string> describe() const;
};

// The tensor type (for block-boundary checks).
using TensorTypeFn = std::function<DType(const TensorRef&)>;

// Plans rank `rank` of `n_ranks`. A model that cannot split evenly is refused with the reason
// and the rank counts that would work. `moe`: how routed experts split (arc/moe_split.h).
Result<ShardPlan> make_shard_plan(const ModelConfig& cfg, const TensorTypeFn& type_of, int n_ranks,
                                  int rank, MoeSplitMode moe = MoeSplitMode::kAuto);

// The plan for a loaded (whole) model, types read from its file.
Result<ShardPlan> make_shard_plan(const Model& model, int n_ranks, int rank,
                                  MoeSplitMode moe = MoeSplitMode::kAuto);

// The part of one tensor a rank takes: rows [begin, begin + count) of every expert slice, or
// columns [begin, begin + count) of every row; whole when split == kReplicated. When `parts` is
// not empty the part is gathered from them in order (several ranges, zero fill) and `count` is
// their total; `begin` is then meaningless.
struct TensorShard {
  bool columns = false;
  // Whole slices of a 3-D per-head weight (Split::kHeadSlices): begin, count and parts count
  // slices (heads) instead of rows or columns.
  bool slices = false;
  bool whole = true;
  int64_t begin = 0;
  int64_t count = 0;
  std::vector<ShardPart> parts;
  bool gathered() const { return !parts.empty(); }
};
TensorShard tensor_shard(const ShardPlan& plan, const TensorRef& ref);

// Narrows a whole tensor's Weight (shape, row, slice and total bytes) to the shard `s`.
void narrow_weight(Weight& w, const TensorShard& s);
// Writes the shard `s` (parts: ranges, zero fill) of a tensor whose whole row-major bytes are
// `whole` (`w`: the whole tensor's Weight) to `dst`, narrow_weight(w, s).n_bytes long.
void gather_shard(const uint8_t* whole, const Weight& w, const TensorShard& s, uint8_t* dst);

// Rewrites a loaded model (whole weights mapped) into this rank's shard: config and every
// weight. Returns this rank's weight bytes.
Result<uint64_t> shard_model(Model& model, Backend& backend, const ShardPlan& plan);

// The last step of sharding, once every tensor is this rank's part (`bytes` of them): the output
// head of tied embeddings becomes this rank's vocabulary rows of token_embd, the config becomes
// plan.local. Returns the rank's weight bytes.
uint64_t finish_shard(Model& model, const ShardPlan& plan, uint64_t bytes);

}  // namespace arc
