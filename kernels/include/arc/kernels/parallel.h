// The kernels' view of a thread pool. Kernels split their work into index ranges and hand them
// to a Parallel; the engine's ThreadPool implements it (kernels never include engine headers).
#pragma once

#include <cstdint>
#include <functional>

namespace arc::kernels {

class Parallel {
 public:
  virtual ~Parallel() = default;
  virtual int num_threads() const = 0;
  // Runs fn(begin, end) over disjoint ranges covering [0, n), each at least min_chunk long
  // (except the last), and returns when all ranges are done. fn must not throw.
  virtual void for_range(int64_t n, int64_t min_chunk,
                         const std::function<void(int64_t, int64_t)>& fn) = 0;
  // The same contract with contiguous per-thread shares: thread i starts on the i-th of
  // num_threads() equal parts of [0, n) and walks it front to back, `step` indices per fn call
  // (fewer near the end of a part, so no thread is left waiting on another's last long range);
  // a thread whose share is done takes the back half of the largest share left. Each thread
  // thus streams one stretch of memory in order (the prefetchers follow it), and a thread that
  // runs slower (a busy sibling hyperthread, a smaller core) is relieved at the end instead of
  // holding the loop up. With more than one thread, ranges are at most `step` long (one thread
  // may run the loop as one call). Each fn call returns before its thread claims more, and a
  // share is claimed front to back, so a loop whose items wait only for lower-numbered items
  // always ends: the lowest unfinished item is running, or is the front of a share whose owner
  // is not waiting (moe_ffn's decode loop relies on this). This default runs for_range's ranges
  // in pieces of `step`, for pools without shares.
  virtual void for_shares(int64_t n, int64_t step,
                          const std::function<void(int64_t, int64_t)>& fn) {
    step = step < 1 ? 1 : step;
    for_range(n, step, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; b += step) fn(b, end - b < step ? end : b + step);
    });
  }
};

// Runs on `pool` when given, else serially on the calling thread.
inline void parallel_for(Parallel* pool, int64_t n, int64_t min_chunk,
                         const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  if (pool == nullptr || pool->num_threads() <= 1 || n <= min_chunk) {
    fn(0, n);
    return;
  }
  pool->for_range(n, min_chunk, fn);
}

// for_shares on `pool` when given, else serially on the calling thread (one call).
inline void parallel_shares(Parallel* pool, int64_t n, int64_t step,
                            const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  if (pool == nullptr || pool->num_threads() <= 1 || n <= step) {
    fn(0, n);
    return;
  }
  pool->for_shares(n, step, fn);
}

}  // namespace arc::kernels
