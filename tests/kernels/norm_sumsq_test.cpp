// The two-pass RMS norm (sum_squares + rms_norm_sumsq, arc/kernels/ops.h): references against
// hand-computed values and against the one-pass rms_norm; the CPU kernels against the
// references; and a row split in parts (as over tensor-parallel ranks) against the whole row.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "arc/kernels/ops.h"

namespace k = arc::kernels;

namespace {

std::vector<float> random_vec(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-2.0f, 2.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = d(rng);
  return v;
}

TEST(NormSumsqRef, HandComputed) {
  const float x[] = {1, 2, 3, 4, -1, 0, 0, 1};  // two rows of 4
  float ss[2];
  k::ref::sum_squares(x, ss, 2, 4);
  EXPECT_FLOAT_EQ(ss[0], 30.0f);
  EXPECT_FLOAT_EQ(ss[1], 2.0f);
  // Row 0 as part of a row of 6 whose other part has squares summing to 6: mean 36 / 6 = 6.
  const float whole = 36.0f, w[] = {1, 1, 2, 0.5f};
  float y[4];
  k::ref::rms_norm_sumsq(x, w, &whole, y, 1, 4, 6, 0.0f);
  const float inv = 1.0f / std::sqrt(6.0f);
  EXPECT_FLOAT_EQ(y[0], 1 * inv);
  EXPECT_FLOAT_EQ(y[2], 3 * 2 * inv);
  EXPECT_FLOAT_EQ(y[3], 4 * 0.5f * inv);
}

// With the whole row in one part the two passes are rms_norm.
TEST(NormSumsqRef, OnePartIsRmsNorm) {
  const int64_t rows = 3, d = 37;
  const auto x = random_vec(rows * d, 1), w = random_vec(d, 2);
  std::vector<float> ss(rows), y(x.size()), want(x.size());
  k::ref::sum_squares(x.data(), ss.data(), rows, d);
  k::ref::rms_norm_sumsq(x.data(), w.data(), ss.data(), y.data(), rows, d, d, 1e-6f);
  k::ref::rms_norm(x.data(), w.data(), want.data(), rows, d, 1e-6f);
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], want[i], 1e-6f * std::fabs(want[i]));
}

TEST(NormSumsq, CpuMatchesReferenceOverSizes) {
  for (int64_t d : {1, 7, 8, 9, 64, 100, 1000, 4099}) {
    const int64_t rows = 5;
    const auto x = random_vec(rows * d, static_cast<uint32_t>(d)), w = random_vec(d, 3);
    std::vector<float> ss(rows), ss_ref(rows);
    k::sum_squares(x.data(), ss.data(), rows, d);
    k::ref::sum_squares(x.data(), ss_ref.data(), rows, d);
    for (int64_t r = 0; r < rows; ++r) EXPECT_NEAR(ss[r], ss_ref[r], 1e-5f * ss_ref[r]) << d;
    for (const float* wp : {w.data(), static_cast<const float*>(nullptr)}) {
      std::vector<float> y(x.size()), want(x.size());
      k::rms_norm_sumsq(x.data(), wp, ss_ref.data(), y.data(), rows, d, 3 * d, 1e-6f);
      k::ref::rms_norm_sumsq(x.data(), wp, ss_ref.data(), want.data(), rows, d, 3 * d, 1e-6f);
      for (size_t i = 0; i < y.size(); ++i) {
        ASSERT_NEAR(y[i], want[i], 1e-5f * std::fabs(want[i]) + 1e-7f) << "d " << d;
      }
      // In place.
      std::vector<float> yi = x;
      k::rms_norm_sumsq(yi.data(), wp, ss_ref.data(), yi.data(), rows, d, 3 * d, 1e-6f);
      EXPECT_EQ(yi, y);
    }
  }
}

// A row of 3 x 96 split in three parts: the parts' sums added, each part scaled, equal the
// one-pass norm of the whole row (what tensor parallelism relies on).
TEST(NormSumsq, PartsEqualTheWholeRow) {
  const int64_t rows = 4, part = 96, n_parts = 3, d = part * n_parts;
  const auto x = random_vec(rows * d, 9), w = random_vec(d, 10);
  std::vector<float> want(x.size());
  k::ref::rms_norm(x.data(), w.data(), want.data(), rows, d, 1e-6f);
  std::vector<float> total(rows, 0.0f);
  std::vector<std::vector<float>> xs(n_parts);
  for (int64_t p = 0; p < n_parts; ++p) {
    for (int64_t r = 0; r < rows; ++r) {
      xs[p].insert(xs[p].end(), x.begin() + r * d + p * part, x.begin() + r * d + (p + 1) * part);
    }
    std::vector<float> ss(rows);
    k::sum_squares(xs[p].data(), ss.data(), rows, part);
    for (int64_t r = 0; r < rows; ++r) total[r] += ss[r];
  }
  for (int64_t p = 0; p < n_parts; ++p) {
    std::vector<float> y(xs[p].size());
    k::rms_norm_sumsq(xs[p].data(), w.data() + p * part, total.data(), y.data(), rows, part, d,
                      1e-6f);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t i = 0; i < part; ++i) {
        const float want_v = want[r * d + p * part + i];
        ASSERT_NEAR(y[r * part + i], want_v, 1e-5f * std::fabs(want_v) + 1e-7f);
      }
    }
  }
}

}  // namespace
