// Multi-rank serving: rank 0 (the HTTP server and scheduler) tells the other ranks which model
// to hold. Workers run tp_serve_worker(): idle (polling, not spinning) until rank 0 loads a
// model; then each maps its shard, builds a KV pool with rank 0's block count and replays steps
// (TpDriver::worker_loop) until rank 0 unloads it (TpDriver::stop), then waits again.
//
// Rank 0 loads in two halves so that every rank reads its shard at the same time:
// begin_load() sends the model to the workers, rank 0 loads its own shard, finish_load() then
// exchanges every rank's outcome; when one rank failed, all drop the model and the error names
// each failed rank's reason.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

#include "arc/communicator.h"
#include "arc/kernels/dtype.h"
#include "arc/moe_split.h"
#include "arc/status.h"

namespace arc {

struct TpModelSpec {
  std::string path;  // the same path on every box
  int64_t n_blocks = 0;
  int64_t n_swa_blocks = 0;  // windowed pool of sliding-window layers (kv_window.h), 0: none
  int64_t block_size = 16;
  DType kv_type = DType::F16;
  std::string backend = "cpu";  // every rank runs the same backend kind (each its own device)
  // The memory guard of every rank (arc/rank_memory.h): rank 0's step workspace and reserve.
  uint64_t workspace_bytes = 0;
  uint64_t reserve_bytes = 0;
  MoeSplitMode moe_split = MoeSplitMode::kAuto;  // --moe-split: every rank plans alike
};

// Rank 0's side. Control messages must not interleave with steps: call begin/finish_load only
// while no TpDriver is active (after its stop()).
class TpServeGroup {
 public:
  // `load_timeout`: how long finish_load waits for every rank's outcome (reading a shard of a
  // large model takes minutes); past it the communicator reports a fault.
  explicit TpServeGroup(Communicator& comm,
                        std::chrono::milliseconds load_timeout = std::chrono::minutes(30))
      : comm_(comm), load_timeout_(load_timeout) {}
  Communicator& comm() { return comm_; }
  Status begin_load(const TpModelSpec& spec);
  // `own`: rank 0's outcome. Waits up to the load timeout for every worker's (a rank that dies
  // meanwhile ends the job through mpirun; one that hangs is a fault at the timeout).
  Status finish_load(const Status& own);
  // The same exchange for the other phases of a load (every rank's memory check before reading
  // weights, the tensor communicator after): OK when every rank's `own` is, else the failed
  // ranks' messages (kResourceExhausted when one lacks memory).
  Status gather(const Status& own) { return finish_load(own); }
  // Ends the workers' loops (the engine is shutting down). Idempotent.
  Status shutdown();

 private:
  Communicator& comm_;
  std::chrono::milliseconds load_timeout_;
  bool shut_down_ = false;
};

struct TpWorkerOptions {
  int threads = 0;                // CPU threads of this rank's backend (0: all)
  int64_t fault_before_step = 0;  // tests only: TpDriver::set_fault_before_step
  bool fault_on_load = false;     // tests only: return kCancelled instead of loading
  int device = 0;                 // this rank's CUDA device (with a cuda backend)
  std::chrono::milliseconds collective_deadline{60000};  // of the NCCL communicator
  bool cuda_graphs = true;
  bool mmap_weights = false;       // CPU: weights in place from the file (BackendOptions)
  uint64_t test_memory_limit = 0;  // tests only: pretend this rank has only these bytes free
};

// Ranks > 0 of `serve --tp N`: returns OK when rank 0 shuts the group down; an error when a
// collective fails, or kCancelled for an injected test fault.
Status tp_serve_worker(Communicator& comm, const TpWorkerOptions& options);

}  // namespace arc
