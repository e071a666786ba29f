// RoPE: one block per token; each thread computes the rotation of its pairs once (double, as the
// CPU does) and applies it to every head.
#include "cpu/rope_angles.h"
#include "cuda/rope.cuh"

namespace arc::kernels::cuda {
namespace detail {
namespace {

struct RopeParams {
  float* x;  // [n_tokens, n_heads, head_dim]
  const int32_t* pos;
  const float* freq_factors;  // [rot / 2] or null
  int64_t n_heads, head_dim, rot;
  int interleaved;
  double theta_base, freq_scale, ext_factor, attn_factor;
  double yarn_low, yarn_high;
};

__global__ void rope_kernel(RopeParams p) {
  const int64_t t = blockIdx.x;
  const int64_t half = p.rot / 2;
  const double pos = static_cast<double>(p.pos[t]);
  for (int64_t i = threadIdx.x; i < half; i += blockDim.x) {
    // Same expression order as detail::rope_rotation so the angles agree with the CPU.
    double theta_extrap = pos * pow(p.theta_base, -2.0 * static_cast<double>(i) / p.rot);
    if (p.freq_factors != nullptr) theta_extrap /= p.freq_factors[i];
    const double theta_interp = p.freq_scale * theta_extrap;
    double theta = theta_interp;
    double mscale = p.attn_factor;
    if (p.ext_factor != 0.0) {
      const double y =
          (static_cast<double>(i) - p.yarn_low) / fmax(0.001, p.yarn_high - p.yarn_low);
      const double ramp = (1.0 - fmin(1.0, fmax(0.0, y))) * p.ext_factor;
      theta = theta_interp * (1.0 - ramp) + theta_extrap * ramp;
      mscale *= 1.0 + 0.1 * log(1.0 / p.freq_scale);
    }
    double sd, cd;
    sincos(theta, &sd, &cd);
    const float c = static_cast<float>(cd * mscale), s = static_cast<float>(sd * mscale);
    const int64_t i0 = p.interleaved ? 2 * i : i;
    const int64_t i1 = p.interleaved ? 2 * i + 1 : i + half;
    for (int64_t h = 0; h < p.n_heads; ++h) {
      float* x = p.x + (t * p.n_heads + h) * p.head_dim;
      const float x0 = x[i0], x1 = x[i1];
      x[i0] = x0 * c - x1 * s;
      x[i1] = x0 * s + x1 * c;
    }
  }
}

}  // namespace
}  // namespace detail

bool rope(const Context& ctx, const RopeArgs& a) {
  const int64_t rot = kernels::detail::rope_rot_dim(a);
  if (rot == 0 || a.n_tokens < 0 || a.n_tokens > 0x7fffffff) return false;
  if (a.x == nullptr || a.pos == nullptr || a.n_tokens == 0 || a.n_heads == 0) return true;
  const kernels::detail::YarnDims yd = kernels::detail::yarn_corr_dims(a, rot);
  detail::RopeParams p{};
  p.x = a.x;
  p.pos = a.pos;
  p.freq_factors = a.freq_factors;
  p.n_heads = a.n_heads;
  p.head_dim = a.head_dim;
  p.rot = rot;
  p.interleaved = a.layout == RopeLayout::kInterleaved;
  p.theta_base = a.theta_base;
  p.freq_scale = a.freq_scale;
  p.ext_factor = a.ext_factor;
  p.attn_factor = a.attn_factor;
  p.yarn_low = yd.low;
  p.yarn_high = yd.high;
  const int threads = static_cast<int>(std::min<int64_t>(256, (rot / 2 + 31) / 32 * 32));
  ARC_LAUNCH(static_cast<unsigned>(a.n_tokens), threads, 0, ctx.stream, detail::rope_kernel)(p);
  return true;
}

}  // namespace arc::kernels::cuda
