// The vision ops (arc/kernels/vision_ops.h): the scalar references against hand-computed values,
// then the CPU kernels against the references over odd sizes, misaligned rows, strided views and
// segments, serially and on a pool.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "arc/kernels/vision_ops.h"
#include "arc/thread_pool.h"
#include "kernel_test_util.h"

namespace arc::kernels {
namespace {

using testing::random_floats;

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double m = 0.0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(double{a[i]} - b[i]));
  return m;
}

double max_abs(const std::vector<float>& a) {
  double m = 0.0;
  for (float x : a) m = std::max(m, std::fabs(double{x}));
  return m;
}

TEST(VisionOpsRef, LayerNormHandComputed) {
  // Row (1, 2, 3, 6): mean 3, variance (4 + 1 + 0 + 9) / 4 = 3.5.
  const std::vector<float> x = {1, 2, 3, 6};
  const std::vector<float> w = {1, 2, 1, 1}, b = {0, 0, 1, -1};
  std::vector<float> y(4);
  ref::layer_norm(x.data(), w.data(), b.data(), y.data(), 1, 4, 0.0f);
  const double s = 1.0 / std::sqrt(3.5);
  EXPECT_NEAR(y[0], -2 * s, 1e-6);
  EXPECT_NEAR(y[1], -1 * s * 2, 1e-6);
  EXPECT_NEAR(y[2], 0 + 1, 1e-6);
  EXPECT_NEAR(y[3], 3 * s - 1, 1e-6);
  ref::layer_norm(x.data(), nullptr, nullptr, y.data(), 1, 4, 0.0f);
  EXPECT_NEAR(y[3], 3 * s, 1e-6);
}

TEST(VisionOpsRef, GeluErfHandComputed) {
  const std::vector<float> x = {0.0f, 1.0f, -1.0f, 3.0f};
  std::vector<float> y(4);
  ref::gelu_erf(x.data(), y.data(), 4);
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_NEAR(y[1], 0.8413447, 1e-6);  // Phi(1)
  EXPECT_NEAR(y[2], -0.1586553, 1e-6);
  EXPECT_NEAR(y[3], 3 * 0.9986501, 1e-6);
}

TEST(VisionOpsRef, RopeTableHandComputed) {
  // One token, two heads of 4: pairs (0, 2) and (1, 3); a quarter turn and no turn.
  std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8};
  const std::vector<float> c = {0, 1}, s = {1, 0};
  RopeTableArgs a;
  a.x = x.data();
  a.n_tokens = 1;
  a.n_heads = 2;
  a.head_dim = 4;
  a.cos = c.data();
  a.sin = s.data();
  ref::rope_table(a);
  EXPECT_EQ(x, (std::vector<float>{-3, 2, 1, 4, -7, 6, 5, 8}));
}

TEST(VisionOpsRef, DenseAttentionHandComputed) {
  // Segment {0} alone: its output is its own V. Segment {1, 2} with equal keys: the mean of V.
  const std::vector<float> q = {1, 0, 0.5f, 0.5f, -1, 2};
  const std::vector<float> k = {3, 1, 1, 1, 1, 1};
  const std::vector<float> v = {7, 8, 2, 4, 6, 10};
  const std::vector<int32_t> seg = {0, 1, 3};
  std::vector<float> out(6);
  DenseAttentionArgs a;
  a.q = q.data();
  a.k = k.data();
  a.v = v.data();
  a.out = out.data();
  a.n_tokens = 3;
  a.n_head = 1;
  a.head_dim = 2;
  a.seg_offsets = seg.data();
  a.n_segments = 2;
  ASSERT_TRUE(ref::dense_attention(a));
  EXPECT_EQ(out, (std::vector<float>{7, 8, 4, 7, 4, 7}));
  const std::vector<int32_t> bad = {0, 2, 1};
  a.seg_offsets = bad.data();
  EXPECT_FALSE(ref::dense_attention(a));
  EXPECT_FALSE(dense_attention(a, nullptr));
}

TEST(VisionOps, LayerNormMatchesRef) {
  ThreadPool pool(3);
  for (int64_t d : {1, 7, 32, 100, 1152, 4608}) {
    for (size_t off : {size_t{0}, size_t{1}}) {
      const int64_t rows = 3;
      auto buf = random_floats(static_cast<size_t>(rows * d) + off, 1, 2.0f);
      for (float& v : buf) v += 5.0f;  // a large mean: the two-pass variance must hold
      const std::vector<float> x(buf.begin() + off, buf.end());
      const auto w = random_floats(static_cast<size_t>(d), 2), b = random_floats(d, 3);
      for (int mode = 0; mode < 3; ++mode) {
        const float* wp = mode == 2 ? nullptr : w.data();
        const float* bp = mode == 0 ? b.data() : nullptr;
        std::vector<float> want(x.size()), got(x.size());
        ref::layer_norm(x.data(), wp, bp, want.data(), rows, d, 1e-6f);
        layer_norm(buf.data() + off, wp, bp, got.data(), rows, d, 1e-6f);
        EXPECT_LE(max_abs_diff(got, want), 2e-5 * std::max(1.0, max_abs(want)))
            << "d " << d << " mode " << mode;
        std::vector<float> inplace = x;  // y aliases x
        layer_norm(inplace.data(), wp, bp, inplace.data(), rows, d, 1e-6f);
        EXPECT_EQ(inplace, got);
      }
    }
  }
}

