// Tensor-parallel shard plan: which part of every tensor a rank holds, derived from the family
// tables' Split column (arc/model_arch.h), and the rank's local config (heads and intermediate
// sizes divided), under which the ordinary forward runs on the shard.
//
//   Q heads            split evenly (n_head % N == 0)
//   K/V heads          split evenly, or replicated in groups when n_kv_head < N (N % n_kv_head)
//   attn_output        columns by heads (q_dim / N on quantization-block boundaries)
//   dense / shared FFN gate/up rows, down columns (n_ff / N on block boundaries)
//   experts            every expert's gate/up rows and down columns (n_ff_exp / N, blocks; when
//                      n_ff_exp / N is not whole blocks, uneven ranges of whole blocks)
//   output head        rows by vocabulary (uneven allowed), logits all-gathered
//   the rest           replicated (embeddings, norms, router, rope factors)
//
// Row splits are byte ranges of the mapped file; column splits are repacked per-rank copies.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "arc/backend.h"
#include "arc/model_arch.h"
#include "arc/model_config.h"
#include "arc/status.h"

namespace arc {

class Model;

struct ShardPlan {
  int n_ranks = 1;
  int rank = 0;
  ModelConfig full;
  ModelConfig local;                 // n_head, n_kv_head, n_ff, n_ff_exp, n_ff_shexp for this rank
  int64_t kv_head_begin = 0;         // first KV head this rank holds
  int64_t ff_exp_begin = 0;          // first intermediate column of every expert this rank holds
  std::vector<int64_t> vocab_begin;  // [n_ranks + 1] output-head row ranges
  int64_t vocab_count() const { return vocab_begin[rank + 1] - vocab_begin[rank]; }
};

// The tensor type (for block-boundary checks).
using TensorTypeFn = std::function<DType(const TensorRef&)>;

// Plans rank `rank` of `n_ranks`. A model that cannot split evenly is refused with the reason
// and the rank counts that would work.
Result<ShardPlan> make_shard_plan(const ModelConfig& cfg, const TensorTypeFn& type_of, int n_ranks,
                                  int rank);

// The plan for a loaded (whole) model, types read from its file.
Result<ShardPlan> make_shard_plan(const Model& model, int n_ranks, int rank);

// The part of one tensor a rank takes: rows [begin, begin + count) of every expert slice, or
// columns [begin, begin + count) of every row; whole when split == kReplicated.
struct TensorShard {
  bool columns = false;
  bool whole = true;
  int64_t begin = 0;
  int64_t count = 0;
};
TensorShard tensor_shard(const ShardPlan& plan, const TensorRef& ref);

// Rewrites a loaded model (whole weights mapped) into this rank's shard: config and every
// weight. Returns this rank's weight bytes.
Result<uint64_t> shard_model(Model& model, Backend& backend, const ShardPlan& plan);

// The last step of sharding, once every tensor is this rank's part (`bytes` of them): the output
// head of tied embeddings becomes this rank's vocabulary rows of token_embd, the config becomes
// plan.local. Returns the rank's weight bytes.
uint64_t finish_shard(Model& model, const ShardPlan& plan, uint64_t bytes);

}  // namespace arc
