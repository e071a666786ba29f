// Row-wise and elementwise F32 ops. Memory-bound: grid-stride loops, one block per row for norms.
#include "cuda/elementwise.cuh"

namespace arc::kernels::cuda {
namespace detail {
namespace {

constexpr int kThreads = 256;

unsigned grid_for(int64_t n) {
  return static_cast<unsigned>(std::min<int64_t>((n + kThreads - 1) / kThreads, 65535 * 8));
}

// One block per row. x, y: [n_rows, d]; w: [d] or null.
__global__ void rms_norm_kernel(const float* x, const float* __restrict__ w, float* y, int64_t d,
                                float eps) {
  ARC_SHARED(float, red, [32]);
  const float* xr = x + blockIdx.x * d;
  float* yr = y + blockIdx.x * d;
  float ss = 0.0f;
  for (int64_t i = threadIdx.x; i < d; i += blockDim.x) ss += xr[i] * xr[i];
  ss = block_sum(ss, red);
  const float inv = rsqrtf(ss / static_cast<float>(d) + eps);
  for (int64_t i = threadIdx.x; i < d; i += blockDim.x) {
    const float v = xr[i] * inv;
    yr[i] = w != nullptr ? v * w[i] : v;
  }
}

// One block per row: ss[r] = sum of x[r, :]^2. x: [n_rows, d].
__global__ void sum_squares_kernel(const float* x, float* ss, int64_t d) {
  ARC_SHARED(float, red, [32]);
  const float* xr = x + blockIdx.x * d;
  float s = 0.0f;
  for (int64_t i = threadIdx.x; i < d; i += blockDim.x) s += xr[i] * xr[i];
  s = block_sum(s, red);
  if (threadIdx.x == 0) ss[blockIdx.x] = s;
}

// One block per row: y[r, :] = x[r, :] * w / sqrt(ss[r] / n_total + eps).
__global__ void rms_norm_sumsq_kernel(const float* x, const float* __restrict__ w,
                                      const float* __restrict__ ss, float* y, int64_t d,
                                      int64_t n_total, float eps) {
  const float* xr = x + blockIdx.x * d;
  float* yr = y + blockIdx.x * d;
  const float inv = rsqrtf(ss[blockIdx.x] / static_cast<float>(n_total) + eps);
  for (int64_t i = threadIdx.x; i < d; i += blockDim.x) {
    const float v = xr[i] * inv;
    yr[i] = w != nullptr ? v * w[i] : v;
  }
}

__global__ void add_kernel(const float* a, const float* b, float* y, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    y[i] = a[i] + b[i];
}

__global__ void add_bias_kernel(float* x, const float* __restrict__ bias, int64_t n, int64_t d) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    x[i] += bias[i % d];
}

__global__ void swiglu_kernel(const float* gate, const float* up, float* y, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float g = gate[i];
    y[i] = g / (1.0f + expf(-g)) * up[i];
  }
}

// y[t, :] += sigmoid(g[t]) * s[t, :]
__global__ void add_sigmoid_gated_kernel(float* y, const float* s, const float* __restrict__ g,
                                         int64_t n, int64_t d) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float gate = 1.0f / (1.0f + expf(-g[i / d]));
    y[i] += gate * s[i];
  }
}

// One block per output row: out[j, :] = x[rows[j], :].
__global__ void gather_kernel(const float* __restrict__ x, const int32_t* __restrict__ rows,
                              int64_t d, float* out) {
  const float* src = x + static_cast<int64_t>(rows[blockIdx.x]) * d;
  float* dst = out + blockIdx.x * d;
  for (int64_t i = threadIdx.x; i < d; i += blockDim.x) dst[i] = src[i];
}

// One block per token row: the k expert outputs weighted, summed in j order (deterministic).
__global__ void combine_kernel(CombineArgs a) {
  const int64_t t = blockIdx.x;
  float* y = a.y + t * a.d;
  for (int64_t i = threadIdx.x; i < a.d; i += blockDim.x) {
    float acc = 0.0f;
    for (int64_t j = 0; j < a.k; ++j) {
      const int64_t p = t * a.k + j;
      const int32_t e = a.ids[p];
      if (e < 0 || e >= a.n_expert) continue;
      const int64_t r = a.inv ? a.inv[p] : p;
      const float b = a.down_bias != nullptr ? a.down_bias[e * a.d + i] : 0.0f;
      acc += a.weights[p] * (a.src[r * a.d + i] + b);
    }
    y[i] = a.accumulate ? y[i] + acc : acc;
  }
}

