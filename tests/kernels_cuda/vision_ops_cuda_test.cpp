// The vision ops on device (kernels/cuda/vision_ops.cu, dense_attention.cu) against the scalar
// references of arc/kernels/vision_ops.h. Tolerances: row-wise F32 math -> 1e-5 relative
// (rsqrtf, erff, tanhf differ from double by a few ulp); rotary -> 1e-6 (same F32 products);
// attention -> 1e-5 relative (F32 dot products and an online softmax in expf).
#include <algorithm>
#include <cmath>

#include "arc/kernels/ops.h"
#include "arc/kernels/vision_ops.h"
#include "cuda_test_util.h"

namespace arc::kernels::cuda::test {
namespace {

TEST_F(CudaTest, LayerNormMatchesRef) {
  for (int64_t d : {1, 67, 1152, 4608}) {
    const int64_t rows = 5;
    auto x = random_floats(static_cast<size_t>(rows * d), 1, -3.0f, 3.0f);
    for (float& v : x) v += 4.0f;  // a large mean: the two-pass variance must hold
    const auto w = random_floats(static_cast<size_t>(d), 2), b = random_floats(d, 3);
    for (int mode = 0; mode < 3; ++mode) {
      const bool with_w = mode != 2, with_b = mode == 0;
      std::vector<float> want(x.size());
      ref::layer_norm(x.data(), with_w ? w.data() : nullptr, with_b ? b.data() : nullptr,
                      want.data(), rows, d, 1e-6f);
      Dev<float> dx(x), dw(w), db(b), dy(x.size());
      ASSERT_TRUE(layer_norm(ctx_, dx.get(), with_w ? dw.get() : nullptr,
                             with_b ? db.get() : nullptr, dy.get(), rows, d, 1e-6f));
      ASSERT_TRUE(layer_norm(ctx_, dx.get(), with_w ? dw.get() : nullptr,
                             with_b ? db.get() : nullptr, dx.get(), rows, d, 1e-6f));  // in place
      sync();
      const double tol = 1e-5 * std::max(1.0, max_abs(want));
      EXPECT_LE(max_abs_diff(dy.download(), want), tol) << "d " << d << " mode " << mode;
      EXPECT_LE(max_abs_diff(dx.download(), want), tol) << "d " << d << " in place";
    }
  }
}

TEST_F(CudaTest, GeluMatchesRef) {
  auto x = random_floats(100003, 4, -6.0f, 6.0f);
  x[0] = -30.0f;
  x[1] = 30.0f;
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<float> want_tanh(x.size()), want_erf(x.size());
  ref::gelu(x.data(), want_tanh.data(), n);
  ref::gelu_erf(x.data(), want_erf.data(), n);
  Dev<float> dx(x), dy(x.size()), dz(x);
  ASSERT_TRUE(gelu(ctx_, dx.get(), dy.get(), n));
  ASSERT_TRUE(gelu_erf(ctx_, dz.get(), dz.get(), n));  // in place
  sync();
  EXPECT_LE(max_abs_diff(dy.download(), want_tanh), 1e-5 * max_abs(want_tanh));
  EXPECT_LE(max_abs_diff(dz.download(), want_erf), 1e-5 * max_abs(want_erf));
}

TEST_F(CudaTest, RopeTableMatchesRef) {
  for (int64_t hd : {2, 16, 72, 128}) {
    const int64_t n = 37, heads = 4, stride = heads * hd + hd * 2 + 3;  // fused QKV-like view
    const auto x = random_floats(static_cast<size_t>(n * stride), 5);
    const auto ang = random_floats(static_cast<size_t>(n * hd / 2), 6, -20.0f, 20.0f);
    std::vector<float> c(ang.size()), s(ang.size());
    for (size_t i = 0; i < ang.size(); ++i) {
      c[i] = std::cos(ang[i]);
      s[i] = std::sin(ang[i]);
    }
    std::vector<float> want = x;
    RopeTableArgs a;
    a.x = want.data();
    a.x_stride = stride;
    a.n_tokens = n;
    a.n_heads = heads;
    a.head_dim = hd;
    a.cos = c.data();
    a.sin = s.data();
    ref::rope_table(a);
    Dev<float> dx(x), dc(c), ds(s);
    a.x = dx.get();
    a.cos = dc.get();
    a.sin = ds.get();
    ASSERT_TRUE(rope_table(ctx_, a));
    sync();
    const auto got = dx.download();
    EXPECT_LE(max_abs_diff(got, want), 1e-6 * max_abs(want)) << "hd " << hd;
    for (int64_t t = 0; t < n; ++t) {  // the rest of each row is untouched
      for (int64_t i = heads * hd; i < stride; ++i) {
        ASSERT_EQ(got[t * stride + i], x[t * stride + i]) << "hd " << hd;
      }
    }
  }
  RopeTableArgs odd;
  odd.head_dim = 3;
  EXPECT_FALSE(rope_table(ctx_, odd));
}

struct AttnCase {
  std::vector<int32_t> seg;  // empty: one segment of `n`
  int64_t n, n_head, head_dim;
  bool fused;
};

TEST_F(CudaTest, DenseAttentionMatchesRef) {
  const std::vector<AttnCase> cases = {
      {{}, 37, 2, 16, true},
      {{0, 64, 128}, 128, 2, 16, true},             // two frames of 64: two key tiles each
      {{0, 5, 5, 70, 71, 203}, 203, 3, 72, false},  // empty and 1-token segments, odd bounds
      {{}, 1, 1, 8, false},
      {{0, 100, 200, 300}, 300, 16, 72, true},  // Qwen3-VL's heads
      {{0, 33, 97}, 97, 2, 128, true},
      {{0, 40}, 40, 1, 256, false},  // the largest head_dim (> 48 KiB of shared memory)
  };
  for (const AttnCase& c : cases) {
    const int64_t n = c.n, width = c.n_head * c.head_dim;
    const int64_t stride = c.fused ? 3 * width : width;
    const auto qkv = random_floats(static_cast<size_t>(n * 3 * width), 7, -1.5f, 1.5f);
    const size_t k_off = c.fused ? width : n * width, v_off = c.fused ? 2 * width : 2 * n * width;
    DenseAttentionArgs a;
    a.q = qkv.data();
    a.k = qkv.data() + k_off;
    a.v = qkv.data() + v_off;
    a.n_tokens = n;
    a.n_head = c.n_head;
    a.head_dim = c.head_dim;
    a.q_stride = stride;
    a.kv_stride = stride;
    a.out_stride = width + 5;
    a.seg_offsets = c.seg.empty() ? nullptr : c.seg.data();
    a.n_segments = c.seg.empty() ? 0 : static_cast<int64_t>(c.seg.size()) - 1;
    std::vector<float> want(static_cast<size_t>(n * (width + 5)), -7.0f);
    a.out = want.data();
    ASSERT_TRUE(ref::dense_attention(a));
    Dev<float> dqkv(qkv), dout(std::vector<float>(want.size(), -7.0f));
    Dev<int32_t> dseg(c.seg);
    a.q = dqkv.get();
    a.k = dqkv.get() + k_off;
    a.v = dqkv.get() + v_off;
    a.out = dout.get();
    a.seg_offsets = c.seg.empty() ? nullptr : dseg.get();
    ASSERT_TRUE(dense_attention(ctx_, a));
    sync();
    // Also checks that the gap after each output row (out_stride) stays untouched.
    EXPECT_LE(max_abs_diff(dout.download(), want), 1e-5 * max_abs(want))
        << "n " << n << " heads " << c.n_head << " hd " << c.head_dim;
  }
  DenseAttentionArgs too_wide;
  too_wide.n_tokens = 1;
  too_wide.n_head = 1;
  too_wide.head_dim = 512;
  EXPECT_FALSE(dense_attention(ctx_, too_wide));
}

}  // namespace
}  // namespace arc::kernels::cuda::test
