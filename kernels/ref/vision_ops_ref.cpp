// Scalar references of the vision ops (arc/kernels/vision_ops.h): double accumulation, written
// for clarity; the tests' oracle.
#include <cmath>
#include <vector>

#include "arc/kernels/vision_ops.h"

namespace arc::kernels::ref {

namespace {

int64_t or_default(int64_t stride, int64_t d) {
  return stride != 0 ? stride : d;
}

}  // namespace

// x, y: [n_rows, d]; w, b: [d] or null.
void layer_norm(const float* x, const float* w, const float* b, float* y, int64_t n_rows, int64_t d,
                float eps) {
  for (int64_t r = 0; r < n_rows; ++r) {
    const float* xr = x + r * d;
    float* yr = y + r * d;
    double mean = 0.0;
    for (int64_t i = 0; i < d; ++i) mean += xr[i];
    mean /= static_cast<double>(d);
    double var = 0.0;
    for (int64_t i = 0; i < d; ++i) var += (xr[i] - mean) * (xr[i] - mean);
    var /= static_cast<double>(d);
    const double inv = 1.0 / std::sqrt(var + eps);
    for (int64_t i = 0; i < d; ++i) {
      double v = (xr[i] - mean) * inv;
      if (w != nullptr) v *= w[i];
      if (b != nullptr) v += b[i];
      yr[i] = static_cast<float>(v);
    }
  }
}

// x, y: [n]
void gelu_erf(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const double v = x[i];
    y[i] = static_cast<float>(0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))));
  }
}

void rope_table(const RopeTableArgs& a) {
  const int64_t stride = or_default(a.x_stride, a.n_heads * a.head_dim), half = a.head_dim / 2;
  for (int64_t t = 0; t < a.n_tokens; ++t) {
    for (int64_t h = 0; h < a.n_heads; ++h) {
      float* v = a.x + t * stride + h * a.head_dim;
      for (int64_t i = 0; i < half; ++i) {
        const double c = a.cos[t * half + i], s = a.sin[t * half + i];
        const double x0 = v[i], x1 = v[i + half];
        v[i] = static_cast<float>(x0 * c - x1 * s);
        v[i + half] = static_cast<float>(x0 * s + x1 * c);
      }
    }
  }
}

bool dense_attention(const DenseAttentionArgs& a) {
  const int64_t width = a.n_head * a.head_dim;
  const int64_t qs = or_default(a.q_stride, width), ks = or_default(a.kv_stride, width),
                os = or_default(a.out_stride, width);
  const double scale = a.scale != 0.0f ? a.scale : 1.0 / std::sqrt(static_cast<double>(a.head_dim));
  std::vector<int64_t> bounds = {0, a.n_tokens};
  if (a.seg_offsets != nullptr) {
    bounds.assign(a.seg_offsets, a.seg_offsets + a.n_segments + 1);
    if (a.n_segments < 1 || bounds.front() != 0 || bounds.back() != a.n_tokens) return false;
    for (size_t s = 1; s < bounds.size(); ++s) {
      if (bounds[s] < bounds[s - 1]) return false;
    }
  }
  std::vector<double> p;
  for (size_t s = 0; s + 1 < bounds.size(); ++s) {
    const int64_t b = bounds[s], e = bounds[s + 1];
    p.resize(static_cast<size_t>(e - b));
    for (int64_t t = b; t < e; ++t) {
      for (int64_t h = 0; h < a.n_head; ++h) {
        const float* q = a.q + t * qs + h * a.head_dim;
        double mx = -INFINITY;
        for (int64_t j = b; j < e; ++j) {
          const float* k = a.k + j * ks + h * a.head_dim;
          double dot = 0.0;
          for (int64_t d = 0; d < a.head_dim; ++d) dot += static_cast<double>(q[d]) * k[d];
          p[j - b] = dot * scale;
          mx = std::fmax(mx, p[j - b]);
        }
        double sum = 0.0;
        for (double& x : p) sum += (x = std::exp(x - mx));
        float* o = a.out + t * os + h * a.head_dim;
        for (int64_t d = 0; d < a.head_dim; ++d) {
          double acc = 0.0;
          for (int64_t j = b; j < e; ++j) acc += p[j - b] * a.v[j * ks + h * a.head_dim + d];
          o[d] = static_cast<float>(acc / sum);
        }
      }
    }
  }
  return true;
}

}  // namespace arc::kernels::ref
