// matmul at every dispatch level on weight blocks of random bytes (every bit pattern of the packed
// scales, mins, high bits and int8 values, including ones a quantizer rarely or never writes:
// 6-bit scales of 63, Q6_K scales of -128, Q8_0 values of -128), against ref::matmul. The
// activations are already on the 8-bit grid, so kernels that quantize them reproduce them exactly
// and must match the double reference to float rounding: an unpacking slip in any SIMD kernel
// (e.g. the vectorised Q4_K scale unpack of the VNNI level) shows as a large error.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "arc/kernels/cpu_dispatch.h"
#include "arc/kernels/fp16.h"
#include "arc/kernels/matmul.h"
#include "kernels/kernel_test_util.h"

namespace arc::kernels {
namespace {

using cpu::IsaLevel;
using testing::random_floats;

struct Format {
  DType type;
  DType act;                         // activation format the integer kernels use
  size_t block_bytes;                // bytes per block
  std::vector<size_t> fp16_offsets;  // fp16 scale fields within a block
};

const Format kFormats[] = {
    {DType::Q8_0, DType::Q8_0, 34, {0}},     {DType::Q4_0, DType::Q8_0, 18, {0}},
    {DType::Q4_K, DType::Q8_K, 144, {0, 2}}, {DType::Q5_K, DType::Q8_K, 176, {0, 2}},
    {DType::Q6_K, DType::Q8_K, 210, {208}},
};

void check_random_blocks(const Format& f, int64_t n_in) {
  SCOPED_TRACE("n_in=" + std::to_string(n_in));
  const int64_t n_out = 11, n_tok = 5;
  {
    // Random bytes, then finite fp16 scales (random bytes there could be inf / NaN).
    const size_t row_bytes = *dtype_row_bytes(f.type, n_in);
    std::vector<uint8_t> wbuf(1 + row_bytes * n_out);
    uint8_t* w = wbuf.data() + 1;  // misaligned rows
    std::mt19937 rng(static_cast<uint32_t>(f.block_bytes));
    std::uniform_int_distribution<int> byte(0, 255);
    std::uniform_real_distribution<float> scale(0.001f, 0.02f);
    for (auto& v : wbuf) v = static_cast<uint8_t>(byte(rng));
    for (size_t blk = 0; blk < row_bytes * n_out / f.block_bytes; ++blk) {
      for (size_t off : f.fp16_offsets) {
        const uint16_t h = fp32_to_fp16(scale(rng));
        std::memcpy(w + blk * f.block_bytes + off, &h, 2);
      }
    }
    // Activations on the 8-bit grid of f.act.
    auto x = random_floats(n_tok * n_in, 7);
    std::vector<uint8_t> q(*dtype_row_bytes(f.act, n_in));
    for (int64_t t = 0; t < n_tok; ++t) {
      quantize_row(f.act, &x[t * n_in], q.data(), n_in);
      dequantize_row(f.act, q.data(), &x[t * n_in], n_in);
    }
    std::vector<float> wd(n_out * n_in);
    for (int64_t o = 0; o < n_out; ++o) {
      dequantize_row(f.type, w + o * row_bytes, &wd[o * n_in], n_in);
    }
    MatmulArgs a;
    a.w = w;
    a.w_type = f.type;
    a.n_out = n_out;
    a.n_in = n_in;
    a.x = x.data();
    a.n_tokens = n_tok;
    std::vector<float> y_ref(n_tok * n_out);
    a.y = y_ref.data();
    ASSERT_TRUE(ref::matmul(a));
    for (IsaLevel level : cpu::available_isas()) {
      SCOPED_TRACE(std::string(cpu::isa_name(level)) + " " + std::string(dtype_name(f.type)));
      for (int64_t tokens : {int64_t{1}, n_tok}) {  // decode path and prefill tiles
        std::vector<float> y(n_tok * n_out, -1.0f);
        a.n_tokens = tokens;
        a.y = y.data();
        ASSERT_TRUE(cpu::matmul_at(level, a, nullptr));
        for (int64_t i = 0; i < tokens * n_out; ++i) {
          const int64_t o = i % n_out, t = i / n_out;
          double abs_dot = 0;
          for (int64_t k = 0; k < n_in; ++k)
            abs_dot += std::fabs(wd[o * n_in + k] * x[t * n_in + k]);
          ASSERT_NEAR(y[i], y_ref[i], 2e-6 * abs_dot + 1e-6) << "tokens=" << tokens << " i=" << i;
        }
      }
    }
  }
}

TEST(MatmulBlocks, RandomBlockBytesEveryLevel) {
  for (const Format& f : kFormats) {
    check_random_blocks(f, 768);
    if (f.act == DType::Q8_0) {
      // Odd block count, odd pair count, and more values than the VNNI decode path keeps on the
      // stack (it prepares the activations on the heap then).
      for (int64_t n_in : {96, 192, 9216}) check_random_blocks(f, n_in);
    }
  }
}

}  // namespace
}  // namespace arc::kernels
