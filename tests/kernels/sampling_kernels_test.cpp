// Whole-row sampling helpers (arc/kernels/sampling.h) at every instruction-set level against the
// portable level: sizes around the vector widths, misaligned starts, NaN, +-0 and -inf.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "arc/kernels/cpu_dispatch.h"
#include "arc/kernels/sampling.h"

namespace arc::kernels {
namespace {

std::vector<float> row(std::mt19937_64& g, int64_t n) {
  std::normal_distribution<float> d(0.0f, 3.0f);
  std::vector<float> x(static_cast<size_t>(n) + 3);
  for (float& v : x) v = std::round(d(g) * 8.0f) / 8.0f;  // ties on the edges
  if (n > 5) {
    x[1] = NAN;
    x[2] = -INFINITY;
    x[3] = -0.0f;
    x[4] = 0.0f;
  }
  return x;
}

TEST(SamplingKernels, EveryLevelAsThePortableOne) {
  std::mt19937_64 g(11);
  for (int64_t n :
       {int64_t{1}, int64_t{7}, int64_t{16}, int64_t{17}, int64_t{100}, int64_t{4099}}) {
    for (int64_t off : {int64_t{0}, int64_t{1}, int64_t{3}}) {
      const std::vector<float> buf = row(g, n);
      const float* x = buf.data() + off;
      const float mx = row_max(x, n);
      if (!std::isfinite(mx)) continue;
      const double inv_t = 1.0 / 0.7;
      const float edges[kMassEdges] = {mx,        mx - 0.5f, mx - 1.0f, mx - 2.0f,
                                       mx - 3.0f, mx - 5.0f, INFINITY,  mx - 9.0f};
      double want[kMassEdges + 1];
      std::vector<double> want_p(static_cast<size_t>(n));
      std::vector<float> want_x(static_cast<size_t>(n) + 16);
      std::vector<int32_t> want_id(static_cast<size_t>(n) + 16);
      int64_t want_c = 0;
      ASSERT_TRUE(cpu::tempered_masses_at(cpu::IsaLevel::kScalar, x, n, mx, inv_t, edges, want));
      ASSERT_TRUE(cpu::tempered_probs_at(cpu::IsaLevel::kScalar, x, n, mx, inv_t, want_p.data()));
      ASSERT_TRUE(cpu::collect_range_at(cpu::IsaLevel::kScalar, x, nullptr, n, mx - 2.0f, mx - 0.5f,
                                        want_x.data(), want_id.data(), &want_c));
      // The definition of the masses, term by term with libm.
      double libm_total = 0.0;
      for (int64_t i = 0; i < n; ++i) {
        if (!std::isnan(x[i])) libm_total += std::exp((static_cast<double>(x[i]) - mx) * inv_t);
      }
      EXPECT_NEAR(want[kMassEdges], libm_total, 1e-13 * libm_total);
      EXPECT_EQ(want[6], 0.0);  // the +inf edge
      for (cpu::IsaLevel level : cpu::available_isas()) {
        double got[kMassEdges + 1];
        std::vector<double> p(static_cast<size_t>(n));
        std::vector<float> cx(static_cast<size_t>(n) + 16);
        std::vector<int32_t> cid(static_cast<size_t>(n) + 16);
        int64_t c = 0;
        ASSERT_TRUE(cpu::tempered_masses_at(level, x, n, mx, inv_t, edges, got));
        ASSERT_TRUE(cpu::tempered_probs_at(level, x, n, mx, inv_t, p.data()));
        ASSERT_TRUE(cpu::collect_range_at(level, x, nullptr, n, mx - 2.0f, mx - 0.5f, cx.data(),
                                          cid.data(), &c));
        const std::string at = std::string(cpu::isa_name(level)) + " n " + std::to_string(n);
        for (int j = 0; j <= kMassEdges; ++j) {
          EXPECT_NEAR(got[j], want[j], 1e-13 * (want[kMassEdges] + 1e-300)) << at << " edge " << j;
        }
        for (int64_t i = 0; i < n; ++i) {
          EXPECT_NEAR(p[static_cast<size_t>(i)], want_p[static_cast<size_t>(i)],
                      1e-15 * want_p[static_cast<size_t>(i)])
              << at << " i " << i;
        }
        ASSERT_EQ(c, want_c) << at;
        for (int64_t i = 0; i < c; ++i) {
          EXPECT_EQ(cx[static_cast<size_t>(i)], want_x[static_cast<size_t>(i)]) << at;
          EXPECT_EQ(cid[static_cast<size_t>(i)], want_id[static_cast<size_t>(i)]) << at;
        }
      }
    }
  }
}

TEST(SamplingKernels, CollectKeepsGivenIdsAndLogSumExp) {
  const std::vector<float> x = {3.0f, NAN, 1.0f, 2.0f, -INFINITY, 2.5f};
  const std::vector<int32_t> ids = {10, 11, 12, 13, 14, 15};
  std::vector<float> cx(x.size() + 16);
  std::vector<int32_t> cid(x.size() + 16);
  const int64_t c = collect_range(x.data(), ids.data(), 6, 1.0f, 3.0f, cx.data(), cid.data());
  ASSERT_EQ(c, 3);
  EXPECT_EQ(cid[0], 12);
  EXPECT_EQ(cid[1], 13);
  EXPECT_EQ(cid[2], 15);
  const std::vector<float> y = {1.0f, 3.0f, 2.0f};
  EXPECT_NEAR(log_sum_exp(y.data(), 3), std::log(std::exp(1.0) + std::exp(3.0) + std::exp(2.0)),
              1e-12);
  EXPECT_TRUE(std::isnan(log_sum_exp(x.data(), 6)));
}

}  // namespace
}  // namespace arc::kernels
