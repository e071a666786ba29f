// KV store and split-K decode attention; the prefill kernel lives in attention_prefill.cu.
#include <algorithm>

#include "cuda/attention.cuh"

namespace arc::kernels::cuda {
namespace detail {
namespace {

constexpr int kDecodeWarps = 4;

// grid: (n_tokens, n_kv_head); block: 128. Q8_0 rows: one warp per block of 32 values.
__global__ void kv_store_kernel(KvStoreArgs a, size_t row_bytes) {
  const int64_t t = blockIdx.x, g = blockIdx.y;
  const int32_t slot = a.slots[t];
  if (slot < 0) return;  // padding token
  const int64_t row = static_cast<int64_t>(slot) * a.n_kv_head + g;
  const int64_t src = (t * a.n_kv_head + g) * a.head_dim;
  for (int which = 0; which < 2; ++which) {
    const float* x = (which == 0 ? a.k : a.v) + src;
    uint8_t* dst = static_cast<uint8_t*>(which == 0 ? a.k_cache : a.v_cache) + row * row_bytes;
    if (a.kv_type == DType::F32) {
      for (int64_t i = threadIdx.x; i < a.head_dim; i += blockDim.x)
        reinterpret_cast<float*>(dst)[i] = x[i];
    } else if (a.kv_type == DType::F16) {
      for (int64_t i = threadIdx.x; i < a.head_dim; i += blockDim.x)
        reinterpret_cast<__half*>(dst)[i] = __float2half_rn(x[i]);
    } else {
      // Q8_0 as detail::quantize_q8_0_row: d = amax / 127, q = round half away from zero.
      const int lane = threadIdx.x % kWarp;
      for (int64_t b = threadIdx.x / kWarp; b < a.head_dim / 32; b += blockDim.x / kWarp) {
        const float v = x[b * 32 + lane];
        const float amax = warp_max(fabsf(v));
        const float d = amax / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        uint8_t* blk = dst + b * 34;
        const __half dh = __float2half_rn(d);
        if (lane == 0) {
          const uint16_t bits = __half_as_ushort(dh);
          blk[0] = static_cast<uint8_t>(bits & 0xFF);
          blk[1] = static_cast<uint8_t>(bits >> 8);
        }
        blk[2 + lane] = static_cast<uint8_t>(static_cast<int8_t>(roundf(v * id)));
      }
    }
  }
}

// grid: (n_splits, n_head, n_tokens); block: 4 warps. Lane owns dims lane + 32 i (below head_dim:
// a head_dim that is not a multiple of 32 leaves the last lanes of the last group idle).
__global__ void __launch_bounds__(kDecodeWarps* kWarp) decode_kernel(AttnParams p) {
  ARC_SHARED(float, s_m, [kDecodeWarps]);
  ARC_SHARED(float, s_l, [kDecodeWarps]);
  ARC_SHARED(float, s_acc, [kDecodeWarps][kMaxHeadDim]);
  const int64_t sp = blockIdx.x, h = blockIdx.y, t = blockIdx.z;
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  const int nd = static_cast<int>((p.head_dim + 31) / 32);
  const int hd = static_cast<int>(p.head_dim);
  const int64_t g = h / (p.n_head / p.n_kv_head);
  const int32_t seq = p.token_seq[t];
  const int64_t pos = p.token_pos[t];
  const int64_t first = p.window > 0 ? max(static_cast<int64_t>(0), pos - p.window + 1) : 0;
  const int64_t lo = max(first, sp * p.split_len);
  const int64_t hi = min(pos + 1, (sp + 1) * p.split_len);
  const float* q = p.q + (t * p.n_head + h) * p.head_dim;
  float qr[kMaxHeadDim / 32], acc[kMaxHeadDim / 32];
#pragma unroll
  for (int i = 0; i < kMaxHeadDim / 32; ++i) {
    qr[i] = i < nd && lane + 32 * i < hd ? q[lane + 32 * i] * p.scale : 0.0f;
    acc[i] = 0.0f;
  }
  float m = -INFINITY, l = 0.0f;
  for (int64_t ps = lo + warp; ps < hi; ps += kDecodeWarps) {
    const int64_t row = kv_row(p, seq, ps, g);
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < kMaxHeadDim / 32; ++i)
      if (i < nd && lane + 32 * i < hd) s += qr[i] * kv_elem(p, p.k, row, lane + 32 * i);
    s = warp_sum(s);
    const float m_new = fmaxf(m, s);
    const float corr = expf(m - m_new);  // m = -inf: 0
    const float w = expf(s - m_new);
    l = l * corr + w;
#pragma unroll
    for (int i = 0; i < kMaxHeadDim / 32; ++i)
      if (i < nd && lane + 32 * i < hd)
        acc[i] = acc[i] * corr + w * kv_elem(p, p.v, row, lane + 32 * i);
    m = m_new;
  }
  if (lane == 0) {
    s_m[warp] = m;
    s_l[warp] = l;
  }
#pragma unroll
  for (int i = 0; i < kMaxHeadDim / 32; ++i)
    if (i < nd && lane + 32 * i < hd) s_acc[warp][lane + 32 * i] = acc[i];
  __syncthreads();
  float mx = -INFINITY;
  for (int w = 0; w < kDecodeWarps; ++w) mx = fmaxf(mx, s_m[w]);
  const int64_t slot = (t * p.n_head + h) * p.n_splits + sp;
  for (int64_t d = threadIdx.x; d < p.head_dim; d += blockDim.x) {
    float a = 0.0f;
    for (int w = 0; w < kDecodeWarps; ++w)
      if (s_m[w] != -INFINITY) a += s_acc[w][d] * expf(s_m[w] - mx);
    p.part_acc[slot * p.head_dim + d] = a;
  }
  if (threadIdx.x == 0) {
    float ls = 0.0f;
    for (int w = 0; w < kDecodeWarps; ++w)
      if (s_m[w] != -INFINITY) ls += s_l[w] * expf(s_m[w] - mx);
    p.part_ml[2 * slot] = mx;
    p.part_ml[2 * slot + 1] = ls;
  }
}

// grid: (n_head, n_tokens); block: head_dim threads (<= 256).
__global__ void decode_reduce_kernel(AttnParams p) {
  const int64_t h = blockIdx.x, t = blockIdx.y, d = threadIdx.x;
  const int64_t base = (t * p.n_head + h) * p.n_splits;
  float mx = -INFINITY;
  for (int64_t s = 0; s < p.n_splits; ++s) mx = fmaxf(mx, p.part_ml[2 * (base + s)]);
  float num = 0.0f, den = 0.0f;
  if (mx != -INFINITY) {
    for (int64_t s = 0; s < p.n_splits; ++s) {
      const float ms = p.part_ml[2 * (base + s)];
      if (ms == -INFINITY) continue;
      const float w = expf(ms - mx);
      den += w * p.part_ml[2 * (base + s) + 1];
      num += w * p.part_acc[(base + s) * p.head_dim + d];
    }
  }
  den = with_sink(p, h, mx, den);
  // No visible key: zeros rather than NaN, as the reference.
  p.out[(t * p.n_head + h) * p.head_dim + d] = den > 0.0f ? num / den : 0.0f;
}

// Splits of the context per (token, head): enough blocks to fill the device (about 1024), at least
// 256 positions per split, at most 64 splits. Bounds the partials to about
// (1024 + n_tokens * n_head) * (head_dim + 2) floats.
int64_t decode_splits(int64_t n_tokens, int64_t n_head, int64_t max_context) {
  const int64_t by_ctx = (max_context + 255) / 256;
  const int64_t want = (1024 + n_tokens * n_head - 1) / (n_tokens * n_head);
  return std::max<int64_t>(1, std::min<int64_t>({64, by_ctx, want}));
}

struct DecodeScratch {
  float* acc;
  float* ml;
};

DecodeScratch carve_decode(Carve& c, int64_t n_tokens, int64_t n_head, int64_t head_dim,
                           int64_t n_splits) {
  DecodeScratch s;
  s.acc = c.take<float>(static_cast<size_t>(n_tokens * n_head * n_splits * head_dim));
  s.ml = c.take<float>(static_cast<size_t>(n_tokens * n_head * n_splits * 2));
  return s;
}

bool kv_type_supported(DType t, int64_t head_dim) {
  if (head_dim <= 0) return false;
  return t == DType::F32 || t == DType::F16 || (t == DType::Q8_0 && head_dim % 32 == 0);
}

size_t kv_row_bytes(DType t, int64_t head_dim) {
  return t == DType::F32 ? head_dim * 4 : t == DType::F16 ? head_dim * 2 : head_dim / 32 * 34;
}

}  // namespace

size_t attention_scratch_bytes(int64_t max_tokens, int64_t n_head, int64_t head_dim,
                               int64_t max_context) {
  const int64_t ctx = std::max<int64_t>(max_context, 1);
  size_t need = 0;
  for (int64_t n = 1; n <= std::min(max_tokens, kDecodeMaxTokens); ++n) {
    Carve c(nullptr);
    carve_decode(c, n, n_head, head_dim, decode_splits(n, n_head, ctx));
    need = std::max(need, c.used());
  }
  return need;
}

}  // namespace detail

