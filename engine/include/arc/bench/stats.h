// Summary statistics of benchmark samples (latencies in ms, rates in tokens/s).
//
// Percentiles use linear interpolation between closest ranks (numpy's default, which vLLM's
// benchmark_serving and most serving benchmarks report), so figures line up with theirs.
#pragma once

#include <cstddef>
#include <span>

namespace arc::bench {

struct Summary {
  size_t count = 0;  // samples; the fields below are 0 when count is 0
  double mean = 0;
  double median = 0;  // = p50
  double min = 0;
  double max = 0;
  double p90 = 0;
  double p99 = 0;
};

// The p-th percentile (p in [0, 100]) of values sorted ascending; 0 for an empty span.
double percentile_sorted(std::span<const double> sorted, double p);

// count, mean, median, min, max, p90 and p99 of values in any order.
Summary summarize(std::span<const double> values);

}  // namespace arc::bench
