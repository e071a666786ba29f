// Vision encoder ops: LayerNorm, GELU (tanh, erf), table rotary. Memory-bound; F32 math.
#include "cuda/vision_ops.cuh"

namespace arc::kernels::cuda {
namespace detail {
namespace {

constexpr int kThreads = 256;

unsigned grid_for(int64_t n) {
  return static_cast<unsigned>(std::min<int64_t>((n + kThreads - 1) / kThreads, 65535 * 8));
}

// One block per row. x, y: [n_rows, d]; w, b: [d] or null. Mean first, then the centred squares
// (no cancellation for rows with a large mean). y may alias x: every thread reads its elements
// before writing them, and the reductions finish before the first write.
__global__ void layer_norm_kernel(const float* x, const float* __restrict__ w,
                                  const float* __restrict__ b, float* y, int64_t d, float eps) {
  ARC_SHARED(float, red, [32]);
  const float* xr = x + blockIdx.x * d;
  float* yr = y + blockIdx.x * d;
  float s = 0.0f;
  for (int64_t i = threadIdx.x; i < d; i += blockDim.x) s += xr[i];
  const float mean = block_sum(s, red) / static_cast<float>(d);
  float ss = 0.0f;
  for (int64_t i = threadIdx.x; i < d; i += blockDim.x) {
    const float c = xr[i] - mean;
    ss += c * c;
  }
  const float inv = rsqrtf(block_sum(ss, red) / static_cast<float>(d) + eps);
  for (int64_t i = threadIdx.x; i < d; i += blockDim.x) {
    float v = (xr[i] - mean) * inv;
    if (w != nullptr) v *= w[i];
    if (b != nullptr) v += b[i];
    yr[i] = v;
  }
}

__global__ void gelu_tanh_kernel(const float* x, float* y, int64_t n) {
  const float k = 0.7978845608028654f;  // sqrt(2 / pi)
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float v = x[i];
    y[i] = 0.5f * v * (1.0f + tanhf(k * (v + 0.044715f * v * v * v)));
  }
}

__global__ void gelu_erf_kernel(const float* x, float* y, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float v = x[i];
    y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
  }
}

// One thread per (token, head, pair i < half).
__global__ void rope_table_kernel(RopeTableArgs a, int64_t stride, int64_t total) {
  const int64_t half = a.head_dim / 2;
  for (int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; idx < total;
       idx += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t i = idx % half;
    const int64_t h = (idx / half) % a.n_heads;
    const int64_t t = idx / (half * a.n_heads);
    float* v = a.x + t * stride + h * a.head_dim;
    const float c = a.cos[t * half + i], s = a.sin[t * half + i];
    const float x0 = v[i], x1 = v[i + half];
    v[i] = x0 * c - x1 * s;
    v[i + half] = x0 * s + x1 * c;
  }
}

}  // namespace
}  // namespace detail

bool layer_norm(const Context& ctx, const float* x, const float* w, const float* b, float* y,
                int64_t n_rows, int64_t d, float eps) {
  if (n_rows < 0 || d <= 0 || n_rows > 0x7fffffff) return false;
  if (n_rows == 0) return true;
  const int threads = d >= 4096 ? 1024 : (d >= 1024 ? 512 : 256);
  ARC_LAUNCH(static_cast<unsigned>(n_rows), threads, 0, ctx.stream, detail::layer_norm_kernel)
  (x, w, b, y, d, eps);
  return true;
}

bool gelu(const Context& ctx, const float* x, float* y, int64_t n) {
  if (n < 0) return false;
  if (n > 0)
    ARC_LAUNCH(detail::grid_for(n), detail::kThreads, 0, ctx.stream, detail::gelu_tanh_kernel)
  (x, y, n);
  return true;
}

bool gelu_erf(const Context& ctx, const float* x, float* y, int64_t n) {
  if (n < 0) return false;
  if (n > 0)
    ARC_LAUNCH(detail::grid_for(n), detail::kThreads, 0, ctx.stream, detail::gelu_erf_kernel)
  (x, y, n);
  return true;
}

bool rope_table(const Context& ctx, const RopeTableArgs& a) {
  if (a.n_tokens < 0 || a.n_heads < 0 || a.head_dim < 2 || a.head_dim % 2 != 0) return false;
  const int64_t stride = a.x_stride != 0 ? a.x_stride : a.n_heads * a.head_dim;
  if (stride < a.n_heads * a.head_dim) return false;
  const int64_t total = a.n_tokens * a.n_heads * (a.head_dim / 2);
  if (total > 0) {
    ARC_LAUNCH(detail::grid_for(total), detail::kThreads, 0, ctx.stream, detail::rope_table_kernel)
    (a, stride, total);
  }
  return true;
}

}  // namespace arc::kernels::cuda
