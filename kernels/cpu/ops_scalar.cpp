// Portable variant of the elementwise and row-wise ops (float arithmetic, plain loops the compiler
// may auto-vectorize for the baseline ISA). Used where no SIMD variant applies.
#include <cmath>
#include <limits>

#include "cpu/ops_variants.h"

namespace arc::kernels::scalar {
namespace {

// x, y: [n_rows, d]; w: [d] or null.
void rms_norm(const float* x, const float* w, float* y, int64_t n_rows, int64_t d, float eps) {
  for (int64_t r = 0; r < n_rows; ++r) {
    const float* xr = x + r * d;
    float* yr = y + r * d;
    float ss = 0.0f;
    for (int64_t i = 0; i < d; ++i) ss += xr[i] * xr[i];
    const float inv = 1.0f / std::sqrt(ss / static_cast<float>(d) + eps);
    for (int64_t i = 0; i < d; ++i) yr[i] = w != nullptr ? xr[i] * inv * w[i] : xr[i] * inv;
  }
}

// x: [n_rows, n]; fully -inf rows become zeros.
void softmax_rows(float* x, int64_t n_rows, int64_t n) {
  for (int64_t r = 0; r < n_rows; ++r) {
    float* xr = x + r * n;
    float mx = -std::numeric_limits<float>::infinity();
    for (int64_t i = 0; i < n; ++i) mx = std::fmax(mx, xr[i]);
    if (mx == -std::numeric_limits<float>::infinity()) {
      for (int64_t i = 0; i < n; ++i) xr[i] = 0.0f;
      continue;
    }
    float sum = 0.0f;
    for (int64_t i = 0; i < n; ++i) {
      xr[i] = std::exp(xr[i] - mx);
      sum += xr[i];
    }
    const float inv = 1.0f / sum;
    for (int64_t i = 0; i < n; ++i) xr[i] *= inv;
  }
}

void silu(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] / (1.0f + std::exp(-x[i]));
}

void gelu(const float* x, float* y, int64_t n) {
  const float k = 0.7978845608028654f;  // sqrt(2 / pi)
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    y[i] = 0.5f * v * (1.0f + std::tanh(k * (v + 0.044715f * v * v * v)));
  }
}

void swiglu(const float* gate, const float* up, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

void add(const float* a, const float* b, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
}

void scale(float* x, float s, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] *= s;
}

}  // namespace

const OpsTable kOps = {rms_norm, softmax_rows, silu, gelu, swiglu, add, scale};

}  // namespace arc::kernels::scalar
