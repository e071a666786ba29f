// cpu::quantize_act (the activation quantizer matmul uses, SIMD where the level has one) must give
// the same bytes as the reference quantize_row for Q8_K and Q8_0 at every level: normal data,
// tiny and huge magnitudes, all-zero blocks, values on the rounding half-way points, NaN, +-inf.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "../../kernels/cpu/matmul_kernels.h"  // internal to arc_kernels
#include "arc/kernels/quant.h"

namespace arc::kernels {
namespace {

TEST(QuantAct, ByteIdenticalToQuantizeRowEveryLevel) {
  std::mt19937 rng(5);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  const int64_t n = 256 * 6;
  std::vector<float> x(n);
  for (int rep = 0; rep < 60; ++rep) {
    const float mag = rep % 7 == 0 ? 1e-30f : rep % 5 == 0 ? 1e30f : 1.0f;
    for (auto& f : x) f = nd(rng) * mag;
    std::fill(x.begin(), x.begin() + 256, 0.0f);  // an all-zero block
    // Values whose scaled versions land on and next to k + 0.5 (amax 127 -> scale 1).
    for (int j = 256; j < 512; ++j) {
      const float h = 0.5f * static_cast<float>(j % 255 - 127);
      x[j] = j % 3 == 0 ? h : std::nextafter(h, j % 3 == 1 ? 1e9f : -1e9f);
    }
    x[300] = 127.0f;
    x[600] = std::numeric_limits<float>::quiet_NaN();
    if (rep % 3 == 0) x[900] = std::numeric_limits<float>::infinity();
    if (rep % 3 == 1) x[1300] = -std::numeric_limits<float>::infinity();
    for (DType at : {DType::Q8_K, DType::Q8_0}) {
      const size_t bytes = *dtype_row_bytes(at, n);
      std::vector<uint8_t> want(bytes);
      ASSERT_TRUE(quantize_row(at, x.data(), want.data(), n));
      for (cpu::IsaLevel level : cpu::available_isas()) {
        std::vector<uint8_t> got(bytes + 1, 0xAB);
        cpu::quantize_act(level, at, x.data(), got.data() + 1, n);  // misaligned output
        ASSERT_EQ(0, std::memcmp(got.data() + 1, want.data(), bytes))
            << cpu::isa_name(level) << " " << dtype_name(at) << " rep " << rep;
        ASSERT_EQ(got[0], 0xAB);
      }
    }
  }
}

}  // namespace
}  // namespace arc::kernels
