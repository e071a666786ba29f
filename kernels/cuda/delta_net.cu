// Gated DeltaNet conv, delta rule, gated norm, state copy and sigmoid_mul (design in
// delta_net.cuh).
#include <algorithm>

#include "cuda/delta_net.cuh"

namespace arc::kernels::cuda {
namespace detail {
namespace {

constexpr int kThreads = 256;

__device__ __forceinline__ float sigmoidf_dev(float x) {
  return 1.0f / (1.0f + expf(-x));
}

// True when token t is the first of its sequence's run (the block that owns the run).
__device__ __forceinline__ bool starts_run(const int32_t* token_state, int64_t t) {
  return t == 0 || token_state[t - 1] != token_state[t];
}

// grid: (n_tokens, channel blocks); block: kThreads threads, one per channel. The window of the
// last kDeltaConvMaxKernel inputs sits in registers with the current token at the end, the
// weights aligned to it (leading weights 0 when kernel < kDeltaConvMaxKernel), so every register
// index is a compile-time constant.
__global__ void delta_conv_kernel(DeltaConvArgs a) {
  constexpr int kMax = static_cast<int>(kDeltaConvMaxKernel);
  const int64_t t0 = blockIdx.x;
  if (!starts_run(a.token_state, t0)) return;
  const int64_t c_n = a.channels, c = blockIdx.y * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (c >= c_n) return;
  const int32_t slot = a.token_state[t0];
  const int64_t k_n = a.kernel, tail = k_n - 1;
  float w[kMax], win[kMax];
#pragma unroll
  for (int i = 0; i < kMax; ++i) {
    const int64_t wi = i - (kMax - k_n);  // weight index aligned to the window's end
    w[i] = wi >= 0 ? a.weight[c * k_n + wi] : 0.0f;
    win[i] = 0.0f;
  }
  float* state = tail > 0 ? a.conv_states + static_cast<int64_t>(slot) * tail * c_n : nullptr;
  // [tail, channels] oldest first -> win[kMax - 1 - tail .. kMax - 2].
#pragma unroll
  for (int i = 0; i < kMax - 1; ++i) {
    const int64_t si = i - (kMax - 1 - tail);
    if (si >= 0) win[i] = state[si * c_n + c];
  }
  const float bias = a.bias != nullptr ? a.bias[c] : 0.0f;
  for (int64_t t = t0; t < a.n_tokens && a.token_state[t] == slot; ++t) {
    win[kMax - 1] = a.x[t * c_n + c];
    float s = bias;
#pragma unroll
    for (int i = 0; i < kMax; ++i) s += w[i] * win[i];
    a.y[t * c_n + c] = s * sigmoidf_dev(s);
#pragma unroll
    for (int i = 0; i < kMax - 1; ++i) win[i] = win[i + 1];
    const int32_t snap = a.token_snapshot != nullptr ? a.token_snapshot[t] : -1;
    if (snap >= 0 && tail > 0) {
      float* dst = a.conv_states + static_cast<int64_t>(snap) * tail * c_n;
#pragma unroll
      for (int i = 0; i < kMax - 1; ++i) {
        const int64_t si = i - (kMax - 1 - tail);
        if (si >= 0) dst[si * c_n + c] = win[i];
      }
    }
  }
  if (tail > 0) {
#pragma unroll
    for (int i = 0; i < kMax - 1; ++i) {
      const int64_t si = i - (kMax - 1 - tail);
      if (si >= 0) state[si * c_n + c] = win[i];
    }
  }
}

// grid: (n_tokens, n_v_heads); block: 2 * head_v_dim threads rounded up to a warp multiple.
// Column j of the head's state, S[:, j] ([head_k_dim]), lives in the registers of the lane pair
// (2j, 2j + 1): the even lane holds rows [0, KHalf), the odd one rows [KHalf, 2 KHalf), and the
// pair sums its two halves with one shuffle. KHalf * 2 >= head_k_dim (64 registers of state per
// thread for head_k_dim 128, so nothing spills).
template <int KHalf, bool kFull>  // kFull: head_k_dim == 2 * KHalf (no partial half)
__global__ void gated_delta_rule_kernel(GatedDeltaRuleArgs a) {
  ARC_SHARED(float, s_q, [2 * KHalf]);
  ARC_SHARED(float, s_k, [2 * KHalf]);
  ARC_SHARED(float, red, [2][32]);
  const int64_t t0 = blockIdx.x, h = blockIdx.y;
  if (!starts_run(a.token_state, t0)) return;
  const int32_t slot = a.token_state[t0];
  const int64_t dk = a.head_k_dim, dv = a.head_v_dim, hv_n = a.n_v_heads;
  const int64_t hk = h / (hv_n / a.n_k_heads), slot_floats = hv_n * dk * dv;
  const int tid = threadIdx.x, lane = tid % kWarp, warp = tid / kWarp;
  const int n_warps = blockDim.x / kWarp;
  const int64_t j = tid >> 1, i0 = (tid & 1) * KHalf;  // column, first row of this half
  const bool col = j < dv;
  float* st = a.delta_states + static_cast<int64_t>(slot) * slot_floats + h * dk * dv;
  // Rows of this half that exist (0 past the last column); addresses advance by dv per row
  // rather than being computed per row, which would keep 64 of them live across the run.
  const int64_t rem = dk - i0;
  const int n_mine = !col || rem <= 0 ? 0 : rem >= KHalf ? KHalf : static_cast<int>(rem);
  // Whether row i of this half exists: with kFull one predicate for all rows, so the copies in
  // and out keep no predicate per row live (which spills at head_k_dim 128).
  auto mine = [&](int i) { return kFull ? col : i < n_mine; };
  float s[KHalf];  // S[i0 + i, j]
  {
    const float* p = st + i0 * dv + j;
#pragma unroll
    for (int i = 0; i < KHalf; ++i, p += dv) s[i] = mine(i) ? *p : 0.0f;
  }
  const float neg_a = -expf(a.a_log[h]), dt_bias = a.dt_bias[h];
  for (int64_t t = t0; t < a.n_tokens && a.token_state[t] == slot; ++t) {
    const float* qs = a.q + t * a.qkv_stride + hk * dk;
    const float* ks = a.k + t * a.qkv_stride + hk * dk;
    __syncthreads();  // the previous token is done with s_q, s_k and red
    float qq = 0.0f, kk = 0.0f;
    // Zeros past head_k_dim: the state rows there are 0 and stay 0, so the loops below need no
    // bounds (a bound per row would keep a predicate per row live and spill at 128).
    for (int64_t i = tid; i < 2 * KHalf; i += blockDim.x) {
      const float qi = i < dk ? qs[i] : 0.0f, ki = i < dk ? ks[i] : 0.0f;
      s_q[i] = qi;
      s_k[i] = ki;
      qq += qi * qi;
      kk += ki * ki;
    }
    qq = warp_sum(qq);
    kk = warp_sum(kk);
    if (lane == 0) {
      red[0][warp] = qq;
      red[1][warp] = kk;
    }
    __syncthreads();
    qq = 0.0f;
    kk = 0.0f;
    for (int w = 0; w < n_warps; ++w) {
      qq += red[0][w];
      kk += red[1][w];
    }
    const float qn = a.scale / sqrtf(qq + a.l2_eps), kn = 1.0f / sqrtf(kk + a.l2_eps);
    const float x = a.a[t * a.ab_stride + h] + dt_bias;
    const float softplus = x > 20.0f ? x : log1pf(expf(x));  // torch's threshold 20
    const float decay = expf(neg_a * softplus);
    const float beta = sigmoidf_dev(a.b[t * a.ab_stride + h]);
    // kv = (decay * S)^T k for this column; k is l2-normed on the fly (kn). Every lane takes part
    // in the shuffles (lanes past the last column hold zeros).
    float kv = 0.0f;
#pragma unroll
    for (int i = 0; i < KHalf; ++i) kv += s[i] * s_k[i0 + i];
    kv += __shfl_xor_sync(0xffffffffu, kv, 1);
    kv *= decay * kn;
    const float vj = col ? a.v[t * a.qkv_stride + h * dv + j] : 0.0f;
    const float kd = kn * beta * (vj - kv);
    // Read k and q from shared memory again (volatile) rather than let the compiler keep the
    // first loop's k values live next to the state: that would spill at head_k_dim 128.
    const volatile float* vk = s_k;
    const volatile float* vq = s_q;
    float acc = 0.0f;
#pragma unroll
    for (int i = 0; i < KHalf; ++i) {
      s[i] = decay * s[i] + vk[i0 + i] * kd;
      acc += s[i] * vq[i0 + i];
    }
    acc += __shfl_xor_sync(0xffffffffu, acc, 1);
    if (col && i0 == 0) a.out[(t * hv_n + h) * dv + j] = acc * qn;
    const int32_t snap = a.token_snapshot != nullptr ? a.token_snapshot[t] : -1;
    if (snap >= 0) {
      float* p =
          a.delta_states + static_cast<int64_t>(snap) * slot_floats + h * dk * dv + i0 * dv + j;
#pragma unroll
      for (int i = 0; i < KHalf; ++i, p += dv)
        if (mine(i)) *p = s[i];
    }
  }
  float* p = st + i0 * dv + j;
#pragma unroll
  for (int i = 0; i < KHalf; ++i, p += dv)
    if (mine(i)) *p = s[i];
}

// grid: n_rows; block: kThreads. y may alias x (each thread rereads only what it writes).
__global__ void gated_rms_norm_kernel(GatedRmsNormArgs a) {
  ARC_SHARED(float, red, [32]);
  const int64_t r = blockIdx.x, d = a.d;
  const float* x = a.x + r * d;
  const float* z = a.z + (r / a.heads_per_token) * a.z_token_stride + (r % a.heads_per_token) * d;
  float ss = 0.0f;
  for (int64_t i = threadIdx.x; i < d; i += blockDim.x) ss += x[i] * x[i];
  ss = block_sum(ss, red);
  const float inv = 1.0f / sqrtf(ss / static_cast<float>(d) + a.eps);
  float* y = a.y + r * d;
  for (int64_t i = threadIdx.x; i < d; i += blockDim.x) {
    const float zi = z[i];
    y[i] = x[i] * inv * a.w[i] * (zi * sigmoidf_dev(zi));
  }
}

// grid: (blocks, n pairs); each block copies a stride of the conv slot then the delta slot.
__global__ void delta_state_copy_kernel(DeltaStateCopyArgs a) {
  const int64_t p = blockIdx.y;
  const int64_t src = a.src[p], dst = a.dst[p];
  const int64_t conv_n = a.conv_states != nullptr ? a.conv_slot_floats : 0;
  const int64_t delta_n = a.delta_states != nullptr ? a.delta_slot_floats : 0;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
       i < conv_n + delta_n; i += step) {
    if (i < conv_n) {
      a.conv_states[dst * conv_n + i] = a.conv_states[src * conv_n + i];
    } else {
      const int64_t e = i - conv_n;
      a.delta_states[dst * delta_n + e] = a.delta_states[src * delta_n + e];
    }
  }
}

__global__ void sigmoid_mul_kernel(SigmoidMulArgs a) {
  const int64_t n = a.n_rows * a.d;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = i / a.d, c = i % a.d;
    a.y[i] = a.x[i] * sigmoidf_dev(a.g[r * a.g_stride + c]);
  }
}

unsigned grid_for(int64_t n) {
  return static_cast<unsigned>(std::min<int64_t>((n + kThreads - 1) / kThreads, 65535 * 8));
}

}  // namespace
}  // namespace detail

