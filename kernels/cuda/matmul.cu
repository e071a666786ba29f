// Matrix products for every weight format: activation quantization, the dp4a / F32 matvec
// kernels for decode and the WMMA tensor-core kernel for prefill (see matmul.cuh for the design).
#include <mma.h>

#include "cuda/matmul.cuh"
#include "cuda/quant_blocks.cuh"

namespace arc::kernels::cuda {
namespace detail {
namespace {

constexpr int kMatvecWarps = 4;  // rows per matvec block (one warp each)

// One warp per block of 32 activations. x: [n_rows, x_stride]; out as QuantizedX.
__global__ void quantize_x_kernel(const float* __restrict__ x, int64_t x_stride, int64_t n_rows,
                                  int64_t n_blocks, QuantizedX qx) {
  const int64_t gw = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp;
  const int lane = threadIdx.x % kWarp;
  if (gw >= n_rows * n_blocks) return;
  const int64_t r = gw / n_blocks, b = gw % n_blocks;
  const float v = x[r * x_stride + b * 32 + lane];
  const float amax = warp_max(fabsf(v));
  const float d = amax / 127.0f;
  const int q = d > 0.0f ? __float2int_rn(v / d) : 0;
  const float sum = warp_sum(static_cast<float>(q));
  const int64_t n_in = n_blocks * 32;
  qx.q[r * n_in + b * 32 + lane] = static_cast<int8_t>(q);
  if (lane == 0) {
    qx.d[r * n_blocks + b] = d;
    qx.s[r * n_blocks + b] = d * sum;
  }
}

__device__ __forceinline__ const uint8_t* matvec_weights(const MatvecArgs& a, int64_t pair,
                                                         bool* valid) {
  if (a.expert_ids == nullptr) return a.w;
  const int32_t e = a.expert_ids[pair];
  *valid = e >= 0 && e < a.n_expert;
  return a.w + static_cast<size_t>(*valid ? e : 0) * a.expert_bytes;
}

__device__ __forceinline__ void matvec_store(const MatvecArgs& a, float* acc, int64_t yrow0,
                                             int64_t o, bool valid) {
  const int lane = threadIdx.x % kWarp;
#pragma unroll
  for (int t = 0; t < kMatvecMaxTokens; ++t) {
    if (t >= a.n_tok) break;
    const float v = warp_sum(acc[t]);
    if (lane == 0) {
      float* y = a.y + (yrow0 + t) * a.y_stride + o;
      const float r = valid ? v : 0.0f;  // an out-of-range expert id contributes nothing
      *y = a.accumulate ? *y + r : r;
    }
  }
}

// Quantized weights x int8 activations. grid: (ceil(n_out / 4), n_pairs); block: 128.
template <int T>
__global__ void __launch_bounds__(kMatvecWarps* kWarp) matvec_q_kernel(MatvecArgs a, bool a16) {
  const int lane = threadIdx.x % kWarp;
  const int64_t o = static_cast<int64_t>(blockIdx.x) * kMatvecWarps + threadIdx.x / kWarp;
  if (o >= a.n_out) return;
  const int64_t pair = blockIdx.y;
  bool valid = true;
  const uint8_t* w = matvec_weights(a, pair, &valid) + o * a.row_bytes;
  if (!valid) {  // an expert another rank holds: zeros, without reading any weights
    float zero[kMatvecMaxTokens] = {};
    matvec_store(a, zero, pair, o, false);
    return;
  }
  const int64_t xrow0 = a.expert_ids ? pair / a.x_div : 0;
  const int64_t yrow0 = a.expert_ids ? pair : 0;
  const int64_t n_units = a.n_in / 32;
  float acc[kMatvecMaxTokens] = {};
  // Two units in flight per lane: more outstanding loads per warp for the memory system.
#pragma unroll 2
  for (int64_t u = lane; u < n_units; u += kWarp) {
    Unit q;
    load_unit<T>(w, u, a16, q);
#pragma unroll
    for (int t = 0; t < kMatvecMaxTokens; ++t) {
      if (t >= a.n_tok) break;
      const int64_t xr = xrow0 + t;
      const int4* xv = reinterpret_cast<const int4*>(a.qx.q + xr * a.n_in + u * 32);
      const int4 x0 = __ldg(xv), x1 = __ldg(xv + 1);
      int lo = __dp4a(q.q[0], x0.x, 0);
      lo = __dp4a(q.q[1], x0.y, lo);
      lo = __dp4a(q.q[2], x0.z, lo);
      lo = __dp4a(q.q[3], x0.w, lo);
      int hi = __dp4a(q.q[4], x1.x, 0);
      hi = __dp4a(q.q[5], x1.y, hi);
      hi = __dp4a(q.q[6], x1.z, hi);
      hi = __dp4a(q.q[7], x1.w, hi);
      const float xd = __ldg(a.qx.d + xr * n_units + u);
      const float xs = __ldg(a.qx.s + xr * n_units + u);
      acc[t] += (q.s_lo * static_cast<float>(lo) + q.s_hi * static_cast<float>(hi)) * xd - q.m * xs;
    }
  }
  matvec_store(a, acc, yrow0, o, valid);
}

// Eight float weights at element 8c of a row (vector path: row 16-byte aligned).
template <int T>
__device__ __forceinline__ void load_float8(const uint8_t* row, int64_t c, float w[8]) {
  if constexpr (T == kF32) {
    const float4* p = reinterpret_cast<const float4*>(row) + 2 * c;
    const float4 a = __ldg(p), b = __ldg(p + 1);
    w[0] = a.x, w[1] = a.y, w[2] = a.z, w[3] = a.w, w[4] = b.x, w[5] = b.y, w[6] = b.z, w[7] = b.w;
  } else {
    const uint4 v = __ldg(reinterpret_cast<const uint4*>(row) + c);
    const uint32_t u[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      if constexpr (T == kF16) {
        w[2 * i] = half_bits_to_float(static_cast<uint16_t>(u[i] & 0xFFFF));
        w[2 * i + 1] = half_bits_to_float(static_cast<uint16_t>(u[i] >> 16));
      } else {
        w[2 * i] = __uint_as_float(u[i] << 16);
        w[2 * i + 1] = __uint_as_float(u[i] & 0xFFFF0000u);
      }
    }
  }
}

// Float weights x F32 activations. vec: 16-byte loads (n_in % 8 == 0, everything aligned).
template <int T>
__global__ void __launch_bounds__(kMatvecWarps* kWarp) matvec_f_kernel(MatvecArgs a, bool vec) {
  const int lane = threadIdx.x % kWarp;
  const int64_t o = static_cast<int64_t>(blockIdx.x) * kMatvecWarps + threadIdx.x / kWarp;
  if (o >= a.n_out) return;
  const int64_t pair = blockIdx.y;
  bool valid = true;
  const uint8_t* w = matvec_weights(a, pair, &valid) + o * a.row_bytes;
  if (!valid) {  // an expert another rank holds: zeros, without reading any weights
    float zero[kMatvecMaxTokens] = {};
    matvec_store(a, zero, pair, o, false);
    return;
  }
  const int64_t xrow0 = a.expert_ids ? pair / a.x_div : 0;
  const int64_t yrow0 = a.expert_ids ? pair : 0;
  float acc[kMatvecMaxTokens] = {};
  if (vec) {
    for (int64_t c = lane; c < a.n_in / 8; c += kWarp) {
      float wv[8];
      load_float8<T>(w, c, wv);
#pragma unroll
      for (int t = 0; t < kMatvecMaxTokens; ++t) {
        if (t >= a.n_tok) break;
        const float4* xp = reinterpret_cast<const float4*>(a.x + (xrow0 + t) * a.x_stride) + 2 * c;
        const float4 x0 = __ldg(xp), x1 = __ldg(xp + 1);
        acc[t] += wv[0] * x0.x + wv[1] * x0.y + wv[2] * x0.z + wv[3] * x0.w + wv[4] * x1.x +
                  wv[5] * x1.y + wv[6] * x1.z + wv[7] * x1.w;
      }
    }
  } else {
    for (int64_t i = lane; i < a.n_in; i += kWarp) {
      const float wv = load_float_elem<T>(w, i);
#pragma unroll
      for (int t = 0; t < kMatvecMaxTokens; ++t) {
        if (t >= a.n_tok) break;
        acc[t] += wv * __ldg(a.x + (xrow0 + t) * a.x_stride + i);
      }
    }
  }
  matvec_store(a, acc, yrow0, o, valid);
}

// ---- tensor cores ----
constexpr int kTile = kMmaTile;  // output rows and tokens per block
constexpr int kK = 32;           // K step
constexpr int kLdh = kK + 8;     // padded shared row (halves), a multiple of 8 for WMMA
constexpr int kLdc = kTile + 4;  // padded output staging row (floats)
constexpr int kMmaThreads = 128;

struct MmaShared {
  __align__(32) half w[kTile * kLdh];   // [out][k]
  __align__(32) half x[kTile * kLdh];   // [token][k]
  __align__(32) float c[kTile * kLdc];  // [token][out]
};

// Weight chunk of 16 elements of row `row` starting at element k (k % 16 == 0) as floats;
// elements past n_in are zero.
template <int T>
__device__ __forceinline__ void weight_chunk16(const uint8_t* row, int64_t k, int64_t n_in,
                                               float v[16]) {
  if constexpr (T == kF32 || T == kF16 || T == kBF16) {
#pragma unroll
    for (int i = 0; i < 16; ++i) v[i] = k + i < n_in ? load_float_elem<T>(row, k + i) : 0.0f;
  } else {
    dequant16<T>(row, k / 16, v);  // n_in is a multiple of 32 here
  }
}

// grid: (ceil(n_out / 64), token tiles); block: 128 (4 warps, 32x32 outputs each).
template <int T>
__global__ void __launch_bounds__(kMmaThreads) mma_kernel(MmaArgs a) {
  using namespace nvcuda;
  ARC_SHARED(MmaShared, sh, );
  const int tid = threadIdx.x, warp = tid / kWarp;
  const int64_t o0 = static_cast<int64_t>(blockIdx.x) * kTile;
  int64_t row_begin, row_end;
  const uint8_t* w = a.w;
  if (a.tiles != nullptr) {
    if (blockIdx.y >= static_cast<unsigned>(*a.n_tiles)) return;
    const int32_t e = a.tiles[2 * blockIdx.y];
    row_begin = a.tiles[2 * blockIdx.y + 1];
    row_end = min(row_begin + kTile, static_cast<int64_t>(a.group_end[e]));
    w += static_cast<size_t>(e) * a.expert_bytes;
  } else {
    row_begin = static_cast<int64_t>(blockIdx.y) * kTile;
    row_end = min(row_begin + kTile, a.n_tokens);
  }
  // Each thread loads half a row (16 elements) of both tiles per K step.
  const int lr = tid / 2, lc = 16 * (tid % 2);
  const int64_t wo = o0 + lr;
  const uint8_t* wrow = wo < a.n_out ? w + wo * a.row_bytes : nullptr;
  const int64_t xi = row_begin + lr;
  const float* xrow = nullptr;
  if (xi < row_end) xrow = a.x + static_cast<int64_t>(a.x_rows ? a.x_rows[xi] : xi) * a.x_stride;

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);
  const int wm = 32 * (warp / 2), wn = 32 * (warp % 2);

