// RoPE entry points: the rotation of each pair depends only on the token's position, so it is
// computed once per token (rope_angles) and applied to every head (rope_rotate).
#include <vector>

#include "cpu/rope_angles.h"

namespace arc::kernels {

int64_t rope_table_size(const RopeArgs& a) {
  return a.n_tokens * detail::rope_rot_dim(a);
}

void rope_angles(const RopeArgs& a, float* cs) {
  const int64_t rot = detail::rope_rot_dim(a);
  if (rot == 0 || a.pos == nullptr) return;
  const int64_t half = rot / 2;
  const detail::YarnDims yd = detail::yarn_corr_dims(a, rot);
  for (int64_t t = 0; t < a.n_tokens; ++t) {
    for (int64_t i = 0; i < half; ++i) {
      const detail::RopeRotation r = detail::rope_rotation(a, rot, yd, i, a.pos[t]);
      cs[(t * half + i) * 2] = static_cast<float>(r.cos_m);
      cs[(t * half + i) * 2 + 1] = static_cast<float>(r.sin_m);
    }
  }
}

void rope_rotate(const RopeArgs& a, const float* cs) {
  const int64_t rot = detail::rope_rot_dim(a);
  if (rot == 0 || a.x == nullptr) return;
  const int64_t half = rot / 2;
  const int64_t step0 = a.layout == RopeLayout::kInterleaved ? 2 : 1;
  const int64_t off1 = a.layout == RopeLayout::kInterleaved ? 1 : half;
  for (int64_t t = 0; t < a.n_tokens; ++t) {
    const float* c = cs + t * half * 2;  // [rot / 2, 2]
    for (int64_t h = 0; h < a.n_heads; ++h) {
      float* x = a.x + (t * a.n_heads + h) * a.head_dim;  // [head_dim]
      for (int64_t i = 0; i < half; ++i) {
        float* p0 = x + i * step0;
        float* p1 = p0 + off1;
        const float x0 = *p0;
        const float x1 = *p1;
        *p0 = x0 * c[2 * i] - x1 * c[2 * i + 1];
        *p1 = x0 * c[2 * i + 1] + x1 * c[2 * i];
      }
    }
  }
}

void rope(const RopeArgs& a) {
  if (detail::rope_rot_dim(a) == 0 || a.x == nullptr || a.pos == nullptr) return;
  std::vector<float> cs(rope_table_size(a));
  rope_angles(a, cs.data());
  rope_rotate(a, cs.data());
}

bool rope_same_angles(const RopeArgs& a, const RopeArgs& b) {
  return detail::rope_rot_dim(a) == detail::rope_rot_dim(b) && a.layout == b.layout &&
         a.theta_base == b.theta_base && a.freq_scale == b.freq_scale &&
         (a.freq_factors == nullptr) == (b.freq_factors == nullptr) &&
         a.ext_factor == b.ext_factor && a.attn_factor == b.attn_factor &&
         a.beta_fast == b.beta_fast && a.beta_slow == b.beta_slow && a.n_ctx_orig == b.n_ctx_orig;
}

}  // namespace arc::kernels
