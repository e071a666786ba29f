// Row-wise and elementwise CUDA ops, RoPE, get_rows and the device queries against the scalar
// references (kernels/ref) or, where no ref exists, the loop written out here.
// Tolerances: F32 math on both sides -> 1e-5 relative (expf/rsqrtf differ from double by a few
// ulp); RoPE -> 2e-5 absolute on |x| <= 1 (angles in double on both, rotation in F32);
// get_rows -> exact (same dequantization formula, F32 products).
#include <algorithm>
#include <cmath>

#include "arc/kernels/ops.h"
#include "arc/kernels/quant.h"
#include "cuda_test_util.h"

namespace arc::kernels::cuda::test {
namespace {

// Runs without a device: must answer, never abort.
TEST(CudaDevice, CountAndInfoNeverAbort) {
  const int n = device_count();
  EXPECT_GE(n, 0);
  DeviceInfo info;
  EXPECT_FALSE(device_info(-1, &info));
  EXPECT_FALSE(device_info(n, &info));
  if (n > 0) {
    ASSERT_TRUE(device_info(0, &info));
    EXPECT_GT(info.total_bytes, 0u);
    EXPECT_GE(info.sm_major, 7);
    EXPECT_GT(std::string(info.name).size(), 0u);
  }
}

// Host-only: scratch grows with every dimension that sizes it.
TEST(CudaScratch, GrowsWithShape) {
  ScratchShape s;
  s.max_tokens = 1;
  s.max_dim = 2048;
  const size_t base = scratch_bytes(s);
  EXPECT_GE(base, size_t{2048});  // int8 copy of one activation row at least
  s.max_tokens = 512;
  s.n_expert = 64;
  s.k = 8;
  const size_t moe = scratch_bytes(s);
  EXPECT_GT(moe, base);
  s.n_head = 32;
  s.head_dim = 128;
  s.max_context = 32768;
  EXPECT_GE(scratch_bytes(s), moe);
  s.n_vocab = 151936;
  EXPECT_GE(scratch_bytes(s), moe);
}

TEST_F(CudaTest, RmsNormMatchesRef) {
  for (int64_t d : {1, 67, 1000, 4099}) {
    const int64_t rows = 5;
    const auto x = random_floats(static_cast<size_t>(rows * d), 1, -3.0f, 3.0f);
    const auto w = random_floats(static_cast<size_t>(d), 2);
    for (bool with_w : {true, false}) {
      std::vector<float> ref(x.size());
      ref::rms_norm(x.data(), with_w ? w.data() : nullptr, ref.data(), rows, d, 1e-6f);
      Dev<float> dx(x), dw(w), dy(x.size());
      ASSERT_TRUE(rms_norm(ctx_, dx.get(), with_w ? dw.get() : nullptr, dy.get(), rows, d, 1e-6f));
      // In place (y aliases x).
      ASSERT_TRUE(rms_norm(ctx_, dx.get(), with_w ? dw.get() : nullptr, dx.get(), rows, d, 1e-6f));
      sync();
      const auto y = dy.download(), yi = dx.download();
      EXPECT_LE(max_abs_diff(y, ref), 1e-5 * max_abs(ref)) << "d " << d;
      EXPECT_LE(max_abs_diff(yi, ref), 1e-5 * max_abs(ref)) << "d " << d << " in place";
    }
  }
}

// The two-pass norm of rows split across ranks (minimax-m2's full-width q/k norm).
TEST_F(CudaTest, SumSquaresAndRmsNormSumsqMatchRef) {
  for (int64_t d : {1, 67, 1000, 4099}) {
    const int64_t rows = 5, n_total = 2 * d + 3;
    const auto x = random_floats(static_cast<size_t>(rows * d), 3, -3.0f, 3.0f);
    const auto w = random_floats(static_cast<size_t>(d), 4);
    std::vector<float> ss_ref(rows);
    ref::sum_squares(x.data(), ss_ref.data(), rows, d);
    Dev<float> dx(x), dw(w), dss(static_cast<size_t>(rows)), dy(x.size());
    ASSERT_TRUE(sum_squares(ctx_, dx.get(), dss.get(), rows, d));
    sync();
    const auto ss = dss.download();
    EXPECT_LE(max_abs_diff(ss, ss_ref), 1e-5 * max_abs(ss_ref)) << "d " << d;
    for (bool with_w : {true, false}) {
      std::vector<float> ref(x.size());
      ref::rms_norm_sumsq(x.data(), with_w ? w.data() : nullptr, ss_ref.data(), ref.data(), rows, d,
                          n_total, 1e-6f);
      Dev<float> dss_ref(ss_ref), dxi(x);
      ASSERT_TRUE(rms_norm_sumsq(ctx_, dx.get(), with_w ? dw.get() : nullptr, dss_ref.get(),
                                 dy.get(), rows, d, n_total, 1e-6f));
      ASSERT_TRUE(rms_norm_sumsq(ctx_, dxi.get(), with_w ? dw.get() : nullptr, dss_ref.get(),
                                 dxi.get(), rows, d, n_total, 1e-6f));  // in place
      sync();
      const auto y = dy.download(), yi = dxi.download();
      EXPECT_LE(max_abs_diff(y, ref), 1e-5 * max_abs(ref)) << "d " << d;
      EXPECT_LE(max_abs_diff(yi, ref), 1e-5 * max_abs(ref)) << "d " << d << " in place";
    }
  }
  EXPECT_FALSE(rms_norm_sumsq(ctx_, nullptr, nullptr, nullptr, nullptr, 1, 4, 0, 1e-6f));
}

TEST_F(CudaTest, ElementwiseMatchRef) {
  const int64_t rows = 7, d = 131, n = rows * d;
  const auto a = random_floats(static_cast<size_t>(n), 3, -4.0f, 4.0f);
  const auto b = random_floats(static_cast<size_t>(n), 4, -4.0f, 4.0f);
  const auto bias = random_floats(static_cast<size_t>(d), 5);
  const auto g = random_floats(static_cast<size_t>(rows), 6, -5.0f, 5.0f);
  Dev<float> da(a), db(b), dbias(bias), dg(g), dy(static_cast<size_t>(n)), dx(a), dz(a);

  ASSERT_TRUE(add(ctx_, da.get(), db.get(), dy.get(), n));
  sync();
  std::vector<float> ref(static_cast<size_t>(n));
  ref::add(a.data(), b.data(), ref.data(), n);
  EXPECT_EQ(max_abs_diff(dy.download(), ref), 0.0);

  ASSERT_TRUE(swiglu(ctx_, da.get(), db.get(), dy.get(), n));
  sync();
  ref::swiglu(a.data(), b.data(), ref.data(), n);
  EXPECT_LE(max_abs_diff(dy.download(), ref), 1e-5 * max_abs(ref));

  ASSERT_TRUE(add_bias(ctx_, dx.get(), dbias.get(), rows, d));
  sync();
  for (int64_t i = 0; i < n; ++i) ref[i] = a[i] + bias[i % d];
  EXPECT_EQ(max_abs_diff(dx.download(), ref), 0.0);

  ASSERT_TRUE(add_sigmoid_gated(ctx_, dz.get(), db.get(), dg.get(), rows, d));
  sync();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < d; ++i)
      ref[r * d + i] =
          static_cast<float>(a[r * d + i] + b[r * d + i] / (1.0 + std::exp(-double{g[r]})));
  EXPECT_LE(max_abs_diff(dz.download(), ref), 1e-5 * max_abs(ref));

