#include "arc/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <numeric>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace arc {
namespace {

TEST(ThreadPool, CoversEveryIndexOnce) {
  for (int threads : {1, 2, 3, 8}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.num_threads(), threads);
    for (int64_t n : {0, 1, 7, 64, 1000, 4097}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      pool.for_range(n, 3, [&](int64_t b, int64_t e) {
        ASSERT_LT(b, e);
        for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)]++;
      });
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << i;
    }
  }
}

TEST(ThreadPool, ManyCallsInARow) {
  ThreadPool pool(4);
  std::atomic<int64_t> total{0};
  for (int rep = 0; rep < 2000; ++rep) {
    pool.for_range(100, 1, [&](int64_t b, int64_t e) { total += e - b; });
  }
  EXPECT_EQ(total.load(), 200000);
}

// More threads than cores: some workers wake only after their loop is over, while the next loop
// (another function, another size) runs. Each index of each call must be covered exactly once,
// by that call's own function, and every call must return only after all its ranges ran.
TEST(ThreadPool, LateWorkersNeverRunAnotherCallsRanges) {
  ThreadPool pool(8);
  std::vector<int> owner(4096, -1);
  for (int call = 0; call < 3000; ++call) {
    const int64_t n = 1 + (call * 7919) % 4096;
    std::atomic<int64_t> covered{0};
    auto fn = [&, call](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) owner[static_cast<size_t>(i)] = call;
      covered += e - b;
    };
    // Guided and shared loops interleaved: a late worker may hold either kind's job.
    if (call % 3 == 0) {
      pool.for_shares(n, 1 + call % 5, fn);
    } else {
      pool.for_range(n, 1 + call % 5, fn);
    }
    ASSERT_EQ(covered.load(), n) << "call " << call;
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(owner[static_cast<size_t>(i)], call) << i;
  }
}

// Guided ranges: none longer than a share of the whole loop, none shorter than min_chunk but the
// last, and the loop ends on a range of at most min_chunk indices, so no thread waits long for
// another's final range.
TEST(ThreadPool, RangesShrinkTowardsTheEnd) {
  for (int threads : {2, 3}) {
    ThreadPool pool(threads);
    for (int64_t min_chunk : {1, 3, 16}) {
      const int64_t n = 1000;
      std::mutex mu;
      std::vector<std::pair<int64_t, int64_t>> ranges;
      pool.for_range(n, min_chunk, [&](int64_t b, int64_t e) {
        std::lock_guard<std::mutex> lock(mu);
        ranges.emplace_back(b, e);
      });
      std::sort(ranges.begin(), ranges.end());
      ASSERT_FALSE(ranges.empty());
      EXPECT_EQ(ranges.front().first, 0);
      EXPECT_EQ(ranges.back().second, n);
      EXPECT_LE(ranges.back().second - ranges.back().first, min_chunk);
      for (size_t i = 0; i < ranges.size(); ++i) {
        const int64_t len = ranges[i].second - ranges[i].first;
        EXPECT_LE(len, std::max(min_chunk, (n + 2 * threads - 1) / (2 * threads)));
        if (i + 1 < ranges.size()) {
          EXPECT_GE(len, min_chunk);
          EXPECT_EQ(ranges[i].second, ranges[i + 1].first);
        }
      }
    }
  }
}

TEST(ThreadPool, SharesCoverEveryIndexOnceInStepsAtMost) {
  for (int threads : {1, 2, 3, 8}) {
    ThreadPool pool(threads);
    for (int64_t n : {0, 1, 7, 64, 1000, 4097}) {
      for (int64_t step : {1, 3, 16}) {
        std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
        std::atomic<bool> too_long{false};
        pool.for_shares(n, step, [&](int64_t b, int64_t e) {
          ASSERT_LT(b, e);
          // One call when the loop fits one step; else ranges of at most `step`.
          if (e - b > step && e - b != n) too_long = true;
          for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)]++;
        });
        EXPECT_FALSE(too_long.load()) << threads << " threads, n " << n << ", step " << step;
        for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << i;
      }
    }
  }
}

