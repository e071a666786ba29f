// Summary statistics against values worked out by hand (linear interpolation between ranks,
// numpy's default percentile).
#include <vector>

#include <gtest/gtest.h>

#include "arc/bench/stats.h"

namespace arc::bench {
namespace {

TEST(BenchStats, OddCountUnsorted) {
  std::vector<double> v = {5, 1, 4, 2, 3};
  Summary s = summarize(v);
  EXPECT_EQ(s.count, 5u);
  EXPECT_DOUBLE_EQ(s.mean, 3.0);
  EXPECT_DOUBLE_EQ(s.median, 3.0);
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.max, 5.0);
  // rank 0.9 * 4 = 3.6 -> 4 + 0.6 * (5 - 4)
  EXPECT_DOUBLE_EQ(s.p90, 4.6);
  // rank 0.99 * 4 = 3.96 -> 4 + 0.96
  EXPECT_DOUBLE_EQ(s.p99, 4.96);
}

TEST(BenchStats, EvenCountMedianIsMidpoint) {
  std::vector<double> v = {40, 10, 30, 20};
  Summary s = summarize(v);
  EXPECT_DOUBLE_EQ(s.median, 25.0);
  EXPECT_DOUBLE_EQ(s.mean, 25.0);
  // rank 0.9 * 3 = 2.7 -> 30 + 0.7 * 10
  EXPECT_DOUBLE_EQ(s.p90, 37.0);
}

TEST(BenchStats, SixRunsTheSeedsWay) {
  // Six tok/s figures of one series: the seeds quote median with min and max.
  std::vector<double> v = {48.0, 51.5, 47.0, 63.0, 50.0, 49.0};
  Summary s = summarize(v);
  EXPECT_DOUBLE_EQ(s.median, 49.5);  // (49 + 50) / 2
  EXPECT_DOUBLE_EQ(s.min, 47.0);
  EXPECT_DOUBLE_EQ(s.max, 63.0);
  EXPECT_DOUBLE_EQ(s.mean, 308.5 / 6);
}

TEST(BenchStats, SingleAndEmpty) {
  std::vector<double> one = {7.5};
  Summary s = summarize(one);
  EXPECT_EQ(s.count, 1u);
  EXPECT_DOUBLE_EQ(s.median, 7.5);
  EXPECT_DOUBLE_EQ(s.p99, 7.5);
  Summary e = summarize(std::vector<double>{});
  EXPECT_EQ(e.count, 0u);
  EXPECT_DOUBLE_EQ(e.median, 0.0);
}

TEST(BenchStats, PercentileEnds) {
  std::vector<double> v = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 0), 1.0);
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 100), 11.0);
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 50), 6.0);
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 95), 10.5);  // rank 9.5
}

}  // namespace
}  // namespace arc::bench