  // Software pipeline: the global loads (and dequantisation) of step k0 + 32 are issued before
  // the tensor-core work of step k0, so their latency overlaps it.
  float wv[16], xv[16];
  auto load_step = [&](int64_t k0) {
    if (wrow != nullptr) {
      weight_chunk16<T>(wrow, k0 + lc, a.n_in, wv);
    } else {
#pragma unroll
      for (int i = 0; i < 16; ++i) wv[i] = 0.0f;
    }
#pragma unroll
    for (int i = 0; i < 16; ++i) {
      const int64_t k = k0 + lc + i;
      xv[i] = xrow != nullptr && k < a.n_in ? __ldg(xrow + k) : 0.0f;
    }
  };
  load_step(0);
  for (int64_t k0 = 0; k0 < a.n_in; k0 += kK) {
#pragma unroll
    for (int i = 0; i < 16; ++i) {
      sh.w[lr * kLdh + lc + i] = __float2half(wv[i]);
      sh.x[lr * kLdh + lc + i] = __float2half(xv[i]);
    }
    __syncthreads();
    if (k0 + kK < a.n_in) load_step(k0 + kK);
#pragma unroll
    for (int kk = 0; kk < kK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa[2];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb[2];
#pragma unroll
      for (int i = 0; i < 2; ++i)
        wmma::load_matrix_sync(fa[i], sh.w + (wm + 16 * i) * kLdh + kk, kLdh);
#pragma unroll
      for (int j = 0; j < 2; ++j)
        wmma::load_matrix_sync(fb[j], sh.x + (wn + 16 * j) * kLdh + kk, kLdh);
#pragma unroll
      for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
    }
    __syncthreads();
  }
  // Stage as [token][out] so the global stores below are coalesced along out.
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j)
      wmma::store_matrix_sync(sh.c + (wn + 16 * j) * kLdc + wm + 16 * i, acc[i][j], kLdc,
                              wmma::mem_col_major);
  __syncthreads();
  for (int idx = tid; idx < kTile * kTile; idx += kMmaThreads) {
    const int ol = idx % kTile, tl = idx / kTile;
    const int64_t o = o0 + ol, r = row_begin + tl;
    if (o >= a.n_out || r >= row_end) continue;
    float* y = a.y + r * a.y_stride + o;
    const float v = sh.c[tl * kLdc + ol];
    *y = a.accumulate ? *y + v : v;
  }
}

}  // namespace

