// Scalar IEEE half and bfloat16 conversions (round to nearest even), usable on any CPU: the
// reference code must not depend on F16C.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

#include "arc/kernels/fp16.h"

namespace arc::kernels::quant {

// One IEEE half implementation for the whole kernels tree (arc/kernels/fp16.h); these names
// stay for the quantizers and matmul kernels that use them.
inline float fp16_to_f32(uint16_t h) {
  return fp16_to_fp32(h);
}
inline uint16_t f32_to_fp16(float f) {
  return fp32_to_fp16(f);
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
