// NEON paged attention: the shared kernel with 4-lane registers; F16 K/V widened by fcvtl.
#include <arm_neon.h>

#include "cpu/attention_kernel.h"
#include "cpu/ops_variants.h"
#include "cpu/vec_exp_neon.h"

namespace arc::kernels::neon {
namespace {

struct Lanes4 {
  static constexpr int W = 4;
  using R = float32x4_t;
  static R zero() { return vdupq_n_f32(0.0f); }
  static R set1(float f) { return vdupq_n_f32(f); }
  static R load(const float* p) { return vld1q_f32(p); }
  static R load(const uint16_t* p) { return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p))); }
  static void store(float* p, R r) { vst1q_f32(p, r); }
  static R fma(R a, R b, R c) { return vfmaq_f32(c, a, b); }
  static R add(R a, R b) { return vaddq_f32(a, b); }
  static R sub(R a, R b) { return vsubq_f32(a, b); }
  static R mul(R a, R b) { return vmulq_f32(a, b); }
  static R exp(R a) { return detail::exp_neon(a); }
  static float hsum(R r) { return vaddvq_f32(r); }
};

}  // namespace

void paged_attention(const PagedAttentionArgs& args, Parallel* pool) {
  if (!detail::attention_args_ok(args)) return;
  if (args.head_dim % Lanes4::W != 0) return scalar::paged_attention(args, pool);
  detail::paged_attention_impl<Lanes4>(args, pool);
}

}  // namespace arc::kernels::neon
