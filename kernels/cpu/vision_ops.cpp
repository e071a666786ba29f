// The vision ops on the CPU (arc/kernels/vision_ops.h). The row-wise ops are plain loops the
// compiler vectorizes; dense attention is built from the matmul kernels: per segment and head,
// scores = Q K^T for up to kQueryChunk queries at a time, a row softmax, then out = P V.
#include <algorithm>
#include <cmath>
#include <vector>

#include "arc/kernels/matmul.h"
#include "arc/kernels/ops.h"
#include "arc/kernels/vision_ops.h"

namespace arc::kernels {

namespace {

// Attention scores are computed for this many query rows at a time: [kQueryChunk, n_keys].
constexpr int64_t kQueryChunk = 512;

// Sum of x[0..d) with 8 independent partial sums (vectorizes; accurate enough for d <= 64k).
float sum8(const float* x, int64_t d) {
  float acc[8] = {};
  int64_t i = 0;
  for (; i + 8 <= d; i += 8) {
    for (int l = 0; l < 8; ++l) acc[l] += x[i + l];
  }
  for (; i < d; ++i) acc[i % 8] += x[i];
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

// Sum of (x[i] - m)^2 the same way.
float sq_dev8(const float* x, float m, int64_t d) {
  float acc[8] = {};
  int64_t i = 0;
  for (; i + 8 <= d; i += 8) {
    for (int l = 0; l < 8; ++l) acc[l] += (x[i + l] - m) * (x[i + l] - m);
  }
  for (; i < d; ++i) acc[i % 8] += (x[i] - m) * (x[i] - m);
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

}  // namespace

void layer_norm(const float* x, const float* w, const float* b, float* y, int64_t n_rows, int64_t d,
                float eps) {
  for (int64_t r = 0; r < n_rows; ++r) {
    const float* xr = x + r * d;
    float* yr = y + r * d;
    // Two passes (mean, then centred squares): no cancellation for rows with a large mean.
    const float mean = sum8(xr, d) / static_cast<float>(d);
    const float var = sq_dev8(xr, mean, d) / static_cast<float>(d);
    const float inv = 1.0f / std::sqrt(var + eps);
    if (w != nullptr && b != nullptr) {
      for (int64_t i = 0; i < d; ++i) yr[i] = (xr[i] - mean) * inv * w[i] + b[i];
    } else {
      for (int64_t i = 0; i < d; ++i) {
        float v = (xr[i] - mean) * inv;
        if (w != nullptr) v *= w[i];
        if (b != nullptr) v += b[i];
        yr[i] = v;
      }
    }
  }
}

void gelu_erf(const float* x, float* y, int64_t n) {
  constexpr float kInvSqrt2 = 0.70710678118654752f;
  for (int64_t i = 0; i < n; ++i) y[i] = 0.5f * x[i] * (1.0f + std::erf(x[i] * kInvSqrt2));
}

void rope_table(const RopeTableArgs& a) {
  const int64_t stride = a.x_stride != 0 ? a.x_stride : a.n_heads * a.head_dim;
  const int64_t half = a.head_dim / 2;
  for (int64_t t = 0; t < a.n_tokens; ++t) {
    const float* cp = a.cos + t * half;
    const float* sp = a.sin + t * half;
    for (int64_t h = 0; h < a.n_heads; ++h) {
      float* v = a.x + t * stride + h * a.head_dim;
      for (int64_t i = 0; i < half; ++i) {
        const float x0 = v[i], x1 = v[i + half];
        v[i] = x0 * cp[i] - x1 * sp[i];
        v[i + half] = x0 * sp[i] + x1 * cp[i];
      }
    }
  }
}

bool dense_attention(const DenseAttentionArgs& a, Parallel* pool) {
  const int64_t width = a.n_head * a.head_dim, hd = a.head_dim;
  const int64_t qs = a.q_stride != 0 ? a.q_stride : width;
  const int64_t ks = a.kv_stride != 0 ? a.kv_stride : width;
  const int64_t os = a.out_stride != 0 ? a.out_stride : width;
  const float scale = a.scale != 0.0f ? a.scale : 1.0f / std::sqrt(static_cast<float>(hd));
  if (a.n_tokens < 0 || a.n_head < 1 || hd < 1) return false;
  std::vector<int64_t> bounds = {0, a.n_tokens};
  if (a.seg_offsets != nullptr) {
    if (a.n_segments < 1 || a.seg_offsets[0] != 0 || a.seg_offsets[a.n_segments] != a.n_tokens) {
      return false;
    }
    bounds.assign(a.seg_offsets, a.seg_offsets + a.n_segments + 1);
    for (size_t s = 1; s < bounds.size(); ++s) {
      if (bounds[s] < bounds[s - 1]) return false;
    }
  }
  int64_t longest = 0;
  for (size_t s = 0; s + 1 < bounds.size(); ++s) {
    longest = std::max(longest, bounds[s + 1] - bounds[s]);
  }
  std::vector<float> vt(static_cast<size_t>(hd * longest));  // [hd, len] V of one head
  std::vector<float> sc(static_cast<size_t>(std::min(kQueryChunk, longest) * longest));
  for (size_t s = 0; s + 1 < bounds.size(); ++s) {
    const int64_t f0 = bounds[s], len = bounds[s + 1] - bounds[s];
    if (len == 0) continue;
    for (int64_t h = 0; h < a.n_head; ++h) {
      const float* q = a.q + f0 * qs + h * hd;
      const float* k = a.k + f0 * ks + h * hd;
      const float* v = a.v + f0 * ks + h * hd;
      for (int64_t j = 0; j < len; ++j) {
        for (int64_t d = 0; d < hd; ++d) vt[d * len + j] = v[j * ks + d];
      }
      for (int64_t q0 = 0; q0 < len; q0 += kQueryChunk) {
        const int64_t nq = std::min(kQueryChunk, len - q0);
        MatmulArgs m;  // scores [nq, len] = q k^T
        m.w = k;
        m.w_type = DType::F32;
        m.n_in = hd;
        m.n_out = len;
        m.w_row_bytes = sizeof(float) * static_cast<size_t>(ks);
        m.x = q + q0 * qs;
        m.x_stride = qs;
        m.n_tokens = nq;
        m.y = sc.data();
        if (!matmul(m, pool)) return false;
        parallel_for(pool, nq, 4, [&](int64_t b, int64_t e) {
          for (int64_t r = b; r < e; ++r) {
            float* row = sc.data() + r * len;
            for (int64_t j = 0; j < len; ++j) row[j] *= scale;
            softmax_rows(row, 1, len);
          }
        });
        MatmulArgs o;  // out [nq, hd] = P V
        o.w = vt.data();
        o.w_type = DType::F32;
        o.n_in = len;
        o.n_out = hd;
        o.x = sc.data();
        o.n_tokens = nq;
        o.y = a.out + (f0 + q0) * os + h * hd;
        o.y_stride = os;
        if (!matmul(o, pool)) return false;
      }
    }
  }
  return true;
}

}  // namespace arc::kernels
