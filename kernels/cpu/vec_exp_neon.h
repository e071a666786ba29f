// Vector e^x for the NEON variants (Cephes-style: range reduction by ln 2, degree-7 polynomial).
// The anonymous namespace keeps this copy private to each translation unit.
#pragma once

#include <arm_neon.h>

#include <cmath>

namespace arc::kernels::detail {
namespace {

// e^x, about 2 ulp over the float range; exactly 0 below ln(2^-126) and +inf above ln(FLT_MAX).
inline float32x4_t exp_neon(float32x4_t x) {
  const float32x4_t hi = vdupq_n_f32(88.7228391f);
  const float32x4_t lo = vdupq_n_f32(-87.3365447f);
  const uint32x4_t over = vcgtq_f32(x, hi);
  const uint32x4_t under = vcltq_f32(x, lo);
  x = vminq_f32(vmaxq_f32(x, lo), hi);
  float32x4_t fx = vrndnq_f32(vmulq_n_f32(x, 1.44269504088896341f));
  fx = vminq_f32(fx, vdupq_n_f32(127.0f));
  float32x4_t r = vfmsq_f32(x, fx, vdupq_n_f32(0.693359375f));
  r = vfmsq_f32(r, fx, vdupq_n_f32(-2.12194440e-4f));
  float32x4_t p = vdupq_n_f32(1.9875691500e-4f);
  p = vfmaq_f32(vdupq_n_f32(1.3981999507e-3f), p, r);
  p = vfmaq_f32(vdupq_n_f32(8.3334519073e-3f), p, r);
  p = vfmaq_f32(vdupq_n_f32(4.1665795894e-2f), p, r);
  p = vfmaq_f32(vdupq_n_f32(1.6666665459e-1f), p, r);
  p = vfmaq_f32(vdupq_n_f32(5.0000001201e-1f), p, r);
  p = vfmaq_f32(vaddq_f32(r, vdupq_n_f32(1.0f)), p, vmulq_f32(r, r));
  const int32x4_t e = vshlq_n_s32(vaddq_s32(vcvtq_s32_f32(fx), vdupq_n_s32(127)), 23);
  float32x4_t y = vmulq_f32(p, vreinterpretq_f32_s32(e));
  y = vbslq_f32(over, vdupq_n_f32(INFINITY), y);
  return vbslq_f32(under, vdupq_n_f32(0.0f), y);
}

}  // namespace
}  // namespace arc::kernels::detail
