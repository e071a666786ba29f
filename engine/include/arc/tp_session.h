// The step protocol of a tensor-parallel engine: rank 0 owns scheduling, tokenization and
// sampling; it sends every forward step to the other ranks, which run worker_loop() until rank 0
// stops them. Each rank holds its own shard (arc/shard_plan.h), its own KvCache (sized for its
// local KV heads, the same block count everywhere) and its own ForwardExecutor.
//
// KV blocks: only rank 0 allocates. Each step message carries the block tables of the
// sequences in the batch, and workers store them (KvCache::set_blocks) before running it. The
// alternative, replaying every allocator call (reserve, prefix attach, commit, LRU eviction,
// preemption) on every rank, needs each rank's allocator to stay bit-identical forever and one
// message per call; sending tables costs a few hundred bytes per step and cannot drift: a
// worker's cache is whatever rank 0 says it is at that step. Since every rank runs every step
// with the same slots, a block rank 0 reuses from its prefix cache holds the matching K/V heads
// on every worker too.
//
// Images: a step's image inputs (multi-axis rotary positions, embedding rows) travel in its
// message too; only rank 0 holds the vision encoder, so the encoder's output rows a step uses
// follow its message as a float broadcast (none for text steps). Layout: tp_session.cpp.
//
// Rank 0 calls the TpDriver methods where a single-rank engine would call KvCache / the
// executor directly; with a LocalCommunicator they are plain calls (no messages).
#pragma once

#include <cstdint>
#include <vector>

#include "arc/communicator.h"
#include "arc/forward.h"
#include "arc/kv_cache.h"

namespace arc {

class TpDriver {
 public:
  TpDriver(Communicator& comm, ForwardExecutor& fwd, KvCache& kv)
      : comm_(comm), fwd_(fwd), kv_(kv) {}

  // Rank 0 only. Local KV operations (no message: the tables travel with each step).
  Result<int32_t> add_sequence();
  Status reserve(int32_t seq, int64_t n_tokens);
  Status free_sequence(int32_t seq);
  // One forward step; every rank gets the whole logits, rank 0 returns them [n_rows, n_vocab].
  Result<std::vector<float>> step(const ForwardBatch& batch);
  // Ends the workers' loops (also called by the destructor of a driver that was not stopped).
  Status stop();

  // Ranks > 0: serve rank 0's messages until stop(); an error (a broken collective, a message
  // the worker cannot apply) is returned after logging it. A step whose inputs the forward
  // refuses (INVALID_ARGUMENT, checked before any collective) is refused by rank 0's step() too,
  // and the loop goes on.
  Status worker_loop();

  // Tests of fault handling only: a worker's loop returns kCancelled instead of running its
  // `n`-th step (counted from 1), so the caller can exit or hang like a failed rank.
  void set_fault_before_step(int64_t n) { fault_step_ = n; }

 private:
  Status send(int32_t kind, int32_t seq, int64_t value, std::vector<int32_t>* payload);
  Communicator& comm_;
  ForwardExecutor& fwd_;
  KvCache& kv_;
  bool stopped_ = false;
  int64_t fault_step_ = 0;
};

}  // namespace arc
