// Scalar IEEE half and bfloat16 conversions (round to nearest even), usable on any CPU: the
// reference code must not depend on F16C.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace arc::kernels::quant {

inline float fp16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    // Zero or subnormal: mant * 2^-24, exact in float.
    const float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  uint32_t bits;
  if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 112u) << 23) | (mant << 13);
  }
  return std::bit_cast<float>(bits);
}

inline uint16_t f32_to_fp16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  uint32_t a = x & 0x7fffffffu;
  if (a >= 0x7f800000u) return sign | 0x7c00u | (a > 0x7f800000u ? 0x200u : 0u);  // inf / NaN
  if (a >= 0x477ff000u) return sign | 0x7c00u;  // >= 65520 rounds to infinity
  if (a < 0x38800000u) {
    // Below the smallest normal half (2^-14): subnormal result round(v * 2^24), ties to even.
    const float v = std::bit_cast<float>(a);
    return sign | static_cast<uint16_t>(std::nearbyint(v * 16777216.0f));
  }
  a += 0xc8000fffu + ((a >> 13) & 1u);  // rebias exponent by -112 and round to nearest even
  return sign | static_cast<uint16_t>(a >> 13);
}

inline float bf16_to_f32(uint16_t h) {
  return std::bit_cast<float>(static_cast<uint32_t>(h) << 16);
}

inline uint16_t f32_to_bf16(float f) {
  const uint32_t u = std::bit_cast<uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 64u);  // quiet NaN
  return static_cast<uint16_t>((u + (0x7fffu + ((u >> 16) & 1u))) >> 16);
}

// MXFP4 block scale: E8M0 exponent e stands for 2^(e-127). ggml stores the E2M1 values doubled
// (kMxfp4Values) and so multiplies by half the scale, 2^(e-128); e = 0 gives the subnormal 2^-128.
inline float e8m0_to_f32_half(uint8_t e) {
  // Float exponent field e - 1 for e >= 2; below that the result is a float subnormal.
  const uint32_t bits = e >= 2 ? static_cast<uint32_t>(e - 1) << 23 : 0x00200000u << e;
  return std::bit_cast<float>(bits);
}

}  // namespace arc::kernels::quant
