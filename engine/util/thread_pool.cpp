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

// The indices a thread ran in one job, added to the job's done count once, when the thread
// leaves the job. done_ is written by every thread and read by the caller, so each addition
// moves its cache line between cores (about 0.45 us on the 2-core test machine); one addition
// per claim cost that several times per loop.
struct DoneBatch {
  std::atomic<int64_t>& done;
  int64_t n = 0;
  ~DoneBatch() {
    if (n > 0) done.fetch_add(n, std::memory_order_acq_rel);
  }
};
}  // namespace

int ThreadPool::hardware_threads() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

ThreadPool::ThreadPool(int n_threads) {
  n_threads_ = n_threads > 0 ? n_threads : hardware_threads();
  share_ = 2 * n_threads_;
  shares_ = std::vector<Share>(static_cast<size_t>(n_threads_));
  workers_.reserve(static_cast<size_t>(n_threads_ - 1));
  for (int i = 1; i < n_threads_; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
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
  DoneBatch finished{done_};
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
    finished.n += end - begin;
  }
}

namespace {
constexpr uint64_t kShareMask = (uint64_t{1} << 20) - 1;
constexpr uint64_t kJobMask = (uint64_t{1} << 24) - 1;  // the job id bits a share word holds
inline uint64_t share_word(uint64_t job, int64_t front, int64_t back) {
  return (job & kJobMask) << 40 | static_cast<uint64_t>(front) << 20 | static_cast<uint64_t>(back);
}
inline uint64_t share_job(uint64_t w) {
  return w >> 40;
}
inline int64_t share_front(uint64_t w) {
  return static_cast<int64_t>((w >> 20) & kShareMask);
}
inline int64_t share_back(uint64_t w) {
  return static_cast<int64_t>(w & kShareMask);
}
}  // namespace

void ThreadPool::run_shares(uint64_t job, int self) {
  const uint64_t id = job & kJobMask;
  // Valid for this job once a claim tagged with it succeeds (the fields are published first).
  const auto* fn = fn_.load(std::memory_order_acquire);
  const int64_t step = chunk_.load(std::memory_order_acquire);
  std::atomic<uint64_t>& mine = shares_[static_cast<size_t>(self)].word;
  DoneBatch finished{done_};
  for (;;) {
    // Front to back through the own share.
    uint64_t c = mine.load(std::memory_order_acquire);
    while (share_job(c) == id && share_front(c) < share_back(c)) {
      const int64_t begin = share_front(c), back = share_back(c);
      // Whole steps while more than two are left, then half of what is left: a claimed range
      // cannot be stolen, so a last claim of a whole step left the other thread waiting up to a
      // step's time at the end of every loop (in a Q4_K_M decode, about 5 us per MoE gate/up
      // loop and 4 us per Q/K/V loop).
      const int64_t left = back - begin;
      const int64_t end = begin + (left > 2 * step ? step : std::max<int64_t>(1, (left + 1) / 2));
      if (!mine.compare_exchange_weak(c, share_word(id, end, back), std::memory_order_acq_rel,
                                      std::memory_order_acquire)) {
        continue;  // a thief took the back meanwhile: c holds the new word
      }
      (*fn)(begin, end);
      finished.n += end - begin;
      c = mine.load(std::memory_order_acquire);
    }
    if (share_job(c) != id) return;  // a later job
    // Steal the back half of the largest share left, which becomes this thread's share (its
    // own is empty, so no other thread writes it before this store).
    for (;;) {
      int victim = -1;
      uint64_t vc = 0;
      int64_t most = 0;
      for (int s = 0; s < n_threads_; ++s) {
        if (s == self) continue;
        const uint64_t w = shares_[static_cast<size_t>(s)].word.load(std::memory_order_acquire);
        if (share_job(w) != id) return;  // a later job
        if (share_back(w) - share_front(w) > most) {
          most = share_back(w) - share_front(w);
          victim = s;
          vc = w;
        }
      }
      if (victim < 0) return;  // every index is claimed
      const int64_t back = share_back(vc);
      const int64_t split = back - (most + 1) / 2;
      if (shares_[static_cast<size_t>(victim)].word.compare_exchange_strong(
              vc, share_word(id, share_front(vc), split), std::memory_order_acq_rel,
              std::memory_order_acquire)) {
        mine.store(share_word(id, split, back), std::memory_order_release);
        break;
      }
    }
  }
}

void ThreadPool::worker_loop(int self) {
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
      // Registered before the last look at generation_ (see run_job).
      sleepers_.fetch_add(1, std::memory_order_seq_cst);
      wake_.wait(lock,
                 [&] { return stop_ || generation_.load(std::memory_order_seq_cst) != seen; });
      sleepers_.fetch_sub(1, std::memory_order_relaxed);
      if (stop_) return;
    }
    if (stop_.load(std::memory_order_acquire)) return;
    seen = generation_.load(std::memory_order_acquire);
    // Read after the generation: either this job's kind, or a later job's, whose fields make
    // every claim of job `seen` fail (both claim paths check the job id), so nothing runs.
    if (shares_job_.load(std::memory_order_acquire)) {
      run_shares(seen, self);
    } else {
      run_chunks(seen);
    }
  }
}

void ThreadPool::for_range(int64_t n, int64_t min_chunk,
                           const std::function<void(int64_t, int64_t)>& fn) {
  run_job(n, min_chunk, false, fn);
}

void ThreadPool::for_shares(int64_t n, int64_t step,
                            const std::function<void(int64_t, int64_t)>& fn) {
  // A share word holds 20-bit indices; longer loops take the interface's default: guided
  // ranges cut into pieces of at most `step`.
  if (n > static_cast<int64_t>(kShareMask)) {
    Parallel::for_shares(n, step, fn);
    return;
  }
  run_job(n, step, true, fn);
}

void ThreadPool::run_job(int64_t n, int64_t min_chunk, bool shares,
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
  shares_job_.store(shares, std::memory_order_release);
  if (shares) {
    for (int s = 0; s < n_threads_; ++s) {
      shares_[static_cast<size_t>(s)].word.store(
          share_word(job, n * s / n_threads_, n * (s + 1) / n_threads_), std::memory_order_release);
    }
  } else {
    claim_.store(id, std::memory_order_release);  // open: next index 0
  }
  generation_.store(job, std::memory_order_seq_cst);
  // Waking costs a mutex and a notify per loop, which a decode step (about 70 loops per token,
  // workers spinning between them) paid for nothing. A worker about to sleep counts itself in
  // sleepers_ and then looks at generation_ once more; this call stores generation_ and then
  // reads sleepers_ (all sequentially consistent). So either the worker sees this job and does
  // not sleep, or this call sees the worker and wakes it. Taking the mutex orders the bump
  // before a sleeper's predicate check: no lost wake-up.
  if (sleepers_.load(std::memory_order_seq_cst) > 0) {
    { std::lock_guard<std::mutex> lock(mu_); }
    wake_.notify_all();
  }
  if (shares) {
    run_shares(job, 0);
  } else {
    run_chunks(job);
  }
  int spins = 0;
  while (done_.load(std::memory_order_acquire) != n) {
    ARC_CPU_RELAX();
    if (++spins > 4096) std::this_thread::yield();
  }
}

}  // namespace arc
