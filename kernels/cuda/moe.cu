// MoE routing and expert FFN (design in moe.cuh).
#include "cuda/elementwise.cuh"
#include "cuda/matmul.cuh"
#include "cuda/moe.cuh"
#include "cuda/quant_blocks.cuh"

namespace arc::kernels::cuda {
namespace detail {
namespace {

constexpr int kMaxK = 64;

// Expert parallelism: expert e relative to the rank's first, -1 when another rank holds it.
__device__ __forceinline__ int32_t local_id(const RouterArgs& a, int32_t e) {
  if (a.n_local <= 0) return e;
  const int64_t l = e - a.expert_begin;
  return l >= 0 && l < a.n_local ? static_cast<int32_t>(l) : -1;
}

// One warp per token; dynamic shared: [2][n_expert] floats (probability, selection score).
__global__ void route_kernel(RouterArgs a, int64_t k) {
  ARC_DYNAMIC_SHARED(float, sh);
  float* prob = sh;
  float* sel = sh + a.n_expert;
  const int lane = threadIdx.x;
  const int64_t t = blockIdx.x;
  const float* logit = a.logits + t * a.n_expert;
  if (a.scoring == RouterScoring::kSoftmax) {
    float mx = -INFINITY;
    for (int64_t e = lane; e < a.n_expert; e += kWarp) mx = fmaxf(mx, logit[e]);
    mx = warp_max(mx);
    float sum = 0.0f;
    for (int64_t e = lane; e < a.n_expert; e += kWarp) {
      prob[e] = expf(logit[e] - mx);
      sum += prob[e];
    }
    sum = warp_sum(sum);
    for (int64_t e = lane; e < a.n_expert; e += kWarp) sel[e] = prob[e] /= sum;
  } else {
    for (int64_t e = lane; e < a.n_expert; e += kWarp) {
      prob[e] = 1.0f / (1.0f + expf(-logit[e]));
      sel[e] = prob[e] + (a.bias ? a.bias[e] : 0.0f);
    }
  }
  __syncwarp();
  if (a.n_group > 1 && a.n_group_used < a.n_group) {
    // Group-limited selection: a group scores the sum of its two best selection scores; lane 0
    // keeps the n_group_used best (lower index on ties, marked NaN), the other groups' experts
    // drop out.
    float* gs = sh + 2 * a.n_expert;  // [n_group]
    const int64_t per = a.n_expert / a.n_group;
    for (int64_t g = lane; g < a.n_group; g += kWarp) {
      float b0 = -INFINITY, b1 = -INFINITY;
      for (int64_t e = g * per; e < (g + 1) * per; ++e) {
        const float v = sel[e];
        if (v > b0) {
          b1 = b0;
          b0 = v;
        } else if (v > b1) {
          b1 = v;
        }
      }
      gs[g] = per > 1 ? b0 + b1 : b0;
    }
    __syncwarp();
    if (lane == 0) {
      for (int64_t j = 0; j < a.n_group_used; ++j) {
        int64_t best = -1;
        for (int64_t g = 0; g < a.n_group; ++g)
          if (!isnan(gs[g]) && (best < 0 || gs[g] > gs[best])) best = g;
        if (best >= 0) gs[best] = NAN;
      }
    }
    __syncwarp();
    for (int64_t e = lane; e < a.n_expert; e += kWarp)
      if (!isnan(gs[e / per])) sel[e] = -INFINITY;
    __syncwarp();
  }
  int32_t chosen[kMaxK];
  float wsum = 0.0f;
  for (int64_t j = 0; j < k; ++j) {
    float bv = -INFINITY;
    int32_t bi = -1;
    for (int64_t e = lane; e < a.n_expert; e += kWarp) {
      const float v = sel[e];
      if (!isnan(v) && (bi < 0 || v > bv)) {  // e ascending per lane: keeps the lower id on ties
        bv = v;
        bi = static_cast<int32_t>(e);
      }
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      const float ov = __shfl_xor_sync(0xffffffffu, bv, o);
      const int32_t oi = __shfl_xor_sync(0xffffffffu, bi, o);
      if (oi >= 0 && (bi < 0 || ov > bv || (ov == bv && oi < bi))) {
        bv = ov;
        bi = oi;
      }
    }
    if (bi < 0) bi = 0;  // only NaN scores left (NaN logits): any id, weight follows
    chosen[j] = bi;
    wsum += prob[bi];
    __syncwarp();
    if (lane == 0) sel[bi] = NAN;  // taken
    __syncwarp();
  }
  if (lane == 0) {
    for (int64_t j = 0; j < k; ++j) {
      float w = prob[chosen[j]];
      if (a.normalize && wsum > 0.0f) w /= wsum;
      a.ids[t * a.k + j] = local_id(a, chosen[j]);
      a.weights[t * a.k + j] = w * a.weight_scale;
    }
  }
}

struct Buckets {
  int32_t* x_rows;     // [n_pairs] list entry -> token row (within the chunk)
  int32_t* inv;        // [n_pairs] pair -> list entry (-1: invalid expert id)
  int32_t* group_end;  // [n_expert]
  int32_t* tiles;      // [max_tiles, 2]
  int32_t* n_tiles;    // [1]
};

int64_t max_tiles_for(int64_t n_pairs, int64_t n_expert) {
  return (n_pairs + kMmaTile - 1) / kMmaTile + n_expert;
}

// One block. ids: [n_pairs]. Dynamic shared: [2][n_expert] ints (counts, cursors).
__global__ void bucket_kernel(const int32_t* __restrict__ ids, int64_t n_pairs, int64_t k,
                              int64_t n_expert, Buckets b) {
  ARC_DYNAMIC_SHARED(int32_t, ish);
  int32_t* count = ish;
  int32_t* cursor = ish + n_expert;
  for (int64_t e = threadIdx.x; e < n_expert; e += blockDim.x) count[e] = 0;
  __syncthreads();
  for (int64_t p = threadIdx.x; p < n_pairs; p += blockDim.x) {
    const int32_t e = ids[p];
    if (e >= 0 && e < n_expert) atomicAdd(&count[e], 1);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    int32_t off = 0, nt = 0;
    for (int64_t e = 0; e < n_expert; ++e) {
      const int32_t end = off + count[e];
      b.group_end[e] = end;
      for (int32_t s = off; s < end; s += kMmaTile) {
        b.tiles[2 * nt] = static_cast<int32_t>(e);
        b.tiles[2 * nt + 1] = s;
        ++nt;
      }
      cursor[e] = off;
      off = end;
    }
    *b.n_tiles = nt;
  }
  __syncthreads();
  for (int64_t p = threadIdx.x; p < n_pairs; p += blockDim.x) {
    const int32_t e = ids[p];
    if (e >= 0 && e < n_expert) {
      const int32_t at = atomicAdd(&cursor[e], 1);
      b.x_rows[at] = static_cast<int32_t>(p / k);
      b.inv[p] = at;
    } else {
      b.inv[p] = -1;
    }
  }
}

struct DecodeBufs {
  QuantizedX qx;  // [n_tokens, n_embd]
  float* g;       // [n_pairs, n_ff]
  float* u;       // [n_pairs, n_ff]
  QuantizedX qh;  // [n_pairs, n_ff]
  float* d;       // [n_pairs, n_embd]
};

DecodeBufs carve_decode(Carve& c, const MoeFfnArgs& a) {
  const int64_t pairs = a.n_tokens * a.k;
  DecodeBufs b;
  if (is_quant_format(a.gate_type) || is_quant_format(a.up_type))
    b.qx = carve_quantized_x(c, a.n_tokens, a.n_embd);
  b.g = c.take<float>(static_cast<size_t>(pairs * a.n_ff));
  b.u = c.take<float>(static_cast<size_t>(pairs * a.n_ff));
  if (is_quant_format(a.down_type)) b.qh = carve_quantized_x(c, pairs, a.n_ff);
  b.d = c.take<float>(static_cast<size_t>(pairs * a.n_embd));
  return b;
}

struct PrefillBufs {
  Buckets bk;
  float* g;  // [n_pairs, n_ff] by list entry
  float* u;
  float* d;  // [n_pairs, n_embd] by list entry
};

PrefillBufs carve_prefill(Carve& c, int64_t n_tokens, const MoeFfnArgs& a) {
  const int64_t pairs = n_tokens * a.k;
  PrefillBufs b;
  b.bk.x_rows = c.take<int32_t>(static_cast<size_t>(pairs));
  b.bk.inv = c.take<int32_t>(static_cast<size_t>(pairs));
  b.bk.group_end = c.take<int32_t>(static_cast<size_t>(a.n_expert));
  b.bk.tiles = c.take<int32_t>(static_cast<size_t>(2 * max_tiles_for(pairs, a.n_expert)));
  b.bk.n_tiles = c.take<int32_t>(1);
  b.g = c.take<float>(static_cast<size_t>(pairs * a.n_ff));
  b.u = c.take<float>(static_cast<size_t>(pairs * a.n_ff));
  b.d = c.take<float>(static_cast<size_t>(pairs * a.n_embd));
  return b;
}

struct Strides {
  size_t gate_row, up_row, down_row, gate_e, up_e, down_e;
};

// g = act(g + gate bias, u + up bias) on the rows of `pairs` pairs (row of pair p: inv[p] or p):
// the plain SwiGLU kernel when the args have no biases and the plain activation.
void activate(Stream s, const MoeFfnArgs& a, float* g, const float* u, const int32_t* ids,
              const int32_t* inv, int64_t pairs) {
  if (a.act == MoeActivation::kSwiGlu && a.gate_bias == nullptr && a.up_bias == nullptr) {
    launch_swiglu(s, g, u, g, pairs * a.n_ff);
    return;
  }
  ExpertActArgs e;
  e.g = g;
  e.u = u;
  e.ids = ids;
  e.inv = inv;
  e.n_pairs = pairs;
  e.n_ff = a.n_ff;
  e.n_expert = a.n_expert;
  e.gate_bias = a.gate_bias;
  e.up_bias = a.up_bias;
  e.oai = a.act == MoeActivation::kSwiGluOai;
  e.alpha = a.alpha;
  e.limit = a.limit;
  launch_expert_act(s, e);
}

bool decode_ffn(const Context& ctx, const MoeFfnArgs& a, const Strides& st) {
  Carve c(ctx.scratch);
  const DecodeBufs b = carve_decode(c, a);
  if (c.used() > ctx.scratch_size) return false;
  const Stream s = ctx.stream;
  const int64_t pairs = a.n_tokens * a.k;
  if (b.qx.q) launch_quantize_x(s, a.x, a.n_embd, a.n_tokens, a.n_embd, b.qx);
  MatvecArgs m;
  m.expert_ids = a.ids;
  m.n_pairs = pairs;
  m.n_expert = a.n_expert;
  m.n_tok = 1;
  m.n_out = a.n_ff;
  m.n_in = a.n_embd;
  m.x_div = a.k;
  m.qx = b.qx;
  m.x = a.x;
  m.x_stride = a.n_embd;
  m.y_stride = a.n_ff;
  m.w = static_cast<const uint8_t*>(a.gate);
  m.row_bytes = st.gate_row;
  m.expert_bytes = st.gate_e;
  m.y = b.g;
  if (!launch_matvec(s, a.gate_type, m)) return false;
  m.w = static_cast<const uint8_t*>(a.up);
  m.row_bytes = st.up_row;
  m.expert_bytes = st.up_e;
  m.y = b.u;
  if (!launch_matvec(s, a.up_type, m)) return false;
  activate(s, a, b.g, b.u, a.ids, nullptr, pairs);
  if (b.qh.q) launch_quantize_x(s, b.g, a.n_ff, pairs, a.n_ff, b.qh);
  m.n_out = a.n_embd;
  m.n_in = a.n_ff;
  m.x_div = 1;
  m.qx = b.qh;
  m.x = b.g;
  m.x_stride = a.n_ff;
  m.y_stride = a.n_embd;
  m.w = static_cast<const uint8_t*>(a.down);
  m.row_bytes = st.down_row;
  m.expert_bytes = st.down_e;
  m.y = b.d;
  if (!launch_matvec(s, a.down_type, m)) return false;
  CombineArgs cb;
  cb.src = b.d;
  cb.weights = a.weights;
  cb.ids = a.ids;
  cb.n_expert = a.n_expert;
  cb.n_tokens = a.n_tokens;
  cb.k = a.k;
  cb.d = a.n_embd;
  cb.down_bias = a.down_bias;
  cb.y = a.y;
  cb.accumulate = a.accumulate;
  launch_combine(s, cb);
  return true;
}

bool prefill_ffn(const Context& ctx, const MoeFfnArgs& a, const Strides& st) {
  int64_t chunk = std::min(a.n_tokens, kMoeChunkTokens);
  while (chunk > 0) {
    Carve c(nullptr);
    carve_prefill(c, chunk, a);
    if (c.used() <= ctx.scratch_size) break;
    chunk /= 2;
  }
  if (chunk == 0) return false;
  const Stream s = ctx.stream;
  for (int64_t t0 = 0; t0 < a.n_tokens; t0 += chunk) {
    const int64_t nt = std::min(chunk, a.n_tokens - t0);
    const int64_t pairs = nt * a.k;
    Carve c(ctx.scratch);
    const PrefillBufs b = carve_prefill(c, nt, a);
    const size_t smem = static_cast<size_t>(2 * a.n_expert) * sizeof(int32_t);
    ARC_LAUNCH(1, 1024, smem, s, bucket_kernel)(a.ids + t0 * a.k, pairs, a.k, a.n_expert, b.bk);
    MmaArgs m;
    m.tiles = b.bk.tiles;
    m.n_tiles = b.bk.n_tiles;
    m.group_end = b.bk.group_end;
    m.max_tiles = max_tiles_for(pairs, a.n_expert);
    m.x_rows = b.bk.x_rows;
    m.x = a.x + t0 * a.n_embd;
    m.x_stride = a.n_embd;
    m.n_out = a.n_ff;
    m.n_in = a.n_embd;
    m.y_stride = a.n_ff;
    m.w = static_cast<const uint8_t*>(a.gate);
    m.row_bytes = st.gate_row;
    m.expert_bytes = st.gate_e;
    m.y = b.g;
    if (!launch_mma(s, a.gate_type, m)) return false;
    m.w = static_cast<const uint8_t*>(a.up);
    m.row_bytes = st.up_row;
    m.expert_bytes = st.up_e;
    m.y = b.u;
    if (!launch_mma(s, a.up_type, m)) return false;
    activate(s, a, b.g, b.u, a.ids + t0 * a.k, b.bk.inv, pairs);
    m.x_rows = nullptr;
    m.x = b.g;
    m.x_stride = a.n_ff;
    m.n_out = a.n_embd;
    m.n_in = a.n_ff;
    m.y_stride = a.n_embd;
    m.w = static_cast<const uint8_t*>(a.down);
    m.row_bytes = st.down_row;
    m.expert_bytes = st.down_e;
    m.y = b.d;
    if (!launch_mma(s, a.down_type, m)) return false;
    CombineArgs cb;
    cb.src = b.d;
    cb.inv = b.bk.inv;
    cb.weights = a.weights + t0 * a.k;
    cb.ids = a.ids + t0 * a.k;
    cb.n_expert = a.n_expert;
    cb.n_tokens = nt;
    cb.k = a.k;
    cb.d = a.n_embd;
    cb.down_bias = a.down_bias;
    cb.y = a.y + t0 * a.n_embd;
    cb.accumulate = a.accumulate;
    launch_combine(s, cb);
  }
  return true;
}

}  // namespace

size_t moe_scratch_bytes(int64_t max_tokens, int64_t n_embd, int64_t n_ff, int64_t n_expert,
                         int64_t k) {
  MoeFfnArgs a;
  a.n_embd = n_embd;
  a.n_ff = n_ff;
  a.n_expert = n_expert;
  a.k = k;
  a.gate_type = a.up_type = a.down_type = DType::Q8_0;  // quantized: the larger decode need
  a.n_tokens = std::min<int64_t>(max_tokens, kMatvecMaxTokens);
  Carve dc(nullptr);
  carve_decode(dc, a);
  size_t need = dc.used();
  if (max_tokens > kMatvecMaxTokens) {
    Carve pc(nullptr);
    carve_prefill(pc, std::min(max_tokens, kMoeChunkTokens), a);
    need = std::max(need, pc.used());
  }
  return need;
}

}  // namespace detail

bool moe_route(const Context& ctx, const RouterArgs& a) {
  if (a.n_tokens < 0 || a.n_tokens > 0x7fffffff || a.n_expert <= 0 || a.k <= 0 ||
      a.k > detail::kMaxK || a.n_expert > 6 * 1024)
    return false;
  if (a.n_group > 1 && (a.n_expert % a.n_group != 0 || a.n_group_used < 1)) return false;
  if (a.n_tokens == 0) return true;
  const int64_t k = std::min(a.k, a.n_expert);
  const size_t smem =
      static_cast<size_t>(2 * a.n_expert + std::max<int64_t>(a.n_group, 1)) * sizeof(float);
  ARC_LAUNCH(static_cast<unsigned>(a.n_tokens), detail::kWarp, smem, ctx.stream,
             detail::route_kernel)
  (a, k);
  return true;
}

bool moe_ffn(const Context& ctx, const MoeFfnArgs& a) {
  using namespace detail;
  for (DType t : {a.gate_type, a.up_type, a.down_type})
    if (!is_float_format(t) && !is_quant_format(t)) return false;
  const auto gate_row = dtype_row_bytes(a.gate_type, static_cast<uint64_t>(a.n_embd));
  const auto up_row = dtype_row_bytes(a.up_type, static_cast<uint64_t>(a.n_embd));
  const auto down_row = dtype_row_bytes(a.down_type, static_cast<uint64_t>(a.n_ff));
  if (!gate_row || !up_row || !down_row || a.n_tokens < 0 || a.k <= 0 || a.n_expert <= 0 ||
      a.n_embd <= 0 || a.n_ff <= 0 || a.n_expert > 6 * 1024)
    return false;
  Strides st;
  st.gate_row = *gate_row;
  st.up_row = *up_row;
  st.down_row = *down_row;
  st.gate_e = a.gate_expert_bytes ? a.gate_expert_bytes : *gate_row * a.n_ff;
  st.up_e = a.up_expert_bytes ? a.up_expert_bytes : *up_row * a.n_ff;
  st.down_e = a.down_expert_bytes ? a.down_expert_bytes : *down_row * a.n_embd;
  if (!weights_aligned(a.gate_type, a.gate, st.gate_row, st.gate_e) ||
      !weights_aligned(a.up_type, a.up, st.up_row, st.up_e) ||
      !weights_aligned(a.down_type, a.down, st.down_row, st.down_e))
    return false;
  if (a.n_tokens == 0) return true;
  if (a.n_tokens <= kMatvecMaxTokens) {
    if (a.n_tokens * a.k > 65535) return false;
    return decode_ffn(ctx, a, st);
  }
  return prefill_ffn(ctx, a, st);
}

}  // namespace arc::kernels::cuda
