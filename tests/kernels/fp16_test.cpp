// fp16 <-> fp32 conversions against the compiler's own _Float16 arithmetic (software conversions
// in libgcc, round-to-nearest-even) and against hand-written bit patterns.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "arc/kernels/fp16.h"

using arc::kernels::f32_bits;
using arc::kernels::f32_from_bits;
using arc::kernels::fp16_to_fp32;
using arc::kernels::fp32_to_fp16;

TEST(Fp16, KnownBitPatterns) {
  EXPECT_EQ(fp32_to_fp16(1.0f), 0x3C00);
  EXPECT_EQ(fp32_to_fp16(-2.0f), 0xC000);
  EXPECT_EQ(fp32_to_fp16(65504.0f), 0x7BFF);               // largest finite
  EXPECT_EQ(fp32_to_fp16(65519.99f), 0x7BFF);              // just below the rounding midpoint
  EXPECT_EQ(fp32_to_fp16(65520.0f), 0x7C00);               // midpoint rounds to even: infinity
  EXPECT_EQ(fp32_to_fp16(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(fp32_to_fp16(std::ldexp(1.0f, -25)), 0x0000);  // tie to even: zero
  EXPECT_EQ(fp32_to_fp16(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(fp32_to_fp16(std::ldexp(3.0f, -25)), 0x0002);             // 1.5 units: tie to even (2)
  EXPECT_EQ(fp32_to_fp16(1.0f + std::ldexp(1.0f, -11)), 0x3C00);      // tie: stays even
  EXPECT_EQ(fp32_to_fp16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);  // tie: up to even
  EXPECT_EQ(fp32_to_fp16(-0.0f), 0x8000);
  EXPECT_EQ(fp32_to_fp16(INFINITY), 0x7C00);
  EXPECT_EQ(fp32_to_fp16(-INFINITY), 0xFC00);
  EXPECT_EQ(fp16_to_fp32(0x3555), 0.333251953125f);
  EXPECT_EQ(fp16_to_fp32(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(fp16_to_fp32(0x03FF), std::ldexp(1023.0f, -24));
  EXPECT_TRUE(std::isnan(fp16_to_fp32(0x7E00)));
  EXPECT_TRUE(std::isnan(fp16_to_fp32(fp32_to_fp16(NAN))));
}

TEST(Fp16, EveryHalfRoundTrips) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = fp16_to_fp32(static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
    ASSERT_EQ(fp32_to_fp16(f), h) << std::hex << h;
  }
}

// The compiler's half type: on aarch64 GCC offers ARM's __fp16 (IEEE layout; conversions are FCVT
// instructions, round-to-nearest-even) but no _Float16 in C++; elsewhere _Float16 when available.
#if defined(__aarch64__)
#define ARC_HAVE_COMPILER_HALF 1
using CompilerHalf = __fp16;
#elif defined(__FLT16_MAX__)
#define ARC_HAVE_COMPILER_HALF 1
using CompilerHalf = _Float16;
#endif

#if defined(ARC_HAVE_COMPILER_HALF)
TEST(Fp16, MatchesCompilerFloat16) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    CompilerHalf v;
    const uint16_t hb = static_cast<uint16_t>(h);
    std::memcpy(&v, &hb, 2);
    const float f = static_cast<float>(v);
    if (std::isnan(f)) continue;
    ASSERT_EQ(f32_bits(fp16_to_fp32(hb)), f32_bits(f)) << std::hex << h;
  }
  // Random floats over the whole range, plus every midpoint neighbourhood near the edges.
  std::mt19937 rng(7);
  for (int i = 0; i < 200000; ++i) {
    const float f = f32_from_bits(static_cast<uint32_t>(rng()));
    if (std::isnan(f)) continue;
    const CompilerHalf v = static_cast<CompilerHalf>(f);
    uint16_t want;
    std::memcpy(&want, &v, 2);
    ASSERT_EQ(fp32_to_fp16(f), want) << f;
  }
  for (uint32_t bits = 0x33000000u - 4096; bits < 0x38800000u + 4096; bits += 331) {
    const float f = f32_from_bits(bits);
    const CompilerHalf v = static_cast<CompilerHalf>(f);
    uint16_t want;
    std::memcpy(&want, &v, 2);
    ASSERT_EQ(fp32_to_fp16(f), want) << std::hex << bits;
  }
}
#endif
