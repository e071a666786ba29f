// The step protocol of a tensor-parallel engine: rank 0 owns scheduling, tokenization and
// sampling; it mirrors every KV-cache change and every forward step to the other ranks, which
// run worker_loop() until rank 0 stops them. Each rank holds its own shard (arc/shard_plan.h),
// its own KvCache (sized for its local KV heads) and its own ForwardExecutor.
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

  // Rank 0 only. Each is broadcast, then done locally; workers do the same.
  Result<int32_t> add_sequence();
  Status reserve(int32_t seq, int64_t n_tokens);
  Status free_sequence(int32_t seq);
  // One forward step; every rank gets the whole logits, rank 0 returns them [n_rows, n_vocab].
  Result<std::vector<float>> step(const ForwardBatch& batch);
  // Ends the workers' loops (also called by the destructor of a driver that was not stopped).
  Status stop();

  // Ranks > 0: serve rank 0's messages until stop(); an error (a broken collective, a message
  // the worker cannot apply) is returned after logging it.
  Status worker_loop();

 private:
  Status send(int32_t kind, int32_t seq, int64_t value, std::vector<int32_t>* payload);
  Communicator& comm_;
  ForwardExecutor& fwd_;
  KvCache& kv_;
  bool stopped_ = false;
};

}  // namespace arc
