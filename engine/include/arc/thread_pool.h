// A fixed-size pool of worker threads for data-parallel loops. The calling thread works too, so
// ThreadPool(1) runs everything inline. Ranges are claimed dynamically, but each range's result
// must not depend on which thread ran it (kernels partition rows, never reductions). for_range's
// ranges are guided: each claim takes a share of the indices left, so they shrink towards a
// loop's end. for_shares gives each thread one contiguous share and lets idle threads steal.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "arc/kernels/parallel.h"

namespace arc {

class ThreadPool final : public kernels::Parallel {
 public:
  // n_threads <= 0 picks the number of online CPUs.
  explicit ThreadPool(int n_threads = 0);
  ~ThreadPool() override;
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const override { return n_threads_; }
  void for_range(int64_t n, int64_t min_chunk,
                 const std::function<void(int64_t, int64_t)>& fn) override;
  void for_shares(int64_t n, int64_t step,
                  const std::function<void(int64_t, int64_t)>& fn) override;

  static int hardware_threads();

 private:
  void worker_loop(int self);
  // Runs a loop of either kind: inline when one range covers it, else publishes the job fields,
  // runs the caller's part (`self` 0) and waits for every index.
  void run_job(int64_t n, int64_t min_chunk, bool shares,
               const std::function<void(int64_t, int64_t)>& fn);
  // Runs chunks of job `job` until none is left or another job has started.
  void run_chunks(uint64_t job);
  // for_shares: walks share `self`, then steals, until no share of job `job` has indices left.
  void run_shares(uint64_t job, int self);

  int n_threads_ = 1;
  int64_t share_ = 2;  // a claim takes 1 / share_ of the indices left (at least min_chunk)
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::mutex call_mu_;  // one for_range at a time
  std::condition_variable wake_;
  std::atomic<uint64_t> generation_{0};  // bumped once per for_range
  std::atomic<bool> stop_{false};
  std::atomic<int> sleepers_{0};  // workers blocked, or about to block, on wake_

  // The job in flight. The caller waits for its chunks to be done, not for every worker to have
  // checked in: a worker the OS has not scheduled yet would otherwise stall each loop for a time
  // slice. A worker that wakes late may still see the next job's fields, so a chunk is claimed
  // with a compare-and-swap on `claim_`, which holds the job's id next to the next index: a
  // claim only succeeds while that job is current and has chunks left, and then the fields the
  // worker read belong to it.
  static constexpr int kIndexBits = 40;
  std::atomic<const std::function<void(int64_t, int64_t)>*> fn_{nullptr};
  std::atomic<int64_t> n_{0};
  std::atomic<int64_t> chunk_{1};        // min_chunk of the current job
  std::atomic<uint64_t> claim_{0};       // job id << kIndexBits | next index
  std::atomic<int64_t> done_{0};         // indices of the current job finished
  std::atomic<bool> shares_job_{false};  // the current job runs as per-thread shares

  // for_shares: one word per thread, job id << 40 | front << 20 | back. Claims from the front
  // (the owner) and steals from the back (others) are compare-and-swaps on that word, which
  // also prove the job is still current, as claim_ does.
  struct alignas(64) Share {
    std::atomic<uint64_t> word{0};
  };
  std::vector<Share> shares_;
};

}  // namespace arc
