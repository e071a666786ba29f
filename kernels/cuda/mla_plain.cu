// Plain-form MLA attention (arc/kernels/mla.h, mla_plain_attention): one block per (head, token)
// whose warps take interleaved context rows with an online softmax each, merged at the end, as
// mla_attention does over the latent cache; lanes own dims lane + 32 i of the no-rope key, the
// rope key and the value. Sizes up to kPlainMaxNope / kMlaMaxRope / kPlainMaxV.
#include "cuda/mla.cuh"

namespace arc::kernels::cuda {
namespace detail {
namespace {

constexpr int64_t kPlainMaxNope = 256;
constexpr int64_t kPlainMaxV = 256;
constexpr int kNopePerLane = kPlainMaxNope / kWarp;  // 8
constexpr int kRopePerLane = kMlaMaxRope / kWarp;    // 2
constexpr int kVPerLane = kPlainMaxV / kWarp;        // 8

// grid: (n_head, n_tokens); block: kMlaWarps warps.
__global__ void mla_plain_attention_kernel(MlaPlainAttentionArgs a) {
  ARC_SHARED(float, s_acc, [kMlaWarps][kPlainMaxV]);
  ARC_SHARED(float, s_m, [kMlaWarps]);
  ARC_SHARED(float, s_l, [kMlaWarps]);
  const int64_t h = blockIdx.x, t = blockIdx.y;
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  const int64_t nh = a.n_head, dn = a.nope_dim, dr = a.rope_dim, dv = a.v_dim;
  const float* q = a.q + t * a.q_token_stride + h * a.q_head_stride;  // [nope | rope]
  float qn[kNopePerLane], qe[kRopePerLane], acc[kVPerLane];
#pragma unroll
  for (int i = 0; i < kNopePerLane; ++i) {
    const int64_t d = lane + kWarp * i;
    qn[i] = d < dn ? q[d] : 0.0f;
  }
#pragma unroll
  for (int i = 0; i < kRopePerLane; ++i) {
    const int64_t d = lane + kWarp * i;
    qe[i] = d < dr ? q[dn + d] : 0.0f;
  }
#pragma unroll
  for (int i = 0; i < kVPerLane; ++i) acc[i] = 0.0f;
  const int64_t row0 = a.token_row0[t], pos = a.token_pos[t];
  float m = -INFINITY, l = 0.0f;
  for (int64_t p = warp; p <= pos; p += kMlaWarps) {
    const int64_t j = row0 + p;
    const float* kn = a.k_nope + (j * nh + h) * dn;
    const float* kp = a.kpe + j * a.kpe_stride;
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < kNopePerLane; ++i) {
      const int64_t d = lane + kWarp * i;
      if (d < dn) s += qn[i] * kn[d];
    }
#pragma unroll
    for (int i = 0; i < kRopePerLane; ++i) {
      const int64_t d = lane + kWarp * i;
      if (d < dr) s += qe[i] * kp[d];
    }
    s = warp_sum(s) * a.scale;
    const float m_new = fmaxf(m, s);
    const float corr = expf(m - m_new);  // m = -inf: 0
    const float e = expf(s - m_new);
    l = l * corr + e;
    const float* v = a.v + (j * nh + h) * dv;
#pragma unroll
    for (int i = 0; i < kVPerLane; ++i) {
      const int64_t d = lane + kWarp * i;
      if (d < dv) acc[i] = acc[i] * corr + e * v[d];
    }
    m = m_new;
  }
  if (lane == 0) {
    s_m[warp] = m;
    s_l[warp] = l;
  }
#pragma unroll
  for (int i = 0; i < kVPerLane; ++i) {
    const int64_t d = lane + kWarp * i;
    if (d < dv) s_acc[warp][d] = acc[i];
  }
  __syncthreads();
  float mx = -INFINITY;
  for (int k = 0; k < kMlaWarps; ++k) mx = fmaxf(mx, s_m[k]);
  float den = 0.0f;
  for (int k = 0; k < kMlaWarps; ++k)
    if (s_m[k] != -INFINITY) den += s_l[k] * expf(s_m[k] - mx);
  float* out = a.out + (t * nh + h) * dv;
  for (int64_t d = threadIdx.x; d < dv; d += blockDim.x) {
    float num = 0.0f;
    for (int k = 0; k < kMlaWarps; ++k)
      if (s_m[k] != -INFINITY) num += s_acc[k][d] * expf(s_m[k] - mx);
    out[d] = den > 0.0f ? num / den : 0.0f;
  }
}

}  // namespace
}  // namespace detail

bool mla_plain_attention(const Context& ctx, const MlaPlainAttentionArgs& a) {
  if (!mla_plain_args_ok(a) || a.nope_dim > detail::kPlainMaxNope ||
      a.rope_dim > detail::kMlaMaxRope || a.v_dim > detail::kPlainMaxV || a.n_head > 0x7fffffff ||
      a.n_tokens > 65535)
    return false;
  if (a.n_tokens == 0) return true;
  const dim3 grid(static_cast<unsigned>(a.n_head), static_cast<unsigned>(a.n_tokens));
  ARC_LAUNCH(grid, detail::kMlaWarps * detail::kWarp, 0, ctx.stream,
             detail::mla_plain_attention_kernel)
  (a);
  return true;
}

}  // namespace arc::kernels::cuda
