// Scalar references for the row-wise and elementwise ops: the tests' oracle. Written for clarity,
// with double accumulation so they are at least as accurate as any optimized variant.
#include <algorithm>
#include <cmath>
#include <limits>

#include "arc/kernels/ops.h"

namespace arc::kernels::ref {

// x, y: [n_rows, d]; w: [d] or null.
void rms_norm(const float* x, const float* w, float* y, int64_t n_rows, int64_t d, float eps) {
  for (int64_t r = 0; r < n_rows; ++r) {
    const float* xr = x + r * d;
    float* yr = y + r * d;
    double ss = 0.0;
    for (int64_t i = 0; i < d; ++i) ss += static_cast<double>(xr[i]) * xr[i];
    const double inv = 1.0 / std::sqrt(ss / static_cast<double>(d) + eps);
    for (int64_t i = 0; i < d; ++i) {
      const double v = xr[i] * inv;
      yr[i] = static_cast<float>(w != nullptr ? v * w[i] : v);
    }
  }
}

// x: [n_rows, d]; ss: [n_rows].
void sum_squares(const float* x, float* ss, int64_t n_rows, int64_t d) {
  for (int64_t r = 0; r < n_rows; ++r) {
    double s = 0.0;
    for (int64_t i = 0; i < d; ++i) s += static_cast<double>(x[r * d + i]) * x[r * d + i];
    ss[r] = static_cast<float>(s);
  }
}

// x, y: [n_rows, d]; ss: [n_rows]; w: [d] or null.
void rms_norm_sumsq(const float* x, const float* w, const float* ss, float* y, int64_t n_rows,
                    int64_t d, int64_t n_total, float eps) {
  for (int64_t r = 0; r < n_rows; ++r) {
    const double inv = 1.0 / std::sqrt(static_cast<double>(ss[r]) / static_cast<double>(n_total) +
                                       static_cast<double>(eps));
    for (int64_t i = 0; i < d; ++i) {
      const double v = x[r * d + i] * inv;
      y[r * d + i] = static_cast<float>(w != nullptr ? v * w[i] : v);
    }
  }
}

// x: [n_rows, n]. A row that is entirely -inf (fully masked) becomes all zeros instead of NaN.
void softmax_rows(float* x, int64_t n_rows, int64_t n) {
  for (int64_t r = 0; r < n_rows; ++r) {
    float* xr = x + r * n;
    float mx = -std::numeric_limits<float>::infinity();
    for (int64_t i = 0; i < n; ++i) mx = std::fmax(mx, xr[i]);
    if (mx == -std::numeric_limits<float>::infinity()) {
      for (int64_t i = 0; i < n; ++i) xr[i] = 0.0f;
      continue;
    }
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += std::exp(static_cast<double>(xr[i]) - mx);
    for (int64_t i = 0; i < n; ++i) {
      xr[i] = static_cast<float>(std::exp(static_cast<double>(xr[i]) - mx) / sum);
    }
  }
}

// x, y: [n]
void silu(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const double v = x[i];
    y[i] = static_cast<float>(v / (1.0 + std::exp(-v)));
  }
}

// x, y: [n]. The tanh approximation GGUF models are trained/converted with.
void gelu(const float* x, float* y, int64_t n) {
  const double k = std::sqrt(2.0 / M_PI);
  for (int64_t i = 0; i < n; ++i) {
    const double v = x[i];
    y[i] = static_cast<float>(0.5 * v * (1.0 + std::tanh(k * (v + 0.044715 * v * v * v))));
  }
}

// gate, up, y: [n]
void swiglu(const float* gate, const float* up, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const double g = gate[i];
    y[i] = static_cast<float>(g / (1.0 + std::exp(-g)) * up[i]);
  }
}

// gate, up, y: [n]
void swiglu_oai(const float* gate, const float* up, float* y, int64_t n, float alpha, float limit) {
  for (int64_t i = 0; i < n; ++i) {
    const double g = std::min(static_cast<double>(gate[i]), static_cast<double>(limit));
    const double u = std::clamp(static_cast<double>(up[i]), -static_cast<double>(limit),
                                static_cast<double>(limit));
    y[i] = static_cast<float>(g / (1.0 + std::exp(-alpha * g)) * (u + 1.0));
  }
}

// a, b, y: [n]
void add(const float* a, const float* b, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
}

}  // namespace arc::kernels::ref