// A share's last claims shrink (half of what is left once two steps or fewer remain), so the
// range that runs a share's last index is a single index: no thread waits at a loop's end on
// another's last whole step. Whoever owns the end of [0, n) when it is claimed (steals move it),
// that range is claimed by a front-walk with one index left.
TEST(ThreadPool, SharesEndInSingleIndexClaims) {
  for (int threads : {2, 3}) {
    ThreadPool pool(threads);
    for (int rep = 0; rep < 20; ++rep) {
      const int64_t n = 64 * threads, step = 8;
      std::mutex mu;
      std::vector<std::pair<int64_t, int64_t>> ranges;
      pool.for_shares(n, step, [&](int64_t b, int64_t e) {
        std::lock_guard<std::mutex> lock(mu);
        ranges.push_back({b, e});
      });
      std::sort(ranges.begin(), ranges.end());
      ASSERT_FALSE(ranges.empty());
      EXPECT_EQ(ranges.back(), std::make_pair(n - 1, n)) << threads << " threads, rep " << rep;
      int64_t next = 0;
      for (const auto& [b, e] : ranges) {
        ASSERT_EQ(b, next);
        ASSERT_LE(e - b, step);
        next = e;
      }
      EXPECT_EQ(next, n);
    }
  }
}

// Whether `flag` turns true within 20 s (the caller stalls in its own range meanwhile).
bool wait_for(const std::atomic<bool>& flag) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!flag.load() && std::chrono::steady_clock::now() < until) std::this_thread::yield();
  return flag.load();
}

// A thread that stalls inside its share is relieved: another thread takes the back of that
// share. The calling thread (share 0) blocks on its first range until some index of its share's
// second half has been run by another thread, which only a working steal makes happen.
TEST(ThreadPool, IdleThreadsStealFromASlowShare) {
  for (int threads : {2, 4}) {
    ThreadPool pool(threads);
    const int64_t n = 64 * threads;
    const std::thread::id caller = std::this_thread::get_id();
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    std::atomic<bool> stolen{false}, waited_out{false};
    pool.for_shares(n, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)]++;
      if (std::this_thread::get_id() != caller) {
        if (b >= 32 && b < 64) stolen = true;  // the second half of the caller's share
        return;
      }
      if (b != 0) return;
      waited_out = !wait_for(stolen);
    });
    EXPECT_FALSE(waited_out.load()) << threads << " threads: nobody stole from the stalled share";
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << i;
  }
}

// Workers idle past their spin sleep on a condition variable, and a loop wakes only those that
// counted themselves asleep. The caller blocks in its share (index 0) until another thread has
// run the other index, which only a woken worker can do: a lost wake-up fails the loop.
TEST(ThreadPool, WakesSleepingWorkersForEveryLoop) {
  ThreadPool pool(2);
  const std::thread::id caller = std::this_thread::get_id();
  for (int rep = 0; rep < 40; ++rep) {
    // Longer than a worker spins (200 us) before it sleeps.
    std::this_thread::sleep_for(std::chrono::milliseconds(rep % 4 == 0 ? 5 : 1));
    std::atomic<bool> worker_ran{false}, waited_out{false};
    pool.for_shares(2, 1, [&](int64_t b, int64_t) {
      if (std::this_thread::get_id() != caller) {
        worker_ran = true;
        return;
      }
      if (b != 0) return;
      waited_out = !wait_for(worker_ran);
    });
    ASSERT_FALSE(waited_out.load()) << "loop " << rep << ": the sleeping worker was not woken";
  }
}

// Loops past the shares' 20-bit indices run as guided ranges of at most `step`.
TEST(ThreadPool, SharesOfAHugeLoop) {
  ThreadPool pool(3);
  const int64_t n = (int64_t{1} << 21) + 5, step = 4096;
  std::vector<std::atomic<uint8_t>> hits(static_cast<size_t>(n));
  std::atomic<bool> too_long{false};
  pool.for_shares(n, step, [&](int64_t b, int64_t e) {
    if (e - b > step) too_long = true;
    for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)]++;
  });
  EXPECT_FALSE(too_long.load());
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << i;
}

// A Parallel without its own for_shares still keeps the contract: pieces of at most `step`.
TEST(ThreadPool, DefaultSharesRunInSteps) {
  struct OneRange final : kernels::Parallel {
    int num_threads() const override { return 2; }
    void for_range(int64_t n, int64_t, const std::function<void(int64_t, int64_t)>& fn) override {
      fn(0, n);
    }
  } pool;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  kernels::parallel_shares(&pool, 10, 4, [&](int64_t b, int64_t e) { ranges.emplace_back(b, e); });
  const std::vector<std::pair<int64_t, int64_t>> want = {{0, 4}, {4, 8}, {8, 10}};
  EXPECT_EQ(ranges, want);
}

TEST(ThreadPool, SerialFallbackWithoutPool) {
  int64_t covered = 0;
  kernels::parallel_for(nullptr, 50, 4, [&](int64_t b, int64_t e) { covered += e - b; });
  EXPECT_EQ(covered, 50);
}

}  // namespace
}  // namespace arc