QuantizedX carve_quantized_x(Carve& c, int64_t n_rows, int64_t n_in) {
  QuantizedX q;
  q.q = c.take<int8_t>(static_cast<size_t>(n_rows * n_in));
  q.d = c.take<float>(static_cast<size_t>(n_rows * (n_in / 32)));
  q.s = c.take<float>(static_cast<size_t>(n_rows * (n_in / 32)));
  return q;
}

void launch_quantize_x(Stream s, const float* x, int64_t x_stride, int64_t n_rows, int64_t n_in,
                       const QuantizedX& qx) {
  const int64_t n_blocks = n_in / 32;
  const int64_t threads = n_rows * n_blocks * kWarp;
  if (threads == 0) return;
  ARC_LAUNCH(ceil_div(threads, 256), 256, 0, s, quantize_x_kernel)
  (x, x_stride, n_rows, n_blocks, qx);
}

bool weights_aligned(DType t, const void* w, size_t row_bytes, size_t expert_bytes) {
  const auto p = reinterpret_cast<uintptr_t>(w);
  size_t align = 1;
  switch (t) {
    case DType::F32:
    case DType::Q4_K:
    case DType::Q5_K:
      align = 4;
      break;
    case DType::F16:
    case DType::BF16:
    case DType::Q8_0:
    case DType::Q4_0:
    case DType::Q6_K:
      align = 2;
      break;
    default:
      break;
  }
  return p % align == 0 && row_bytes % align == 0 && expert_bytes % align == 0;
}

