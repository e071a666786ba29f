// Measures the machine's memory read bandwidth: a streaming read over a buffer much larger than
// the caches, split across a thread pool (the same threads the forward uses).
#pragma once

#include <cstddef>

#include "arc/host_memory.h"
#include "arc/kernels/parallel.h"
#include "arc/status.h"

namespace arc {

// A filled buffer kept for repeated measurements: bench measures right after each decode repeat,
// so that on a shared host each repeat is compared with the bandwidth available at that moment.
class ReadBandwidthMeter {
 public:
  // `bytes` on huge pages where the OS offers them (arc/host_memory.h), as the CPU backend's
  // weights are: the figure is the peak the weights can be streamed at, not one slowed by 4 KiB
  // page walks. Fails when the buffer cannot be allocated.
  static Result<ReadBandwidthMeter> create(kernels::Parallel* pool, size_t bytes);

  // Best of `repeats` passes (after one warm-up pass), bytes per second.
  double measure(int repeats = 3);

 private:
  ReadBandwidthMeter(kernels::Parallel* pool, HostMemory mem) : pool_(pool), mem_(std::move(mem)) {}
  kernels::Parallel* pool_;
  HostMemory mem_;
};

}  // namespace arc
