// RoPE entry point: the rotation of each pair depends only on the token's position, so it is
// computed once per token and applied to every head.
#include <vector>

#include "cpu/rope_angles.h"

namespace arc::kernels {

void rope(const RopeArgs& a) {
  const int64_t rot = detail::rope_rot_dim(a);
  if (rot == 0 || a.x == nullptr || a.pos == nullptr) return;
  const int64_t half = rot / 2;
  const detail::YarnDims yd = detail::yarn_corr_dims(a, rot);
  std::vector<float> cs(half), sn(half);  // [rot / 2]
  const int64_t step0 = a.layout == RopeLayout::kInterleaved ? 2 : 1;
  const int64_t off1 = a.layout == RopeLayout::kInterleaved ? 1 : half;
  for (int64_t t = 0; t < a.n_tokens; ++t) {
    for (int64_t i = 0; i < half; ++i) {
      const detail::RopeRotation r = detail::rope_rotation(a, rot, yd, i, a.pos[t]);
      cs[i] = static_cast<float>(r.cos_m);
      sn[i] = static_cast<float>(r.sin_m);
    }
    for (int64_t h = 0; h < a.n_heads; ++h) {
      float* x = a.x + (t * a.n_heads + h) * a.head_dim;  // [head_dim]
      for (int64_t i = 0; i < half; ++i) {
        float* p0 = x + i * step0;
        float* p1 = p0 + off1;
        const float x0 = *p0;
        const float x1 = *p1;
        *p0 = x0 * cs[i] - x1 * sn[i];
        *p1 = x0 * sn[i] + x1 * cs[i];
      }
    }
  }
}

}  // namespace arc::kernels
