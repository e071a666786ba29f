// Stand-in for cuda_fp16.h under ARC_CUDA_EMULATION: __half / __half2 as their bits, with the
// conversions the kernels use (round to nearest even, bit-exact with the device's cvt.rn.f16.f32).
#pragma once

#include <cstdint>

#include "arc/kernels/fp16.h"
#include "cuda_runtime.h"

struct __half {
  uint16_t x;
  __half() = default;
  explicit constexpr __half(uint16_t bits, int /*raw tag*/) : x(bits) {}
  __half(float f) : x(arc::kernels::fp32_to_fp16(f)) {}             // NOLINT: implicit, as CUDA's
  operator float() const { return arc::kernels::fp16_to_fp32(x); }  // NOLINT
};
struct alignas(4) __half2 {
  __half x, y;
};
using half = __half;
using half2 = __half2;

inline __half __float2half_rn(float f) {
  return __half(arc::kernels::fp32_to_fp16(f), 0);
}
inline __half __float2half(float f) {
  return __float2half_rn(f);
}
inline float __half2float(__half h) {
  return arc::kernels::fp16_to_fp32(h.x);
}
inline unsigned short __half_as_ushort(__half h) {
  return h.x;
}
inline __half __ushort_as_half(unsigned short u) {
  return __half(u, 0);
}
// .x holds lo (the lower 16 bits of the 32-bit register), .y hi.
inline __half2 __floats2half2_rn(float lo, float hi) {
  return __half2{__float2half_rn(lo), __float2half_rn(hi)};
}
inline __half2 __halves2half2(__half lo, __half hi) {
  return __half2{lo, hi};
}
inline float __low2float(__half2 h) {
  return __half2float(h.x);
}
inline float __high2float(__half2 h) {
  return __half2float(h.y);
}
