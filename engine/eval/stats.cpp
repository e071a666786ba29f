#include "arc/eval/stats.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace arc::eval {
namespace {

// Linear interpolation between the order statistics around rank q * (n - 1).
double percentile(const std::vector<double>& sorted, double q) {
  const double at = q * static_cast<double>(sorted.size() - 1);
  const size_t i = static_cast<size_t>(at);
  if (i + 1 >= sorted.size()) return sorted.back();
  const double f = at - static_cast<double>(i);
  return sorted[i] + f * (sorted[i + 1] - sorted[i]);
}

}  // namespace

Summary summarize(std::span<const double> values) {
  Summary s;
  s.n = static_cast<int64_t>(values.size());
  if (s.n == 0) return s;
  double sum = 0;
  for (double v : values) sum += v;
  s.mean = sum / static_cast<double>(s.n);
  if (s.n > 1) {
    double ss = 0;  // two-pass variance: no cancellation for values far from zero
    for (double v : values) ss += (v - s.mean) * (v - s.mean);
    s.se = std::sqrt(ss / static_cast<double>(s.n - 1) / static_cast<double>(s.n));
  }
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  s.median = percentile(sorted, 0.5);
  s.p90 = percentile(sorted, 0.9);
  s.p99 = percentile(sorted, 0.99);
  s.max = sorted.back();
  return s;
}

}  // namespace arc::eval
