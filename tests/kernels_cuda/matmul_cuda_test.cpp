// cuda::matmul against ref::matmul for every weight format, on both paths (matvec for up to 8
// tokens, tensor cores above), odd row counts, strides and accumulation.
//
// Tolerances, per output element, from S = sum_i |w_i x_i| (computed on the host):
//  - float weights, matvec (F32 FMAs):          1e-5 * S
//  - quantized weights, matvec (int8 activations): sum_i |w_i| * amax(x block of i) / 254
//    (the exact worst case of rounding x to 8 bits) + 1e-5 * S
//  - tensor cores (x and w rounded to F16, F32 accumulation): 2e-3 * S
#include <algorithm>
#include <string>
#include <tuple>

#include "arc/kernels/matmul.h"
#include "arc/kernels/quant.h"
#include "cuda_test_util.h"

namespace arc::kernels::cuda::test {
namespace {

struct Case {
  DType type;
  int64_t n_in;
};

std::vector<Case> cases() {
  return {{DType::F32, 195},   {DType::F32, 256},  {DType::F16, 195},  {DType::F16, 264},
          {DType::BF16, 195},  {DType::BF16, 256}, {DType::Q8_0, 224}, {DType::Q4_0, 224},
          {DType::MXFP4, 224}, {DType::Q4_K, 512}, {DType::Q5_K, 768}, {DType::Q6_K, 512}};
}

class MatmulCuda : public CudaTest,
                   public ::testing::WithParamInterface<std::tuple<int, int64_t, bool>> {};

TEST_P(MatmulCuda, MatchesReference) {
  const auto [case_index, n_tokens, strided] = GetParam();
  const Case c = cases()[static_cast<size_t>(case_index)];
  const int64_t n_out = 67, n_in = c.n_in;
  const int64_t xs = strided ? n_in + 3 : n_in, ys = strided ? n_out + 5 : n_out;
  const size_t row_bytes = *dtype_row_bytes(c.type, static_cast<uint64_t>(n_in));
  const size_t w_row = strided ? row_bytes + 16 : row_bytes;  // padded rows

  // Weights: random floats quantized per row; w_deq is what the reference sees.
  std::vector<float> wf = random_floats(static_cast<size_t>(n_out * n_in), 11 + case_index);
  std::vector<uint8_t> wq(static_cast<size_t>(n_out) * w_row, 0);
  std::vector<float> w_deq(wf.size());
  for (int64_t o = 0; o < n_out; ++o) {
    ASSERT_TRUE(quantize_row(c.type, wf.data() + o * n_in, wq.data() + o * w_row, n_in));
    ASSERT_TRUE(dequantize_row(c.type, wq.data() + o * w_row, w_deq.data() + o * n_in, n_in));
  }
  std::vector<float> x = random_floats(static_cast<size_t>(n_tokens * xs), 7, -2.0f, 2.0f);
  std::vector<float> y0 = random_floats(static_cast<size_t>(n_tokens * ys), 5);

  MatmulArgs ra;
  ra.w = wq.data();
  ra.w_type = c.type;
  ra.n_out = n_out;
  ra.n_in = n_in;
  ra.w_row_bytes = w_row;
  ra.x = x.data();
  ra.n_tokens = n_tokens;
  ra.x_stride = xs;
  ra.y_stride = ys;
  ra.accumulate = strided;
  std::vector<float> y_ref = y0;
  ra.y = y_ref.data();
  ASSERT_TRUE(ref::matmul(ra));

  Dev<uint8_t> dw(wq);
  Dev<float> dx(x), dy(y0);
  MatmulArgs ga = ra;
  ga.w = dw.get();
  ga.x = dx.get();
  ga.y = dy.get();
  ASSERT_TRUE(matmul(ctx_, ga)) << dtype_name(c.type);
  sync();
  const std::vector<float> y = dy.download();

  const bool quant_matvec =
      n_tokens <= 8 && c.type != DType::F32 && c.type != DType::F16 && c.type != DType::BF16;
  for (int64_t t = 0; t < n_tokens; ++t) {
    for (int64_t o = 0; o < n_out; ++o) {
      double s = 0.0, qbound = 0.0;
      for (int64_t i = 0; i < n_in; ++i) {
        const double wv = std::fabs(w_deq[o * n_in + i]);
        s += wv * std::fabs(x[t * xs + i]);
        if (quant_matvec) {
          float amax = 0.0f;
          const int64_t b0 = i / 32 * 32;
          for (int64_t j = b0; j < b0 + 32; ++j) amax = std::max(amax, std::fabs(x[t * xs + j]));
          qbound += wv * amax / 254.0;
        }
      }
      double tol = n_tokens > 8 ? 2e-3 * s : (quant_matvec ? qbound + 1e-5 * s : 1e-5 * s);
      tol += 1e-6;
      const size_t at = static_cast<size_t>(t * ys + o);
      ASSERT_NEAR(y[at], y_ref[at], tol) << dtype_name(c.type) << " n_in " << n_in << " tokens "
                                         << n_tokens << " t " << t << " o " << o;
    }
  }
  // Padding columns of y (strided case) stay untouched.
  if (strided) {
    for (int64_t t = 0; t < n_tokens; ++t)
      for (int64_t o = n_out; o < ys; ++o) ASSERT_EQ(y[t * ys + o], y0[t * ys + o]);
  }
}

INSTANTIATE_TEST_SUITE_P(AllFormats, MatmulCuda,
                         ::testing::Combine(::testing::Range(0, static_cast<int>(cases().size())),
                                            ::testing::Values<int64_t>(1, 3, 8, 9, 70),
                                            ::testing::Bool()),
                         [](const auto& info) {
                           const Case c = cases()[static_cast<size_t>(std::get<0>(info.param))];
                           return std::string(dtype_name(c.type)) + "_" + std::to_string(c.n_in) +
                                  "_t" + std::to_string(std::get<1>(info.param)) +
                                  (std::get<2>(info.param) ? "_strided" : "");
                         });

// Unsupported formats and misaligned weights are refused before anything is enqueued, so this
// runs without a device (the pointers are never dereferenced).
TEST(CudaArgs, MatmulRefusesUnsupported) {
  alignas(16) static float buf[4096];
  const Context ctx;
  MatmulArgs a;
  a.w = buf;
  a.w_type = DType::Q2_K;
  a.n_out = 4;
  a.n_in = 256;
  a.x = buf;
  a.y = buf;
  EXPECT_FALSE(matmul(ctx, a));
  a.n_tokens = 100;  // tensor-core path
  EXPECT_FALSE(matmul(ctx, a));
  a.w_type = DType::Q4_K;
  a.w = reinterpret_cast<const uint8_t*>(buf) + 1;  // K-quant rows need 4-byte alignment
  EXPECT_FALSE(matmul(ctx, a));
  a.w = buf;
  a.n_in = 100;  // not a multiple of the 256-element block
  EXPECT_FALSE(matmul(ctx, a));
}

}  // namespace
}  // namespace arc::kernels::cuda::test
