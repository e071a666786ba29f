#include "arc/thread_pool.h"

#include <algorithm>
#include <chrono>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define ARC_CPU_RELAX() _mm_pause()
#elif defined(__aarch64__)
#define ARC_CPU_RELAX() asm volatile("yield")
#else
#define ARC_CPU_RELAX() ((void)0)
#endif

namespace arc {
namespace {
// How long an idle worker spins before sleeping. A decode step dispatches hundreds of small
// parallel loops (every expert's matrices, every layer); waking sleeping threads through a
// condition variable for each costs tens of microseconds, which dominated decode time. Spinning
// this long between loops keeps workers hot without burning a core when the engine is idle.
constexpr auto kSpin = std::chrono::microseconds(200);
}  // namespace

int ThreadPool::hardware_threads() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

ThreadPool::ThreadPool(int n_threads) {
  n_threads_ = n_threads > 0 ? n_threads : hardware_threads();
  share_ = 2 * n_threads_;
  workers_.reserve(static_cast<size_t>(n_threads_ - 1));
  for (int i = 1; i < n_threads_; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_.store(true, std::memory_order_release);
    generation_.fetch_add(1, std::memory_order_release);  // ends spinning workers too
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::run_chunks(uint64_t job) {
  constexpr uint64_t kMask = (uint64_t{1} << kIndexBits) - 1;
  for (;;) {
    uint64_t c = claim_.load(std::memory_order_acquire);
    // Read the job's fields first; the successful claim below proves they were this job's.
    const auto* fn = fn_.load(std::memory_order_acquire);
    const int64_t n = n_.load(std::memory_order_acquire);
    const int64_t min_chunk = chunk_.load(std::memory_order_acquire);
    int64_t begin = 0, end = 0;
    for (;;) {
      if ((c >> kIndexBits) != (job & (~uint64_t{0} >> kIndexBits))) return;  // a later job
      begin = static_cast<int64_t>(c & kMask);
      if (begin >= n) return;
      // Guided: a share of what is left, never under min_chunk. Early ranges are long (little
      // claiming), the last ones short, so threads finish a loop within a short range of each
      // other instead of one waiting for another's last long range.
      const int64_t left = n - begin;
      end = begin + std::min(left, std::max(min_chunk, (left + share_ - 1) / share_));
      if (claim_.compare_exchange_weak(c, c + static_cast<uint64_t>(end - begin),
                                       std::memory_order_acq_rel, std::memory_order_acquire)) {
        break;
      }
    }
    (*fn)(begin, end);
    done_.fetch_add(end - begin, std::memory_order_acq_rel);
  }
}

void ThreadPool::worker_loop() {
  uint64_t seen = 0;
  for (;;) {
    // Spin briefly for the next loop, then sleep.
    auto until = std::chrono::steady_clock::now() + kSpin;
    int spins = 0;
    while (generation_.load(std::memory_order_acquire) == seen) {
      ARC_CPU_RELAX();
      if (++spins % 256 == 0 && std::chrono::steady_clock::now() > until) break;
    }
    if (generation_.load(std::memory_order_acquire) == seen) {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock,
                 [&] { return stop_ || generation_.load(std::memory_order_acquire) != seen; });
      if (stop_) return;
    }
    if (stop_.load(std::memory_order_acquire)) return;
    seen = generation_.load(std::memory_order_acquire);
    run_chunks(seen);
  }
}

void ThreadPool::for_range(int64_t n, int64_t min_chunk,
                           const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  min_chunk = std::max<int64_t>(1, min_chunk);
  if (workers_.empty() || n <= min_chunk) {
    fn(0, n);
    return;
  }
  std::lock_guard<std::mutex> call_lock(call_mu_);
  // The previous job is done (all its ranges ran), so no worker can claim from it any more and
  // its fields may be replaced. The job id is the generation this call publishes.
  const uint64_t job = generation_.load(std::memory_order_relaxed) + 1;
  const uint64_t id = (job & (~uint64_t{0} >> kIndexBits)) << kIndexBits;
  // Closed first: a late worker that sees any of the new fields below also sees this store, so
  // its claim against the old job's word fails instead of running the new job's function.
  claim_.store(id | ((uint64_t{1} << kIndexBits) - 1), std::memory_order_release);
  fn_.store(&fn, std::memory_order_release);
  n_.store(n, std::memory_order_release);
  chunk_.store(min_chunk, std::memory_order_release);
  done_.store(0, std::memory_order_release);
  claim_.store(id, std::memory_order_release);  // open: next index 0
  generation_.store(job, std::memory_order_release);
  {
    // Taking the mutex orders the bump before any sleeper's predicate check: no lost wake-up.
    std::lock_guard<std::mutex> lock(mu_);
  }
  wake_.notify_all();
  run_chunks(job);
  int spins = 0;
  while (done_.load(std::memory_order_acquire) != n) {
    ARC_CPU_RELAX();
    if (++spins > 4096) std::this_thread::yield();
  }
}

}  // namespace arc
