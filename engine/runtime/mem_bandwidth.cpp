#include "arc/mem_bandwidth.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <utility>

namespace arc {

Result<ReadBandwidthMeter> ReadBandwidthMeter::create(kernels::Parallel* pool, size_t bytes) {
  const size_t n = bytes / sizeof(uint64_t);
  ARC_ASSIGN_OR_RETURN(HostMemory mem, HostMemory::allocate(n * sizeof(uint64_t)));
  auto* buf = reinterpret_cast<uint64_t*>(mem.data());
  // Touch every page (and make the contents non-trivial) before timing.
  kernels::parallel_for(pool, static_cast<int64_t>(n), 1 << 16, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) buf[i] = static_cast<uint64_t>(i) * 2654435761u;
  });
  return ReadBandwidthMeter(pool, std::move(mem));
}

double ReadBandwidthMeter::measure(int repeats) {
  const size_t n = mem_.size() / sizeof(uint64_t);
  const auto* buf = reinterpret_cast<const uint64_t*>(mem_.data());
  std::atomic<uint64_t> sink{0};
  double best = 0.0;
  for (int r = 0; r <= repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    kernels::parallel_for(pool_, static_cast<int64_t>(n), 1 << 16, [&](int64_t b, int64_t e) {
      // Independent accumulators so the compiler vectorises the loop.
      uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
      int64_t i = b;
      for (; i + 4 <= e; i += 4) {
        a0 += buf[i];
        a1 ^= buf[i + 1];
        a2 += buf[i + 2];
        a3 ^= buf[i + 3];
      }
      for (; i < e; ++i) a0 += buf[i];
      sink.fetch_add(a0 + a1 + a2 + a3, std::memory_order_relaxed);
    });
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (r > 0) best = std::max(best, static_cast<double>(n * sizeof(uint64_t)) / s);
  }
  return sink.load() == 42 ? best * 1.0 : best;  // keeps the sum observable
}

}  // namespace arc