bool delta_net_conv(const Context& ctx, const DeltaConvArgs& a) {
  if (!delta_conv_args_ok(a) || a.kernel > detail::kDeltaConvMaxKernel || a.n_tokens > 0x7fffffff ||
      detail::ceil_div(a.channels, detail::kThreads) > 65535)
    return false;
  if (a.n_tokens == 0) return true;
  const dim3 grid(static_cast<unsigned>(a.n_tokens),
                  detail::ceil_div(a.channels, detail::kThreads));
  ARC_LAUNCH(grid, detail::kThreads, 0, ctx.stream, detail::delta_conv_kernel)(a);
  return true;
}

bool gated_delta_rule(const Context& ctx, const GatedDeltaRuleArgs& a) {
  if (!gated_delta_rule_args_ok(a) || a.head_k_dim > detail::kDeltaMaxKeyDim ||
      a.head_v_dim > detail::kDeltaMaxValueDim || a.n_tokens > 0x7fffffff || a.n_v_heads > 65535)
    return false;
  if (a.n_tokens == 0) return true;
  const dim3 grid(static_cast<unsigned>(a.n_tokens), static_cast<unsigned>(a.n_v_heads));
  const unsigned threads = detail::ceil_div(2 * a.head_v_dim, detail::kWarp) * detail::kWarp;
  // Qwen3-Next's 128 (and 64, 32) run without per-row bounds; other sizes with them.
  const int64_t dk = a.head_k_dim;
  if (dk == 32) {
    ARC_LAUNCH(grid, threads, 0, ctx.stream, detail::gated_delta_rule_kernel<16, true>)(a);
  } else if (dk == 64) {
    ARC_LAUNCH(grid, threads, 0, ctx.stream, detail::gated_delta_rule_kernel<32, true>)(a);
  } else if (dk == 128) {
    ARC_LAUNCH(grid, threads, 0, ctx.stream, detail::gated_delta_rule_kernel<64, true>)(a);
  } else if (dk < 32) {
    ARC_LAUNCH(grid, threads, 0, ctx.stream, detail::gated_delta_rule_kernel<16, false>)(a);
  } else if (dk < 64) {
    ARC_LAUNCH(grid, threads, 0, ctx.stream, detail::gated_delta_rule_kernel<32, false>)(a);
  } else {
    ARC_LAUNCH(grid, threads, 0, ctx.stream, detail::gated_delta_rule_kernel<64, false>)(a);
  }
  return true;
}

