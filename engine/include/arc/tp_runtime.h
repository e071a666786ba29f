// Tensor parallelism for a command (run, bench, serve): joins the MPI job, checks that --tp
// matches the world size, and rewrites the loaded model into this rank's shard.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "arc/backend.h"
#include "arc/communicator.h"
#include "arc/model.h"
#include "arc/shard_plan.h"

namespace arc {

class TpRuntime {
 public:
  // n_ranks == 1: a LocalCommunicator, the model untouched. Otherwise the process must run
  // under mpirun -np n_ranks (a build without MPI refuses).
  // `deadline`: the longest one collective may take before the job is declared faulty.
  // `moe`: how routed experts split (--moe-split, arc/moe_split.h).
  static Result<std::unique_ptr<TpRuntime>> start(
      int n_ranks, Model& model, Backend& backend,
      std::chrono::milliseconds deadline = std::chrono::seconds(60),
      MoeSplitMode moe = MoeSplitMode::kAuto);
  // The job and its communicator without a model (serve: models come and go); plan() is empty.
  static Result<std::unique_ptr<TpRuntime>> join(
      int n_ranks, std::chrono::milliseconds deadline = std::chrono::seconds(60));
  // Joins the job (as join()), then loads only this rank's shard of the model at `path` into
  // `model` (arc/shard_load.h: on a GPU only this rank's bytes reach the device, never the whole
  // model), and on a GPU backend makes the NCCL communicator on the backend's stream that
  // tp_comm() returns (`backend` must outlive the runtime). n_ranks == 1: the whole model.
  static Result<std::unique_ptr<TpRuntime>> load(
      int n_ranks, const std::string& path, Backend& backend, std::unique_ptr<Model>& model,
      std::chrono::milliseconds deadline = std::chrono::seconds(60),
      MoeSplitMode moe = MoeSplitMode::kAuto);
  ~TpRuntime();

  // Control messages (step batches), MPI.
  Communicator& comm() { return *comm_; }
  // What the forward all-reduces through: NCCL on a GPU, the control communicator on the CPU,
  // null on one rank.
  Communicator* tp_comm() {
    if (tensor_) return tensor_.get();
    return comm_->size() > 1 ? comm_.get() : nullptr;
  }
  int rank() const { return comm_->rank(); }
  const ShardPlan& plan() const { return plan_; }
  uint64_t rank_weight_bytes() const { return rank_bytes_; }

  struct Session;

 private:
  TpRuntime() = default;
  std::unique_ptr<Session> session_;  // MPI_Init .. MPI_Finalize, outlives comm_
  std::unique_ptr<Communicator> comm_;
  std::unique_ptr<Communicator> tensor_;  // NCCL (references comm_), or null
  ShardPlan plan_;
  uint64_t rank_bytes_ = 0;
};

}  // namespace arc