bool launch_matvec(Stream s, DType t, const MatvecArgs& a) {
  if (a.n_tok < 1 || a.n_tok > kMatvecMaxTokens || a.n_pairs < 1 || a.n_pairs > 65535) return false;
  if (a.n_out == 0) return true;
  const dim3 grid(ceil_div(a.n_out, kMatvecWarps), static_cast<unsigned>(a.n_pairs));
  const dim3 block(kMatvecWarps * kWarp);
  const auto al16 = [&](const void* p, size_t stride) {
    return reinterpret_cast<uintptr_t>(p) % 16 == 0 && stride % 16 == 0;
  };
  const bool w16 = al16(a.w, a.row_bytes) && a.expert_bytes % 16 == 0;
  if (is_float_format(t)) {
    const bool vec = a.n_in % 8 == 0 && w16 && al16(a.x, a.x_stride * sizeof(float));
    return dispatch_format(t, [&](auto tc) {
      constexpr int T = decltype(tc)::value;
      if constexpr (T == kF32 || T == kF16 || T == kBF16) {
        ARC_LAUNCH(grid, block, 0, s, matvec_f_kernel<T>)(a, vec);
      }
    });
  }
  if (!is_quant_format(t) || a.n_in % 32 != 0) return false;
  return dispatch_format(t, [&](auto tc) {
    constexpr int T = decltype(tc)::value;
    if constexpr (T != kF32 && T != kF16 && T != kBF16) {
      ARC_LAUNCH(grid, block, 0, s, matvec_q_kernel<T>)(a, w16);
    }
  });
}

