// MLA store and attention (design in mla.cuh).
#include "cuda/mla.cuh"

namespace arc::kernels::cuda {
namespace detail {
namespace {

// Value i of cache row `slot` (width w) as float.
__device__ __forceinline__ float mla_elem(const void* cache, int kv_type, int64_t slot, int64_t w,
                                          int64_t i) {
  if (kv_type == static_cast<int>(DType::F16)) {
    return half_bits_to_float(static_cast<const uint16_t*>(cache)[slot * w + i]);
  }
  return static_cast<const float*>(cache)[slot * w + i];
}

// grid: n_tokens; block: 128 threads over the row.
__global__ void mla_store_kernel(MlaKvStoreArgs a) {
  const int64_t t = blockIdx.x;
  const int64_t slot = a.slots[t];
  if (slot < 0) return;
  const int64_t w = a.kv_lora_rank + a.rope_dim;
  for (int64_t i = threadIdx.x; i < w; i += blockDim.x) {
    const float v = i < a.kv_lora_rank ? a.latent[t * a.kv_lora_rank + i]
                                       : a.kpe[t * a.rope_dim + (i - a.kv_lora_rank)];
    if (a.kv_type == DType::F16) {
      static_cast<__half*>(a.cache)[slot * w + i] = __float2half_rn(v);
    } else {
      static_cast<float*>(a.cache)[slot * w + i] = v;
    }
  }
}

constexpr int kRankPerLane = kMlaMaxRank / kWarp;  // 16
constexpr int kRopePerLane = kMlaMaxRope / kWarp;  // 2

// grid: (n_head, n_tokens); block: kMlaWarps warps.
__global__ void mla_attention_kernel(MlaAttentionArgs a) {
  ARC_SHARED(float, s_acc, [kMlaWarps][kMlaMaxRank]);
  ARC_SHARED(float, s_m, [kMlaWarps]);
  ARC_SHARED(float, s_l, [kMlaWarps]);
  const int64_t h = blockIdx.x, t = blockIdx.y;
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  const int64_t r = a.kv_lora_rank, rd = a.rope_dim, w = r + rd;
  const int kv_type = static_cast<int>(a.kv_type);
  const float* ql = a.q_lat + (t * a.n_head + h) * r;
  const float* qp = a.q_pe + t * a.q_pe_token_stride + h * a.q_pe_head_stride;
  float qr[kRankPerLane], qe[kRopePerLane], acc[kRankPerLane];
#pragma unroll
  for (int i = 0; i < kRankPerLane; ++i) {
    const int64_t d = lane + kWarp * i;
    qr[i] = d < r ? ql[d] : 0.0f;
    acc[i] = 0.0f;
  }
#pragma unroll
  for (int i = 0; i < kRopePerLane; ++i) {
    const int64_t d = lane + kWarp * i;
    qe[i] = d < rd ? qp[d] : 0.0f;
  }
  const int32_t* table =
      a.block_tables + static_cast<int64_t>(a.token_seq[t]) * a.max_blocks_per_seq;
  const int64_t pos = a.token_pos[t];
  float m = -INFINITY, l = 0.0f;
  for (int64_t p = warp; p <= pos; p += kMlaWarps) {
    const int64_t slot =
        static_cast<int64_t>(table[p / a.block_size]) * a.block_size + p % a.block_size;
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < kRankPerLane; ++i) {
      const int64_t d = lane + kWarp * i;
      if (d < r) s += qr[i] * mla_elem(a.cache, kv_type, slot, w, d);
    }
#pragma unroll
    for (int i = 0; i < kRopePerLane; ++i) {
      const int64_t d = lane + kWarp * i;
      if (d < rd) s += qe[i] * mla_elem(a.cache, kv_type, slot, w, r + d);
    }
    s = warp_sum(s) * a.scale;
    const float m_new = fmaxf(m, s);
    const float corr = expf(m - m_new);  // m = -inf: 0
    const float e = expf(s - m_new);
    l = l * corr + e;
#pragma unroll
    for (int i = 0; i < kRankPerLane; ++i) {
      const int64_t d = lane + kWarp * i;
      if (d < r) acc[i] = acc[i] * corr + e * mla_elem(a.cache, kv_type, slot, w, d);
    }
    m = m_new;
  }
  if (lane == 0) {
    s_m[warp] = m;
    s_l[warp] = l;
  }
#pragma unroll
  for (int i = 0; i < kRankPerLane; ++i) {
    const int64_t d = lane + kWarp * i;
    if (d < r) s_acc[warp][d] = acc[i];
  }
  __syncthreads();
  float mx = -INFINITY;
  for (int k = 0; k < kMlaWarps; ++k) mx = fmaxf(mx, s_m[k]);
  float den = 0.0f;
  for (int k = 0; k < kMlaWarps; ++k)
    if (s_m[k] != -INFINITY) den += s_l[k] * expf(s_m[k] - mx);
  float* out = a.out + (t * a.n_head + h) * r;
  for (int64_t d = threadIdx.x; d < r; d += blockDim.x) {
    float num = 0.0f;
    for (int k = 0; k < kMlaWarps; ++k)
      if (s_m[k] != -INFINITY) num += s_acc[k][d] * expf(s_m[k] - mx);
    out[d] = den > 0.0f ? num / den : 0.0f;  // no visible key: zeros, as the reference
  }
}

}  // namespace
}  // namespace detail

bool mla_kv_store(const Context& ctx, const MlaKvStoreArgs& a) {
  if (!mla_kv_type_ok(a.kv_type) || a.n_tokens < 0 || a.n_tokens > 0x7fffffff) return false;
  if (a.n_tokens == 0) return true;
  ARC_LAUNCH(static_cast<unsigned>(a.n_tokens), 128, 0, ctx.stream, detail::mla_store_kernel)(a);
  return true;
}

bool mla_attention(const Context& ctx, const MlaAttentionArgs& a) {
  if (!mla_kv_type_ok(a.kv_type) || a.kv_lora_rank <= 0 || a.kv_lora_rank > detail::kMlaMaxRank ||
      a.rope_dim < 0 || a.rope_dim > detail::kMlaMaxRope || a.block_size <= 0 || a.n_head <= 0 ||
      a.n_head > 65535 || a.n_tokens < 0 || a.n_tokens > 65535)
    return false;
  if (a.n_tokens == 0) return true;
  const dim3 grid(static_cast<unsigned>(a.n_head), static_cast<unsigned>(a.n_tokens));
  ARC_LAUNCH(grid, detail::kMlaWarps * detail::kWarp, 0, ctx.stream, detail::mla_attention_kernel)
  (a);
  return true;
}

}  // namespace arc::kernels::cuda
