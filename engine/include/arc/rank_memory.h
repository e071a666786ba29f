// The memory guard of each tensor-parallel rank: before a model is loaded every rank checks that
// its shard, its KV pool, the step workspace and the reserve fit what is free on its own box,
// and rank 0 refuses the load naming the rank and host that lacks memory (tp_serve.h gathers
// the answers).
#pragma once

#include <cstdint>
#include <string>

#include "arc/backend.h"
#include "arc/status.h"

namespace arc {

struct RankMemoryNeed {
  uint64_t weights = 0;    // this rank's shard
  uint64_t kv = 0;         // its KV pool
  uint64_t workspace = 0;  // activations and logits of the largest step
  uint64_t reserve = 0;    // left for the OS and other programs
  uint64_t total() const { return weights + kv + workspace + reserve; }
};

struct RankMemory {
  uint64_t available = 0;  // 0: unknown (not checked)
  std::string where;       // "free on NVIDIA GB10 (...)" or "MemAvailable"
};

// What is free for a model on this rank: the device's free memory on a backend that reports it
// (CUDA; on GB10 the same DRAM as the host), else the host's MemAvailable.
Result<RankMemory> rank_free_memory(Backend& backend);

// OK when `need` fits; else kResourceExhausted naming this host and the numbers (the exchange
// of every rank's outcome adds the rank).
Status check_rank_memory(const RankMemoryNeed& need, const RankMemory& free);

}  // namespace arc