__global__ void expert_act_kernel(ExpertActArgs a) {
  const int64_t n = a.n_pairs * a.n_ff;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t p = i / a.n_ff, c = i - p * a.n_ff;
    const int32_t e = a.ids[p];
    const int64_t row = a.inv != nullptr ? a.inv[p] : p;
    if (e < 0 || e >= a.n_expert || row < 0) continue;
    float g = a.g[row * a.n_ff + c];
    float u = a.u[row * a.n_ff + c];
    if (a.gate_bias != nullptr) g += a.gate_bias[e * a.n_ff + c];
    if (a.up_bias != nullptr) u += a.up_bias[e * a.n_ff + c];
    if (a.oai) {
      g = fminf(g, a.limit);
      u = fminf(fmaxf(u, -a.limit), a.limit);
      a.g[row * a.n_ff + c] = g / (1.0f + expf(-a.alpha * g)) * (u + 1.0f);
    } else {
      a.g[row * a.n_ff + c] = g / (1.0f + expf(-g)) * u;
    }
  }
}

}  // namespace

void launch_expert_act(Stream s, const ExpertActArgs& a) {
  const int64_t n = a.n_pairs * a.n_ff;
  if (n > 0) ARC_LAUNCH(grid_for(n), kThreads, 0, s, expert_act_kernel)(a);
}

void launch_swiglu(Stream s, const float* gate, const float* up, float* y, int64_t n) {
  if (n > 0) ARC_LAUNCH(grid_for(n), kThreads, 0, s, swiglu_kernel)(gate, up, y, n);
}

void launch_combine(Stream s, const CombineArgs& a) {
  if (a.n_tokens > 0 && a.d > 0)
    ARC_LAUNCH(static_cast<unsigned>(a.n_tokens), kThreads, 0, s, combine_kernel)(a);
}

}  // namespace detail

using detail::grid_for;
using detail::kThreads;

bool rms_norm(const Context& ctx, const float* x, const float* w, float* y, int64_t n_rows,
              int64_t d, float eps) {
  if (n_rows < 0 || d <= 0 || n_rows > 0x7fffffff) return false;
  if (n_rows == 0) return true;
  const int threads = d >= 4096 ? 1024 : (d >= 1024 ? 512 : 256);
  ARC_LAUNCH(static_cast<unsigned>(n_rows), threads, 0, ctx.stream, detail::rms_norm_kernel)
  (x, w, y, d, eps);
  return true;
}

bool sum_squares(const Context& ctx, const float* x, float* ss, int64_t n_rows, int64_t d) {
  if (n_rows < 0 || d <= 0 || n_rows > 0x7fffffff) return false;
  if (n_rows == 0) return true;
  const int threads = d >= 4096 ? 1024 : (d >= 1024 ? 512 : 256);
  ARC_LAUNCH(static_cast<unsigned>(n_rows), threads, 0, ctx.stream, detail::sum_squares_kernel)
  (x, ss, d);
  return true;
}

bool rms_norm_sumsq(const Context& ctx, const float* x, const float* w, const float* ss, float* y,
                    int64_t n_rows, int64_t d, int64_t n_total, float eps) {
  if (n_rows < 0 || d <= 0 || n_total <= 0 || n_rows > 0x7fffffff) return false;
  if (n_rows == 0) return true;
  ARC_LAUNCH(static_cast<unsigned>(n_rows), kThreads, 0, ctx.stream, detail::rms_norm_sumsq_kernel)
  (x, w, ss, y, d, n_total, eps);
  return true;
}

bool add(const Context& ctx, const float* a, const float* b, float* y, int64_t n) {
  if (n < 0) return false;
  if (n > 0) ARC_LAUNCH(grid_for(n), kThreads, 0, ctx.stream, detail::add_kernel)(a, b, y, n);
  return true;
}

bool add_bias(const Context& ctx, float* x, const float* bias, int64_t n_rows, int64_t d) {
  if (n_rows < 0 || d <= 0) return false;
  const int64_t n = n_rows * d;
  if (n > 0)
    ARC_LAUNCH(grid_for(n), kThreads, 0, ctx.stream, detail::add_bias_kernel)(x, bias, n, d);
  return true;
}

bool swiglu(const Context& ctx, const float* gate, const float* up, float* y, int64_t n) {
  if (n < 0) return false;
  detail::launch_swiglu(ctx.stream, gate, up, y, n);
  return true;
}

bool add_sigmoid_gated(const Context& ctx, float* y, const float* s, const float* g, int64_t n_rows,
                       int64_t d) {
  if (n_rows < 0 || d <= 0) return false;
  const int64_t n = n_rows * d;
  if (n > 0) {
    ARC_LAUNCH(grid_for(n), kThreads, 0, ctx.stream, detail::add_sigmoid_gated_kernel)
    (y, s, g, n, d);
  }
  return true;
}

bool gather(const Context& ctx, const float* x, const int32_t* rows, int64_t n, int64_t d,
            float* out) {
  if (n < 0 || d < 0 || n > 0x7fffffff) return false;
  if (n > 0 && d > 0) {
    ARC_LAUNCH(static_cast<unsigned>(n), kThreads, 0, ctx.stream, detail::gather_kernel)
    (x, rows, d, out);
  }
  return true;
}

}  // namespace arc::kernels::cuda