bool kv_store(const Context& ctx, const KvStoreArgs& a) {
  if (a.layout != KvLayout::kTokenRows) return false;  // the layout these kernels read
  if (!detail::kv_type_supported(a.kv_type, a.head_dim) || a.n_tokens < 0 || a.n_kv_head <= 0 ||
      a.n_tokens > 0x7fffffff || a.n_kv_head > 65535)
    return false;
  if (a.n_tokens == 0) return true;
  ARC_LAUNCH(dim3(static_cast<unsigned>(a.n_tokens), static_cast<unsigned>(a.n_kv_head)), 128, 0,
             ctx.stream, detail::kv_store_kernel)
  (a, detail::kv_row_bytes(a.kv_type, a.head_dim));
  return true;
}

bool paged_attention(const Context& ctx, const PagedAttentionArgs& a) {
  using namespace detail;
  if (a.layout != KvLayout::kTokenRows) return false;
  if (a.n_kv_head <= 0 || a.n_head <= 0 || a.n_head % a.n_kv_head != 0 || a.n_tokens < 0 ||
      a.head_dim % 8 != 0 || a.head_dim > kMaxHeadDim || a.block_size <= 0 ||
      !kv_type_supported(a.kv_type, a.head_dim) || a.n_head > 65535)
    return false;
  if (a.n_tokens == 0) return true;
  AttnParams p{};
  p.q = a.q;
  p.out = a.out;
  p.k = static_cast<const uint8_t*>(a.k_cache);
  p.v = static_cast<const uint8_t*>(a.v_cache);
  p.kv_type = static_cast<int>(a.kv_type);
  p.row_bytes = kv_row_bytes(a.kv_type, a.head_dim);
  p.n_tokens = a.n_tokens;
  p.n_head = a.n_head;
  p.n_kv_head = a.n_kv_head;
  p.head_dim = a.head_dim;
  p.block_size = a.block_size;
  p.max_blocks_per_seq = a.max_blocks_per_seq;
  p.token_seq = a.token_seq;
  p.token_pos = a.token_pos;
  p.block_tables = a.block_tables;
  p.scale = a.scale != 0.0f ? a.scale : 1.0f / sqrtf(static_cast<float>(a.head_dim));
  p.window = a.sliding_window;
  p.sinks = a.sinks;
  if (a.n_tokens > kDecodeMaxTokens) {
    if (a.n_tokens >= kPrefillTensorCoreMinTokens && prefill_tc_supported(p)) {
      return launch_attention_prefill_tc(ctx.stream, p);
    }
    return launch_attention_prefill(ctx.stream, p);
  }

  const int64_t max_ctx = std::max<int64_t>(1, a.max_blocks_per_seq * a.block_size);
  p.n_splits = decode_splits(a.n_tokens, a.n_head, max_ctx);
  p.split_len = (max_ctx + p.n_splits - 1) / p.n_splits;
  Carve c(ctx.scratch);
  const DecodeScratch s = carve_decode(c, a.n_tokens, a.n_head, a.head_dim, p.n_splits);
  if (c.used() > ctx.scratch_size) return false;
  p.part_acc = s.acc;
  p.part_ml = s.ml;
  ARC_LAUNCH(dim3(static_cast<unsigned>(p.n_splits), static_cast<unsigned>(a.n_head),
                  static_cast<unsigned>(a.n_tokens)),
             kDecodeWarps * kWarp, 0, ctx.stream, decode_kernel)
  (p);
  ARC_LAUNCH(dim3(static_cast<unsigned>(a.n_head), static_cast<unsigned>(a.n_tokens)),
             static_cast<unsigned>(a.head_dim), 0, ctx.stream, decode_reduce_kernel)
  (p);
  return true;
}

}  // namespace arc::kernels::cuda
