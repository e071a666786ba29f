// Collectives between tensor-parallel ranks. One interface, three implementations: local (one
// rank, no-ops), MPI (CPU tensors through MPI_Allreduce, control through MPI_Bcast) and NCCL
// (GPU tensors, arc/nccl_communicator.h: the same calls on device pointers, the ncclUniqueId
// broadcast through the MPI communicator).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "arc/status.h"

namespace arc {

// All-reduce traffic, for `bench` (bytes this rank contributed, wall time inside collectives).
struct CommStats {
  uint64_t all_reduce_calls = 0;
  uint64_t all_reduce_bytes = 0;
  double all_reduce_seconds = 0;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Sums `data` ([n] floats, host memory for MPI, device memory for NCCL) over every rank;
  // every rank ends with the sum.
  virtual Status all_reduce_sum(float* data, int64_t n) = 0;
  // Every rank contributes counts[rank] floats; recv ([sum counts]) gets them in rank order.
  virtual Status all_gather(const float* send, std::span<const int64_t> counts, float* recv) = 0;
  // Copies `bytes` of `data` from `root` to every rank (control messages: batch descriptions).
  virtual Status broadcast(void* data, int64_t bytes, int root) = 0;
  // The same without a deadline: an idle worker waiting for rank 0's next message (a server
  // may stay idle for hours).
  virtual Status broadcast_no_deadline(void* data, int64_t bytes, int root) {
    return broadcast(data, bytes, root);
  }
  // A broadcast that may wait up to `timeout`, longer than the collective deadline (ranks
  // loading their shards of a large model); past it the communicator is faulty, as after a
  // missed deadline.
  virtual Status broadcast_within(void* data, int64_t bytes, int root,
                                  std::chrono::milliseconds timeout) {
    return broadcast_no_deadline(data, bytes, root);
  }
  virtual Status barrier() = 0;

  // True when all_reduce_sum / all_gather take backend (device) memory and are enqueued on the
  // backend's stream, ordered with its ops (NCCL on the CUDA backend's stream): the caller then
  // needs no host sync before a collective, and must call settle() before reading results.
  // False: host-visible memory, the collective has completed when the call returns (MPI, local).
  virtual bool on_stream() const { return false; }
  // Waits, under the collective deadline, for the collectives enqueued since the last settle()
  // (and whatever the stream ran before them); a dead or hung peer is a fault, as for any
  // collective. Stats of enqueued collectives are complete after it. No-op off the stream.
  virtual Status settle() { return ok_status(); }

  // Faults: called once, from a watchdog thread, when a collective outlived its deadline (a
  // peer rank died or hangs), with a message for the user. After a fault every collective fails
  // at once with that message. Without a handler the job is aborted at once; with one the
  // handler runs first and the job is aborted `grace` later (a server answers 503 with the
  // reason meanwhile), so no process stays blocked forever. One rank: never called.
  using FaultHandler = std::function<void(const std::string& reason)>;
  virtual void set_fault_handler(FaultHandler handler, std::chrono::milliseconds grace) {}

  const CommStats& stats() const { return stats_; }
  void reset_stats() { stats_ = {}; }

 protected:
  CommStats stats_;
};

// One rank: every collective is the identity.
class LocalCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  Status all_reduce_sum(float*, int64_t) override { return ok_status(); }
  Status all_gather(const float* send, std::span<const int64_t> counts, float* recv) override;
  Status broadcast(void*, int64_t, int) override { return ok_status(); }
  Status barrier() override { return ok_status(); }
};

#ifdef ARC_WITH_MPI
// Owns MPI_Init_thread / MPI_Finalize for the process; create one in main before any
// MpiCommunicator, keep it alive until they are gone.
class MpiSession {
 public:
  static Result<std::unique_ptr<MpiSession>> init(int* argc, char*** argv);
  ~MpiSession();
  int world_rank() const { return rank_; }
  int world_size() const { return size_; }

 private:
  MpiSession() = default;
  int rank_ = 0;
  int size_ = 1;
};

// MPI_COMM_WORLD (duplicated, errors returned instead of fatal). Deadline: a watchdog thread
// reports a fault (set_fault_handler) and aborts the whole job (MPI_Abort, with a message naming
// the collective) when one collective has not completed after `deadline`: a dead or hung peer
// then ends every process instead of leaving them blocked forever. MPI gives no way to cancel a
// blocking collective, so aborting is the bounded outcome that exists. broadcast_no_deadline
// polls a non-blocking broadcast with growing sleeps, so an idle worker does not spin a core.
class MpiCommunicator final : public Communicator {
 public:
  static Result<std::unique_ptr<MpiCommunicator>> create(
      const MpiSession& session, std::chrono::milliseconds deadline = std::chrono::seconds(60));
  ~MpiCommunicator() override;
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  Status all_reduce_sum(float* data, int64_t n) override;
  Status all_gather(const float* send, std::span<const int64_t> counts, float* recv) override;
  Status broadcast(void* data, int64_t bytes, int root) override;
  Status broadcast_no_deadline(void* data, int64_t bytes, int root) override;
  Status broadcast_within(void* data, int64_t bytes, int root,
                          std::chrono::milliseconds timeout) override;
  Status barrier() override;
  void set_fault_handler(FaultHandler handler, std::chrono::milliseconds grace) override;

  struct Impl;

 private:
  explicit MpiCommunicator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  int rank_ = 0;
  int size_ = 1;
};
#endif

}  // namespace arc
