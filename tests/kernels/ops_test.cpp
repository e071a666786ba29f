// Elementwise and row-wise ops: references against hand-computed values and identities, then
// every ISA variant available on this machine against the references over odd sizes and
// misaligned pointers (a sentinel after each output catches writes past the end).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "arc/kernels/ops.h"
#include "arc/kernels/ops_isa.h"

namespace k = arc::kernels;

namespace {

constexpr float kSentinel = 12345.678f;
const int64_t kSizes[] = {1, 2, 3, 7, 8, 15, 16, 17, 31, 32, 33, 63, 100, 257, 1000, 4099};
const int64_t kOffsets[] = {0, 1, 3};  // floats: 4 and 12 bytes break 16/32/64-byte alignment

std::vector<float> random_vec(int64_t n, float lo, float hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// A buffer holding [off] padding, n values, then a sentinel.
struct Buf {
  std::vector<float> mem;
  int64_t off, n;
  Buf(const std::vector<float>& v, int64_t off_)
      : mem(v.size() + off_ + 1, kSentinel), off(off_), n(v.size()) {
    std::copy(v.begin(), v.end(), mem.begin() + off);
  }
  float* p() { return mem.data() + off; }
  bool sentinel_ok() const { return mem[off + n] == kSentinel; }
};

void expect_close(const float* got, const float* want, int64_t n, float rel, float abs_tol,
                  const char* what) {
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_NEAR(got[i], want[i], abs_tol + rel * std::fabs(want[i]))
        << what << " index " << i << " of " << n;
  }
}

}  // namespace

TEST(OpsRef, RmsNormHandComputed) {
  const float x[] = {1, 2, 3, 4};  // mean square 7.5
  const float w[] = {1.0f, 0.5f, 2.0f, -1.0f};
  float y[4];
  k::ref::rms_norm(x, nullptr, y, 1, 4, 0.0f);
  const double inv = 0.3651483716701107;  // 1 / sqrt(7.5)
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(y[i], x[i] * inv, 1e-7);
  k::ref::rms_norm(x, w, y, 1, 4, 0.0f);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(y[i], x[i] * inv * w[i], 1e-7);
  // eps enters under the root: mean square 7.5 + 2.5 = 10.
  k::ref::rms_norm(x, nullptr, y, 1, 4, 2.5f);
  EXPECT_NEAR(y[3], 4.0 / std::sqrt(10.0), 1e-7);
  // Rows are independent; in place works.
  float xx[] = {3, 4, 0, 0, 5, 12};  // rows of 2: ms 12.5, 0, 84.5
  k::ref::rms_norm(xx, nullptr, xx, 3, 2, 0.0f);
  EXPECT_NEAR(xx[0], 3 / std::sqrt(12.5), 1e-6);
  EXPECT_NEAR(xx[5], 12 / std::sqrt(84.5), 1e-6);
}

TEST(OpsRef, SoftmaxHandComputedAndStable) {
  const double want[] = {0.09003057317038046, 0.24472847105479767, 0.6652409557748219};
  for (float base : {0.0f, 1000.0f, -1000.0f, 3.0e38f}) {
    // 3e38 + {1,2,3} rounds to one value in float; only check the finite-shift cases exactly.
    float x[] = {base + 1, base + 2, base + 3};
    k::ref::softmax_rows(x, 1, 3);
    float sum = x[0] + x[1] + x[2];
    EXPECT_NEAR(sum, 1.0f, 1e-6) << base;
    if (std::fabs(base) <= 1000.0f) {
      for (int i = 0; i < 3; ++i) EXPECT_NEAR(x[i], want[i], 1e-6) << base;
    }
  }
  float masked[] = {-INFINITY, 0.0f, -INFINITY, 0.0f};
  k::ref::softmax_rows(masked, 1, 4);
  EXPECT_EQ(masked[0], 0.0f);
  EXPECT_NEAR(masked[1], 0.5f, 1e-7);
  float all_masked[] = {-INFINITY, -INFINITY};
  k::ref::softmax_rows(all_masked, 1, 2);
  EXPECT_EQ(all_masked[0], 0.0f);
  EXPECT_EQ(all_masked[1], 0.0f);
}