TEST(VisionOps, GeluErfMatchesRef) {
  auto x = random_floats(1001, 4, 3.0f);
  x.push_back(-20.0f);
  x.push_back(20.0f);
  std::vector<float> want(x.size()), got(x.size());
  ref::gelu_erf(x.data(), want.data(), static_cast<int64_t>(x.size()));
  gelu_erf(x.data(), got.data(), static_cast<int64_t>(x.size()));
  EXPECT_LE(max_abs_diff(got, want), 1e-5 * max_abs(want));
  EXPECT_EQ(got[1001], 0.0f);
  EXPECT_EQ(got[1002], 20.0f);
}

TEST(VisionOps, RopeTableMatchesRef) {
  for (int64_t hd : {2, 8, 72, 128}) {
    const int64_t n = 5, heads = 3, stride = heads * hd + 7;  // a strided view (fused QKV)
    const auto x0 = random_floats(static_cast<size_t>(n * stride), 5);
    const auto ang = random_floats(static_cast<size_t>(n * hd / 2), 6, 3.0f);
    std::vector<float> c(ang.size()), s(ang.size());
    for (size_t i = 0; i < ang.size(); ++i) {
      c[i] = std::cos(ang[i]);
      s[i] = std::sin(ang[i]);
    }
    std::vector<float> want = x0, got = x0;
    RopeTableArgs a;
    a.x_stride = stride;
    a.n_tokens = n;
    a.n_heads = heads;
    a.head_dim = hd;
    a.cos = c.data();
    a.sin = s.data();
    a.x = want.data();
    ref::rope_table(a);
    a.x = got.data();
    rope_table(a);
    EXPECT_LE(max_abs_diff(got, want), 1e-6 * max_abs(want)) << "hd " << hd;
    for (int64_t t = 0; t < n; ++t) {  // the gap after the heads is untouched
      for (int64_t i = heads * hd; i < stride; ++i)
        EXPECT_EQ(got[t * stride + i], x0[t * stride + i]);
    }
  }
}

struct AttnCase {
  std::vector<int32_t> seg;  // empty: one segment
  int64_t n_head, head_dim;
  bool fused;  // q, k, v as views into one [n, 3 * width] buffer
};

TEST(VisionOps, DenseAttentionMatchesRef) {
  ThreadPool pool(3);
  const std::vector<AttnCase> cases = {
      {{}, 2, 16, true},
      {{0, 16, 32}, 2, 16, true},           // two frames of 16
      {{0, 5, 5, 600, 613}, 3, 72, false},  // an empty segment, one over the query chunk
      {{0, 1}, 1, 8, false},                // one token
      {{0, 700}, 1, 64, true},              // several query chunks
  };
  for (const AttnCase& c : cases) {
    const int64_t n = c.seg.empty() ? 37 : c.seg.back();
    const int64_t width = c.n_head * c.head_dim;
    const int64_t stride = c.fused ? 3 * width : width;
    const auto qkv = random_floats(static_cast<size_t>(n * 3 * width), 7, 1.5f);
    const float* q = qkv.data();
    const float* k = c.fused ? q + width : q + n * width;
    const float* v = c.fused ? q + 2 * width : q + 2 * n * width;
    DenseAttentionArgs a;
    a.q = q;
    a.k = k;
    a.v = v;
    a.n_tokens = n;
    a.n_head = c.n_head;
    a.head_dim = c.head_dim;
    a.q_stride = stride;
    a.kv_stride = stride;
    a.out_stride = width + 3;
    a.seg_offsets = c.seg.empty() ? nullptr : c.seg.data();
    a.n_segments = c.seg.empty() ? 0 : static_cast<int64_t>(c.seg.size()) - 1;
    std::vector<float> want(static_cast<size_t>(n * (width + 3)), -9.0f);
    std::vector<float> got = want, got1 = want;
    a.out = want.data();
    ASSERT_TRUE(ref::dense_attention(a));
    a.out = got.data();
    ASSERT_TRUE(dense_attention(a, &pool));
    a.out = got1.data();
    ASSERT_TRUE(dense_attention(a, nullptr));
    EXPECT_LE(max_abs_diff(got, want), 1e-5 * max_abs(want)) << "n " << n << " hd " << c.head_dim;
    EXPECT_EQ(got, got1) << "the pool changes the result";
  }
}

}  // namespace
}  // namespace arc::kernels
