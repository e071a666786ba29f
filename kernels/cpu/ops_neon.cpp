// NEON (aarch64) variant of the elementwise and row-wise ops. Tails are staged through a small
// stack buffer so they go through the same vector arithmetic as the body.
#include <arm_neon.h>

#include <cmath>
#include <cstring>

#include "cpu/ops_variants.h"
#include "cpu/vec_exp_neon.h"

namespace arc::kernels::neon {
namespace {

constexpr int64_t W = 4;

float32x4_t load_tail(const float* p, int64_t left) {
  float buf[W] = {0.0f, 0.0f, 0.0f, 0.0f};
  std::memcpy(buf, p, static_cast<size_t>(left) * sizeof(float));
  return vld1q_f32(buf);
}
void store_tail(float* p, int64_t left, float32x4_t v) {
  float buf[W];
  vst1q_f32(buf, v);
  std::memcpy(p, buf, static_cast<size_t>(left) * sizeof(float));
}

float32x4_t silu_ps(float32x4_t x) {
  return vdivq_f32(x, vaddq_f32(vdupq_n_f32(1.0f), detail::exp_neon(vnegq_f32(x))));
}

// 0.5 v (1 + tanh(z)) == v * sigmoid(2 z), z = sqrt(2/pi) (v + 0.044715 v^3)
float32x4_t gelu_ps(float32x4_t v) {
  const float32x4_t inner = vfmaq_f32(v, vmulq_n_f32(v, 0.044715f), vmulq_f32(v, v));
  const float32x4_t e = detail::exp_neon(vmulq_n_f32(inner, -2.0f * 0.7978845608028654f));
  return vdivq_f32(v, vaddq_f32(vdupq_n_f32(1.0f), e));
}

// Applies f to [n] floats in vectors of 4, the tail staged.
template <class F>
void unary(const float* x, float* y, int64_t n, F f) {
  int64_t i = 0;
  for (; i + W <= n; i += W) vst1q_f32(y + i, f(vld1q_f32(x + i)));
  if (i < n) store_tail(y + i, n - i, f(load_tail(x + i, n - i)));
}
template <class F>
void binary(const float* a, const float* b, float* y, int64_t n, F f) {
  int64_t i = 0;
  for (; i + W <= n; i += W) vst1q_f32(y + i, f(vld1q_f32(a + i), vld1q_f32(b + i)));
  if (i < n) store_tail(y + i, n - i, f(load_tail(a + i, n - i), load_tail(b + i, n - i)));
}

void rms_norm(const float* x, const float* w, float* y, int64_t n_rows, int64_t d, float eps) {
  for (int64_t r = 0; r < n_rows; ++r) {
    const float* xr = x + r * d;  // [d]
    float* yr = y + r * d;        // [d]
    float32x4_t s0 = vdupq_n_f32(0.0f), s1 = vdupq_n_f32(0.0f);
    int64_t i = 0;
    for (; i + 2 * W <= d; i += 2 * W) {
      const float32x4_t a = vld1q_f32(xr + i);
      const float32x4_t b = vld1q_f32(xr + i + W);
      s0 = vfmaq_f32(s0, a, a);
      s1 = vfmaq_f32(s1, b, b);
    }
    for (; i < d; i += W) {
      const float32x4_t a = d - i >= W ? vld1q_f32(xr + i) : load_tail(xr + i, d - i);
      s0 = vfmaq_f32(s0, a, a);
    }
    const float ss = vaddvq_f32(vaddq_f32(s0, s1));
    const float inv = 1.0f / std::sqrt(ss / static_cast<float>(d) + eps);
    if (w == nullptr) {
      unary(xr, yr, d, [inv](float32x4_t v) { return vmulq_n_f32(v, inv); });
    } else {
      binary(xr, w, yr, d,
             [inv](float32x4_t v, float32x4_t g) { return vmulq_f32(vmulq_n_f32(v, inv), g); });
    }
  }
}

void softmax_rows(float* x, int64_t n_rows, int64_t n) {
  for (int64_t r = 0; r < n_rows; ++r) {
    float* xr = x + r * n;  // [n]
    float m = -INFINITY;
    int64_t i = 0;
    float32x4_t mx = vdupq_n_f32(-INFINITY);
    for (; i + W <= n; i += W) mx = vmaxq_f32(mx, vld1q_f32(xr + i));
    m = vmaxvq_f32(mx);
    for (; i < n; ++i) m = std::fmax(m, xr[i]);
    if (m == -INFINITY) {
      std::memset(xr, 0, static_cast<size_t>(n) * sizeof(float));
      continue;
    }
    const float32x4_t vm = vdupq_n_f32(m);
    float32x4_t sum = vdupq_n_f32(0.0f);
    for (i = 0; i + W <= n; i += W) {
      const float32x4_t e = detail::exp_neon(vsubq_f32(vld1q_f32(xr + i), vm));
      sum = vaddq_f32(sum, e);
      vst1q_f32(xr + i, e);
    }
    float total = vaddvq_f32(sum);
    if (i < n) {
      // Inactive lanes hold -inf - m: exp gives 0 there, so they add nothing.
      float buf[W] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
      std::memcpy(buf, xr + i, static_cast<size_t>(n - i) * sizeof(float));
      const float32x4_t e = detail::exp_neon(vsubq_f32(vld1q_f32(buf), vm));
      total += vaddvq_f32(e);
      store_tail(xr + i, n - i, e);
    }
    const float inv = 1.0f / total;
    unary(xr, xr, n, [inv](float32x4_t v) { return vmulq_n_f32(v, inv); });
  }
}

void silu(const float* x, float* y, int64_t n) {
  unary(x, y, n, silu_ps);
}
void gelu(const float* x, float* y, int64_t n) {
  unary(x, y, n, gelu_ps);
}
void swiglu(const float* gate, const float* up, float* y, int64_t n) {
  binary(gate, up, y, n, [](float32x4_t g, float32x4_t u) { return vmulq_f32(silu_ps(g), u); });
}
void add(const float* a, const float* b, float* y, int64_t n) {
  binary(a, b, y, n, [](float32x4_t p, float32x4_t q) { return vaddq_f32(p, q); });
}
void scale(float* x, float s, int64_t n) {
  unary(x, x, n, [s](float32x4_t v) { return vmulq_n_f32(v, s); });
}

}  // namespace

const OpsTable kOps = {rms_norm, softmax_rows, silu, gelu, swiglu, add, scale};

}  // namespace arc::kernels::neon