  const std::vector<int32_t> rows_sel = {6, 0, 3, 3, 5};
  Dev<int32_t> dr(rows_sel);
  Dev<float> dout(rows_sel.size() * d);
  ASSERT_TRUE(
      gather(ctx_, da.get(), dr.get(), static_cast<int64_t>(rows_sel.size()), d, dout.get()));
  sync();
  std::vector<float> gref;
  for (int32_t r : rows_sel) gref.insert(gref.end(), a.begin() + r * d, a.begin() + (r + 1) * d);
  EXPECT_EQ(max_abs_diff(dout.download(), gref), 0.0);
}

struct RopeCase {
  RopeLayout layout;
  int64_t head_dim, rot_dim;
  float freq_scale;
  bool factors;
  float ext_factor;
};

TEST_F(CudaTest, RopeMatchesRef) {
  const RopeCase cases[] = {
      {RopeLayout::kSplitHalf, 128, 0, 1.0f, false, 0.0f},
      {RopeLayout::kInterleaved, 64, 0, 1.0f, false, 0.0f},
      {RopeLayout::kSplitHalf, 80, 40, 0.25f, false, 0.0f},   // partial rotation, linear
      {RopeLayout::kInterleaved, 128, 0, 1.0f, true, 0.0f},   // Llama 3 frequency factors
      {RopeLayout::kSplitHalf, 128, 0, 0.125f, false, 1.0f},  // YaRN
      {RopeLayout::kInterleaved, 256, 0, 0.25f, true, 1.0f},
  };
  for (const RopeCase& c : cases) {
    const int64_t n_tokens = 9, n_heads = 3;
    const int64_t rot = c.rot_dim ? c.rot_dim : c.head_dim;
    auto x = random_floats(static_cast<size_t>(n_tokens * n_heads * c.head_dim), 8);
    std::vector<int32_t> pos = {0, 1, 2, 17, 100, 511, 4095, 9000, 32767};
    const auto factors = random_floats(static_cast<size_t>(rot / 2), 9, 1.0f, 8.0f);
    RopeArgs a;
    a.n_tokens = n_tokens;
    a.n_heads = n_heads;
    a.head_dim = c.head_dim;
    a.rot_dim = c.rot_dim;
    a.layout = c.layout;
    a.theta_base = 500000.0f;
    a.freq_scale = c.freq_scale;
    a.ext_factor = c.ext_factor;
    a.attn_factor = 1.0f;
    a.n_ctx_orig = 8192;
    Dev<float> dx(x), dfac(factors);
    Dev<int32_t> dpos(pos);
    RopeArgs ga = a;
    ga.x = dx.get();
    ga.pos = dpos.get();
    ga.freq_factors = c.factors ? dfac.get() : nullptr;
    ASSERT_TRUE(rope(ctx_, ga));
    sync();
    a.x = x.data();
    a.pos = pos.data();
    a.freq_factors = c.factors ? factors.data() : nullptr;
    ref::rope(a);
    EXPECT_LE(max_abs_diff(dx.download(), x), 2e-5)
        << "layout " << static_cast<int>(c.layout) << " head_dim " << c.head_dim;
  }
}

TEST_F(CudaTest, GetRowsEveryFormat) {
  const DType types[] = {DType::F32,  DType::F16,  DType::BF16, DType::Q8_0, DType::Q4_0,
                         DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::MXFP4};
  for (DType t : types) {
    const int64_t block = dtype_info(t)->block_elems;
    const int64_t d = block == 1 ? 101 : (block == 32 ? 96 : 512);
    const int64_t n_rows = 13;
    const size_t rb = *dtype_row_bytes(t, static_cast<uint64_t>(d));
    const auto f = random_floats(static_cast<size_t>(n_rows * d), 10);
    std::vector<uint8_t> table(rb * n_rows);
    for (int64_t r = 0; r < n_rows; ++r)
      ASSERT_TRUE(quantize_row(t, f.data() + r * d, table.data() + r * rb, d));
    const std::vector<int32_t> ids = {12, 0, 5, 5, 7, 1, 11};
    std::vector<float> ref(ids.size() * d);
    ASSERT_TRUE(kernels::get_rows(t, table.data(), n_rows, d, ids.data(),
                                  static_cast<int64_t>(ids.size()), ref.data()));
    Dev<uint8_t> dt(table);
    Dev<int32_t> di(ids);
    Dev<float> dout(ref.size());
    ASSERT_TRUE(get_rows(ctx_, t, dt.get(), n_rows, d, di.get(), static_cast<int64_t>(ids.size()),
                         dout.get()));
    sync();
    EXPECT_LE(max_abs_diff(dout.download(), ref), 1e-6 * max_abs(ref)) << dtype_name(t);
  }
}

}  // namespace
}  // namespace arc::kernels::cuda::test
