// Measures the machine's memory read bandwidth: a streaming read over a buffer much larger than
// the caches, split across a thread pool (the same threads the forward uses).
#pragma once

#include <cstddef>

#include "arc/kernels/parallel.h"

namespace arc {

// Best of `repeats` passes over `bytes` (after one warm-up pass) on huge pages where the OS offers
// them (arc/host_memory.h); bytes per second, 0 when the buffer cannot be allocated.
double measure_read_bandwidth(kernels::Parallel* pool, size_t bytes = size_t{1} << 30,
                              int repeats = 3);

}  // namespace arc
