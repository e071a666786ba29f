// Tensor parallelism for a command (run, bench, serve): joins the MPI job, checks that --tp
// matches the world size, and rewrites the loaded model into this rank's shard.
#pragma once

#include <chrono>
#include <memory>

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
  static Result<std::unique_ptr<TpRuntime>> start(
      int n_ranks, Model& model, Backend& backend,
      std::chrono::milliseconds deadline = std::chrono::seconds(60));
  // The job and its communicator without a model (serve: models come and go); plan() is empty.
  static Result<std::unique_ptr<TpRuntime>> join(
      int n_ranks, std::chrono::milliseconds deadline = std::chrono::seconds(60));
  ~TpRuntime();

  Communicator& comm() { return *comm_; }
  Communicator* tp_comm() { return comm_->size() > 1 ? comm_.get() : nullptr; }
  int rank() const { return comm_->rank(); }
  const ShardPlan& plan() const { return plan_; }
  uint64_t rank_weight_bytes() const { return rank_bytes_; }

  struct Session;

 private:
  TpRuntime() = default;
  std::unique_ptr<Session> session_;  // MPI_Init .. MPI_Finalize, outlives comm_
  std::unique_ptr<Communicator> comm_;
  ShardPlan plan_;
  uint64_t rank_bytes_ = 0;
};

}  // namespace arc
