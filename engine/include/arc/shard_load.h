// Loading one tensor-parallel rank's shard straight from the model file. On a backend that
// streams weights into its own memory (CUDA: arc/backend_caps.h WeightStreamer) only this rank's
// bytes are read, tensor by tensor, into device buffers, so neither the whole model nor a host
// copy of the shard is ever held (unified-memory boxes freeze on doubled peaks). On the CPU the
// file is mapped and the shard taken in place (shard_model).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "arc/backend.h"
#include "arc/gguf.h"
#include "arc/model.h"
#include "arc/shard_plan.h"

namespace arc {

// Rank `rank` of `n_ranks`'s plan for the model in `file` (config read from it); refused with the
// reason when the model does not split over n_ranks.
// `moe`: how routed experts split (arc/moe_split.h).
Result<ShardPlan> plan_for_file(const gguf::File& file, int n_ranks, int rank,
                                MoeSplitMode moe = MoeSplitMode::kAuto);

// How the model in `file` splits over `n_ranks`, one line per cut (ShardPlan::describe) with the
// weight bytes of the largest rank; or the refusal, naming the rank counts that split. For
// `inspect` and `fit`.
std::vector<std::string> describe_split(const gguf::File& file, int n_ranks,
                                        MoeSplitMode moe = MoeSplitMode::kAuto);

// Weight bytes rank plan.rank will hold, computed from the file without loading anything.
uint64_t shard_weight_bytes(const gguf::File& file, const ShardPlan& plan);

// Loads rank plan.rank's shard of `file` on `backend` (plan.n_ranks == 1: the whole model).
// `opt.progress` gets this rank's bytes. The model's config is plan.local afterwards and its
// weight_bytes() what this rank holds.
Result<std::unique_ptr<Model>> load_model_shard(gguf::File file, Backend& backend,
                                                const ShardPlan& plan,
                                                const ModelLoadOptions& opt = {});

}  // namespace arc
