// The two passes of a row RMS norm split across ranks (arc/kernels/ops.h). Small (a decode
// step's q and k rows: a few thousand values per token), so plain loops: eight partial sums
// let the compiler vectorise the reduction with a fixed order, so every thread count and rank
// layout sums a row the same way.
#include <cmath>

#include "arc/kernels/ops.h"

namespace arc::kernels {

void sum_squares(const float* x, float* ss, int64_t n_rows, int64_t d) {
  constexpr int kLanes = 8;
  for (int64_t r = 0; r < n_rows; ++r) {
    const float* xr = x + r * d;  // [d]
    float lane[kLanes] = {};
    int64_t i = 0;
    for (; i + kLanes <= d; i += kLanes) {
      for (int j = 0; j < kLanes; ++j) lane[j] += xr[i + j] * xr[i + j];
    }
    for (; i < d; ++i) lane[0] += xr[i] * xr[i];
    float s = 0.0f;
    for (float v : lane) s += v;
    ss[r] = s;
  }
}

void rms_norm_sumsq(const float* x, const float* w, const float* ss, float* y, int64_t n_rows,
                    int64_t d, int64_t n_total, float eps) {
  for (int64_t r = 0; r < n_rows; ++r) {
    const float inv = 1.0f / std::sqrt(ss[r] / static_cast<float>(n_total) + eps);
    const float* xr = x + r * d;  // [d]
    float* yr = y + r * d;        // [d]
    if (w != nullptr) {
      for (int64_t i = 0; i < d; ++i) yr[i] = xr[i] * inv * w[i];
    } else {
      for (int64_t i = 0; i < d; ++i) yr[i] = xr[i] * inv;
    }
  }
}

}  // namespace arc::kernels
