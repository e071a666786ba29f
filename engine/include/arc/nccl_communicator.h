// NCCL communicator: the collectives of tensor parallelism on GPU tensors (built only with
// ARC_WITH_NCCL: CUDA and NCCL found). Rank 0 makes the ncclUniqueId and the MPI communicator
// carries it to the others; control messages (broadcast, barrier: host memory) keep going
// through MPI. Between Sparks NCCL runs over RoCE on the QSFP link (NCCL_IB_HCA:
// docs/tensor-parallel.md).
#pragma once

#ifdef ARC_WITH_NCCL

#include <chrono>
#include <memory>

#include "arc/communicator.h"

namespace arc {

class NcclCommunicator final : public Communicator {
 public:
  // Collective: every rank calls it together. `control` (MPI, same ranks) carries the id and
  // every control message; `device`: this rank's CUDA device; `stream`: the cudaStream_t the
  // collectives run on (null: the default stream). A collective (queued on the stream, then
  // waited for) that takes longer than `deadline` aborts the NCCL communicator (ncclCommAbort,
  // which unblocks the stream) and reports a fault: every later call fails at once.
  static Result<std::unique_ptr<NcclCommunicator>> create(
      Communicator& control, int device, void* stream = nullptr,
      std::chrono::milliseconds deadline = std::chrono::seconds(60));
  ~NcclCommunicator() override;

  int rank() const override { return control_.rank(); }
  int size() const override { return control_.size(); }
  // `data`, `send`, `recv`: device memory.
  Status all_reduce_sum(float* data, int64_t n) override;
  Status all_gather(const float* send, std::span<const int64_t> counts, float* recv) override;
  // Host memory, through the control communicator.
  Status broadcast(void* data, int64_t bytes, int root) override;
  Status broadcast_no_deadline(void* data, int64_t bytes, int root) override;
  Status barrier() override;
  void set_fault_handler(FaultHandler handler, std::chrono::milliseconds grace) override;

  // Stream-ordered mode (the forward of a CUDA tensor-parallel rank): all_reduce_sum and
  // all_gather only enqueue on the stream, ordered with the backend's kernels, and settle()
  // waits for them under the deadline. Stats then count the device time between events recorded
  // around each all-reduce (the collective itself, including waiting for the slowest rank),
  // read at settle(). Off (the default): every collective is waited for before it returns and
  // its time is the host wall time of enqueue + wait.
  void set_stream_ordered(bool on);
  bool on_stream() const override;
  Status settle() override;

  struct Impl;

 private:
  NcclCommunicator(Communicator& control, std::unique_ptr<Impl> impl);
  Communicator& control_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace arc

#endif  // ARC_WITH_NCCL
