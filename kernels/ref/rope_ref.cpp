// Scalar reference RoPE: one pair at a time, angles in double.
#include "cpu/rope_angles.h"

namespace arc::kernels::ref {

void rope(const RopeArgs& a) {
  const int64_t rot = detail::rope_rot_dim(a);
  if (rot == 0 || a.x == nullptr || a.pos == nullptr) return;
  const int64_t half = rot / 2;
  const detail::YarnDims yd = detail::yarn_corr_dims(a, rot);
  for (int64_t t = 0; t < a.n_tokens; ++t) {
    for (int64_t h = 0; h < a.n_heads; ++h) {
      float* x = a.x + (t * a.n_heads + h) * a.head_dim;  // [head_dim]
      for (int64_t i = 0; i < half; ++i) {
        const detail::RopeRotation r = detail::rope_rotation(a, rot, yd, i, a.pos[t]);
        const int64_t i0 = a.layout == RopeLayout::kInterleaved ? 2 * i : i;
        const int64_t i1 = a.layout == RopeLayout::kInterleaved ? 2 * i + 1 : i + half;
        const double x0 = x[i0];
        const double x1 = x[i1];
        x[i0] = static_cast<float>(x0 * r.cos_m - x1 * r.sin_m);
        x[i1] = static_cast<float>(x0 * r.sin_m + x1 * r.cos_m);
      }
    }
  }
}

}  // namespace arc::kernels::ref