bool launch_mma(Stream s, DType t, const MmaArgs& a) {
  if (!is_float_format(t) && (!is_quant_format(t) || a.n_in % 32 != 0)) return false;
  const int64_t tiles = a.tiles ? a.max_tiles : (a.n_tokens + kTile - 1) / kTile;
  if (a.n_out == 0 || tiles == 0) return true;
  if (tiles > 65535) return false;
  const dim3 grid(ceil_div(a.n_out, kTile), static_cast<unsigned>(tiles));
  return dispatch_format(t, [&](auto tc) {
    constexpr int T = decltype(tc)::value;
    ARC_LAUNCH(grid, kMmaThreads, 0, s, mma_kernel<T>)(a);
  });
}

size_t matmul_scratch_bytes(int64_t max_tokens, int64_t max_dim) {
  Carve c(nullptr);
  carve_quantized_x(c, std::min<int64_t>(max_tokens, kMatvecMaxTokens), max_dim);
  return c.used();
}

}  // namespace detail

bool matmul(const Context& ctx, const MatmulArgs& a) {
  using namespace detail;
  const auto row_bytes = dtype_row_bytes(a.w_type, static_cast<uint64_t>(a.n_in));
  if (!row_bytes || a.n_out < 0 || a.n_tokens < 0 || a.n_in < 0) return false;
  const size_t w_row = a.w_row_bytes != 0 ? a.w_row_bytes : static_cast<size_t>(*row_bytes);
  if (!weights_aligned(a.w_type, a.w, w_row, 0)) return false;
  if (a.n_tokens == 0 || a.n_out == 0) return true;
  const int64_t xs = a.x_stride != 0 ? a.x_stride : a.n_in;
  const int64_t ys = a.y_stride != 0 ? a.y_stride : a.n_out;
  if (a.n_tokens > kMatvecMaxTokens) {
    MmaArgs m;
    m.w = static_cast<const uint8_t*>(a.w);
    m.row_bytes = w_row;
    m.n_out = a.n_out;
    m.n_in = a.n_in;
    m.x = a.x;
    m.x_stride = xs;
    m.y = a.y;
    m.y_stride = ys;
    m.accumulate = a.accumulate;
    m.n_tokens = a.n_tokens;
    return launch_mma(ctx.stream, a.w_type, m);
  }
  MatvecArgs v;
  v.w = static_cast<const uint8_t*>(a.w);
  v.row_bytes = w_row;
  v.n_out = a.n_out;
  v.n_in = a.n_in;
  v.n_tok = static_cast<int>(a.n_tokens);
  v.x = a.x;
  v.x_stride = xs;
  v.y = a.y;
  v.y_stride = ys;
  v.accumulate = a.accumulate;
  if (is_quant_format(a.w_type)) {
    if (a.n_in % 32 != 0) return false;
    Carve c(ctx.scratch);
    v.qx = carve_quantized_x(c, a.n_tokens, a.n_in);
    if (c.used() > ctx.scratch_size) return false;
    launch_quantize_x(ctx.stream, a.x, xs, a.n_tokens, a.n_in, v.qx);
  }
  return launch_matvec(ctx.stream, a.w_type, v);
}

}  // namespace arc::kernels::cuda