TEST(OpsRef, ActivationsHandComputed) {
  const float x[] = {0.0f, 1.0f, -1.0f, 3.0f, 2.5f};
  float y[5];
  k::ref::silu(x, y, 5);
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_NEAR(y[1], 0.7310585786300049, 1e-7);
  EXPECT_NEAR(y[2], -0.2689414213699951, 1e-7);
  EXPECT_NEAR(y[3], 2.8577223804672998, 1e-6);
  k::ref::gelu(x, y, 5);
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_NEAR(y[1], 0.8411919906082768, 1e-7);
  EXPECT_NEAR(y[2], -0.15880800939172324, 1e-7);
  EXPECT_NEAR(y[4], 2.484915733910001, 1e-6);
  const float up[] = {2.0f, 2.0f, -3.0f, 0.5f, 1.0f};
  k::ref::swiglu(x, up, y, 5);
  EXPECT_NEAR(y[1], 2 * 0.7310585786300049, 1e-6);
  EXPECT_NEAR(y[2], -3 * -0.2689414213699951, 1e-6);
  k::ref::add(x, up, y, 5);
  EXPECT_EQ(y[2], -4.0f);
  // Saturation: silu(x) -> x for large x, -> 0 for very negative x.
  const float big[] = {100.0f, -100.0f};
  k::ref::silu(big, y, 2);
  EXPECT_EQ(y[0], 100.0f);
  EXPECT_NEAR(y[1], 0.0f, 1e-30);
}

// Tolerances: exp is a polynomial of about 2 ulp; with one division and float accumulation, 1e-5
// relative covers every variant comfortably while still catching any wrong lane or tail.
TEST(OpsIsa, EveryVariantMatchesReference) {
  for (k::OpsIsa isa : k::ops_isas_available()) {
    SCOPED_TRACE(std::string(k::ops_isa_name(isa)));
    const k::OpsTable& t = k::ops_table(isa);
    for (int64_t n : kSizes) {
      for (int64_t off : kOffsets) {
        SCOPED_TRACE("n=" + std::to_string(n) + " off=" + std::to_string(off));
        const auto x = random_vec(n, -12.0f, 12.0f, 1 + n);
        const auto w = random_vec(n, -2.0f, 2.0f, 2 + n);
        std::vector<float> want(n);

        Buf xb(x, off), wb(w, off), yb(std::vector<float>(n, 0.0f), off);
        k::ref::rms_norm(x.data(), w.data(), want.data(), 1, n, 1e-6f);
        t.rms_norm(xb.p(), wb.p(), yb.p(), 1, n, 1e-6f);
        expect_close(yb.p(), want.data(), n, 1e-5f, 1e-6f, "rms_norm");
        EXPECT_TRUE(yb.sentinel_ok());
        k::ref::rms_norm(x.data(), nullptr, want.data(), 1, n, 1e-6f);
        t.rms_norm(xb.p(), nullptr, yb.p(), 1, n, 1e-6f);
        expect_close(yb.p(), want.data(), n, 1e-5f, 1e-6f, "rms_norm no weight");

        // Softmax over a wide range including -inf (masked) entries and huge values.
        auto s = random_vec(n, -60.0f, 60.0f, 3 + n);
        if (n > 2) s[n / 2] = -INFINITY;
        for (float shift : {0.0f, 1.0e4f}) {
          std::vector<float> sv = s;
          for (float& v : sv) v += shift;
          std::vector<float> sw = sv;
          k::ref::softmax_rows(sw.data(), 1, n);
          Buf sb(sv, off);
          t.softmax_rows(sb.p(), 1, n);
          expect_close(sb.p(), sw.data(), n, 1e-5f, 1e-7f, "softmax");
          EXPECT_TRUE(sb.sentinel_ok());
        }

        k::ref::silu(x.data(), want.data(), n);
        t.silu(xb.p(), yb.p(), n);
        expect_close(yb.p(), want.data(), n, 1e-5f, 1e-7f, "silu");
        EXPECT_TRUE(yb.sentinel_ok());

        k::ref::gelu(x.data(), want.data(), n);
        t.gelu(xb.p(), yb.p(), n);
        expect_close(yb.p(), want.data(), n, 1e-5f, 1e-7f, "gelu");
        EXPECT_TRUE(yb.sentinel_ok());

        k::ref::swiglu(x.data(), w.data(), want.data(), n);
        t.swiglu(xb.p(), wb.p(), yb.p(), n);
        expect_close(yb.p(), want.data(), n, 1e-5f, 1e-7f, "swiglu");
        EXPECT_TRUE(yb.sentinel_ok());

        // add and scale are exact in every variant.
        k::ref::add(x.data(), w.data(), want.data(), n);
        t.add(xb.p(), wb.p(), yb.p(), n);
        for (int64_t i = 0; i < n; ++i) ASSERT_EQ(yb.p()[i], want[i]) << "add " << i;
        EXPECT_TRUE(yb.sentinel_ok());
        t.add(xb.p(), wb.p(), xb.p(), n);  // aliasing output and input
        for (int64_t i = 0; i < n; ++i) ASSERT_EQ(xb.p()[i], want[i]) << "add in place " << i;
        t.scale(xb.p(), -0.5f, n);
        for (int64_t i = 0; i < n; ++i) ASSERT_EQ(xb.p()[i], want[i] * -0.5f) << "scale " << i;
        EXPECT_TRUE(xb.sentinel_ok());
      }
    }
  }
}