bool gated_rms_norm(const Context& ctx, const GatedRmsNormArgs& a) {
  if (a.n_rows < 0 || a.d <= 0 || a.heads_per_token <= 0 || !a.x || !a.w || !a.z || !a.y ||
      a.n_rows > 0x7fffffff)
    return false;
  if (a.n_rows == 0) return true;
  ARC_LAUNCH(static_cast<unsigned>(a.n_rows), detail::kThreads, 0, ctx.stream,
             detail::gated_rms_norm_kernel)
  (a);
  return true;
}

bool delta_state_copy(const Context& ctx, const DeltaStateCopyArgs& a) {
  if (a.n < 0 || (a.n > 0 && (!a.src || !a.dst)) || a.n > 65535) return false;
  const int64_t floats = (a.conv_states != nullptr ? a.conv_slot_floats : 0) +
                         (a.delta_states != nullptr ? a.delta_slot_floats : 0);
  if (a.n == 0 || floats <= 0) return true;
  const dim3 grid(std::min<unsigned>(detail::ceil_div(floats, detail::kThreads), 1024),
                  static_cast<unsigned>(a.n));
  ARC_LAUNCH(grid, detail::kThreads, 0, ctx.stream, detail::delta_state_copy_kernel)(a);
  return true;
}

bool sigmoid_mul(const Context& ctx, const SigmoidMulArgs& a) {
  if (a.n_rows < 0 || a.d <= 0 || !a.x || !a.g || !a.y) return false;
  const int64_t n = a.n_rows * a.d;
  if (n == 0) return true;
  ARC_LAUNCH(detail::grid_for(n), detail::kThreads, 0, ctx.stream, detail::sigmoid_mul_kernel)(a);
  return true;
}

}  // namespace arc::kernels::cuda