TEST(OpsIsa, ExtremeInputs) {
  for (k::OpsIsa isa : k::ops_isas_available()) {
    SCOPED_TRACE(std::string(k::ops_isa_name(isa)));
    const k::OpsTable& t = k::ops_table(isa);
    const std::vector<float> x = {-200.0f, -100.0f, -88.0f, -87.0f, -20.0f, 0.0f,
                                  20.0f,   87.0f,   88.5f,  89.0f,  100.0f, 200.0f};
    const int64_t n = static_cast<int64_t>(x.size());
    std::vector<float> got(n), want(n);
    k::ref::silu(x.data(), want.data(), n);
    t.silu(x.data(), got.data(), n);
    expect_close(got.data(), want.data(), n, 1e-5f, 1e-30f, "silu extreme");
    k::ref::gelu(x.data(), want.data(), n);
    t.gelu(x.data(), got.data(), n);
    expect_close(got.data(), want.data(), n, 1e-5f, 1e-30f, "gelu extreme");
    std::vector<float> s = {-INFINITY, -INFINITY, -INFINITY};
    t.softmax_rows(s.data(), 1, 3);
    for (float v : s) EXPECT_EQ(v, 0.0f);
  }
}

TEST(OpsIsa, SeveralRows) {
  const int64_t rows = 5, d = 37;
  const auto x = random_vec(rows * d, -3.0f, 3.0f, 99);
  const auto w = random_vec(d, 0.5f, 1.5f, 98);
  std::vector<float> want(rows * d), got(rows * d);
  k::ref::rms_norm(x.data(), w.data(), want.data(), rows, d, 1e-5f);
  k::rms_norm(x.data(), w.data(), got.data(), rows, d, 1e-5f);
  expect_close(got.data(), want.data(), rows * d, 1e-5f, 1e-6f, "rms_norm rows");
  std::vector<float> a = x, b = x;
  k::ref::softmax_rows(a.data(), rows, d);
  k::softmax_rows(b.data(), rows, d);
  expect_close(b.data(), a.data(), rows * d, 1e-5f, 1e-7f, "softmax rows");
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (int64_t i = 0; i < d; ++i) sum += b[r * d + i];
    EXPECT_NEAR(sum, 1.0, 1e-5);
  }
}

TEST(OpsIsa, BestIsListedLast) {
  const auto isas = k::ops_isas_available();
  ASSERT_FALSE(isas.empty());
  EXPECT_EQ(isas.front(), k::OpsIsa::kScalar);
  EXPECT_EQ(isas.back(), k::ops_isa_best());
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")) {
    EXPECT_EQ(k::ops_isa_best(), k::OpsIsa::kAvx512);
  }
#elif defined(__aarch64__)
  EXPECT_EQ(k::ops_isa_best(), k::OpsIsa::kNeon);
  EXPECT_EQ(isas.size(), 2u);
#endif
}

// gpt-oss's clamped SwiGLU: hand-computed values of the reference (both clamps), then the
// dispatched op against it over sizes, in place too.
TEST(Ops, SwigluOaiClampsAndMatchesReference) {
  const float g[] = {0.0f, 1.0f, -2.0f, 9.0f, 3.0f};
  const float u[] = {0.5f, -1.0f, 2.0f, 1.0f, -8.0f};
  float y[5];
  k::ref::swiglu_oai(g, u, y, 5, 1.702f, 7.0f);
  auto expect = [](double gv, double uv) { return gv / (1.0 + std::exp(-1.702 * gv)) * (uv + 1); };
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_NEAR(y[1], expect(1.0, -1.0), 1e-7);  // (u + 1) = 0
  EXPECT_NEAR(y[2], expect(-2.0, 2.0), 1e-6);
  EXPECT_NEAR(y[3], expect(7.0, 1.0), 1e-5);   // gate clamped to the limit
  EXPECT_NEAR(y[4], expect(3.0, -7.0), 1e-5);  // up clamped to -limit
  for (int64_t n : kSizes) {
    const auto x = random_vec(n, -12.0f, 12.0f, 11 + n);
    auto w = random_vec(n, -10.0f, 10.0f, 12 + n);
    std::vector<float> want(n), got(n);
    k::ref::swiglu_oai(x.data(), w.data(), want.data(), n, 1.702f, 7.0f);
    k::swiglu_oai(x.data(), w.data(), got.data(), n, 1.702f, 7.0f);
    expect_close(got.data(), want.data(), n, 1e-5f, 1e-6f, "swiglu_oai");
    k::swiglu_oai(x.data(), w.data(), w.data(), n, 1.702f, 7.0f);  // y aliases up
    expect_close(w.data(), want.data(), n, 1e-5f, 1e-6f, "swiglu_oai in place");
  }
}
