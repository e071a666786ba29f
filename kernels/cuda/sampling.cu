// argmax_rows: one block per row. top_k_rows: two stages; blocks take 4096-entry chunks of a row
// into shared memory and pick the chunk's k best by repeated block argmax (plus the chunk's max
// and sum of exponentials); one block per row then merges the chunk candidates the same way.
// Order: higher value first, lower index on ties (as the host sampler).
#include "cuda/sampling.cuh"

namespace arc::kernels::cuda {
namespace detail {
namespace {

constexpr int kThreads = 256;

struct Best {
  float v;
  int32_t i;
};

__device__ __forceinline__ bool better(const Best& a, const Best& b) {
  return a.v > b.v || (a.v == b.v && a.i >= 0 && (b.i < 0 || a.i < b.i));
}

// Every thread gets the block's best. red: shared [32].
__device__ Best block_best(Best b, Best* red) {
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    Best other{__shfl_xor_sync(0xffffffffu, b.v, o), __shfl_xor_sync(0xffffffffu, b.i, o)};
    if (better(other, b)) b = other;
  }
  __syncthreads();
  if (lane == 0) red[warp] = b;
  __syncthreads();
  b = lane < static_cast<int>(blockDim.x / kWarp) ? red[lane] : Best{-INFINITY, -1};
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    Best other{__shfl_xor_sync(0xffffffffu, b.v, o), __shfl_xor_sync(0xffffffffu, b.i, o)};
    if (better(other, b)) b = other;
  }
  return b;
}

__device__ __forceinline__ float clean(float v) {
  return isnan(v) ? -INFINITY : v;
}

// logits: [n_rows, n_vocab]; one block per row.
__global__ void argmax_kernel(const float* __restrict__ logits, int64_t n_vocab, int32_t* out) {
  ARC_SHARED(Best, red, [32]);
  const float* row = logits + blockIdx.x * n_vocab;
  Best b{-INFINITY, -1};
  for (int64_t i = threadIdx.x; i < n_vocab; i += blockDim.x) {
    const Best c{clean(row[i]), static_cast<int32_t>(i)};
    if (better(c, b)) b = c;
  }
  b = block_best(b, red);
  if (threadIdx.x == 0) out[blockIdx.x] = b.i < 0 ? 0 : b.i;
}

struct TopKParams {
  const float* logits;  // [n_rows, n_vocab]
  int64_t n_vocab, n_chunks, k;
  float inv_temp;
  float* cand_v;    // [n_rows, n_chunks, k]
  int32_t* cand_i;  // [n_rows, n_chunks, k]
  float* stats;     // [n_rows, n_chunks, 2]: max, sum exp(z - max)
  int32_t* out_ids;
  float* out_lp;
};

// grid: (n_chunks, n_rows). A taken entry becomes NaN so it is never picked again.
__global__ void topk_chunk_kernel(TopKParams p) {
  ARC_SHARED(float, z, [kTopKChunk]);
  ARC_SHARED(Best, red, [32]);
  ARC_SHARED(float, fred, [32]);
  const int64_t r = blockIdx.y, c = blockIdx.x;
  const int64_t begin = c * kTopKChunk;
  const int64_t len = min(kTopKChunk, p.n_vocab - begin);
  const float* row = p.logits + r * p.n_vocab + begin;
  float mx = -INFINITY;
  for (int64_t i = threadIdx.x; i < len; i += blockDim.x) {
    z[i] = clean(row[i]) * p.inv_temp;
    mx = fmaxf(mx, z[i]);
  }
  mx = block_max(mx, fred);
  float sum = 0.0f;
  for (int64_t i = threadIdx.x; i < len; i += blockDim.x)
    sum += mx == -INFINITY ? 0.0f : expf(z[i] - mx);
  sum = block_sum(sum, fred);
  const int64_t slot = (r * p.n_chunks + c);
  if (threadIdx.x == 0) {
    p.stats[2 * slot] = mx;
    p.stats[2 * slot + 1] = sum;
  }
  for (int64_t j = 0; j < p.k; ++j) {
    Best b{-INFINITY, -1};
    for (int64_t i = threadIdx.x; i < len; i += blockDim.x) {
      const Best cnd{z[i], static_cast<int32_t>(begin + i)};
      if (!isnan(cnd.v) && better(cnd, b)) b = cnd;
    }
    b = block_best(b, red);
    if (threadIdx.x == 0) {
      p.cand_v[slot * p.k + j] = b.v;
      p.cand_i[slot * p.k + j] = b.i;
      if (b.i >= 0) z[b.i - begin] = NAN;
    }
    __syncthreads();
  }
}

// One block per row: merge the chunk candidates and the softmax normaliser.
__global__ void topk_merge_kernel(TopKParams p) {
  ARC_SHARED(Best, red, [32]);
  ARC_SHARED(float, fred, [32]);
  const int64_t r = blockIdx.x;
  const float* st = p.stats + 2 * r * p.n_chunks;
  float mx = -INFINITY;
  for (int64_t c = threadIdx.x; c < p.n_chunks; c += blockDim.x) mx = fmaxf(mx, st[2 * c]);
  mx = block_max(mx, fred);
  float sum = 0.0f;
  for (int64_t c = threadIdx.x; c < p.n_chunks; c += blockDim.x) {
    if (st[2 * c] != -INFINITY) sum += st[2 * c + 1] * expf(st[2 * c] - mx);
  }
  sum = block_sum(sum, fred);
  const float lse = mx + logf(sum);
  const int64_t n = p.n_chunks * p.k;
  float* cv = p.cand_v + r * n;
  const int32_t* ci = p.cand_i + r * n;
  for (int64_t j = 0; j < p.k; ++j) {
    Best b{-INFINITY, -1};
    int64_t at = -1;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      const Best cnd{cv[i], ci[i]};
      if (cnd.i >= 0 && !isnan(cnd.v) && better(cnd, b)) {
        b = cnd;
        at = i;
      }
    }
    const Best w = block_best(b, red);
    if (w.i >= 0 && b.i == w.i && b.v == w.v) cv[at] = NAN;  // the owner marks it taken
    if (threadIdx.x == 0) {
      p.out_ids[r * p.k + j] = w.i < 0 ? 0 : w.i;
      p.out_lp[r * p.k + j] = w.i < 0 ? -INFINITY : w.v - lse;
    }
    __syncthreads();
  }
}

struct TopKScratch {
  float* cand_v;
  int32_t* cand_i;
  float* stats;
};

TopKScratch carve_topk(Carve& c, int64_t n_rows, int64_t n_vocab, int64_t k) {
  const int64_t n_chunks = (n_vocab + kTopKChunk - 1) / kTopKChunk;
  TopKScratch s;
  s.cand_v = c.take<float>(static_cast<size_t>(n_rows * n_chunks * k));
  s.cand_i = c.take<int32_t>(static_cast<size_t>(n_rows * n_chunks * k));
  s.stats = c.take<float>(static_cast<size_t>(n_rows * n_chunks * 2));
  return s;
}

}  // namespace

size_t sampling_scratch_bytes(int64_t n_rows, int64_t n_vocab, int64_t k) {
  Carve c(nullptr);
  carve_topk(c, n_rows, n_vocab, k);
  return c.used();
}

}  // namespace detail

bool argmax_rows(const Context& ctx, const float* logits, int64_t n_rows, int64_t n_vocab,
                 int32_t* out_ids) {
  if (n_rows < 0 || n_rows > 0x7fffffff || n_vocab <= 0 || n_vocab > 0x7fffffff) return false;
  if (n_rows > 0) {
    ARC_LAUNCH(static_cast<unsigned>(n_rows), 1024, 0, ctx.stream, detail::argmax_kernel)
    (logits, n_vocab, out_ids);
  }
  return true;
}

bool top_k_rows(const Context& ctx, const float* logits, int64_t n_rows, int64_t n_vocab, int64_t k,
                float temperature, int32_t* out_ids, float* out_logprobs) {
  using namespace detail;
  if (n_rows < 0 || n_rows > 65535 || n_vocab <= 0 || n_vocab > 0x7fffffff) return false;
  if (k <= 0 || k > kTopKMax || k > n_vocab || !(temperature > 0.0f)) return false;
  if (n_rows == 0) return true;
  Carve c(ctx.scratch);
  const TopKScratch s = carve_topk(c, n_rows, n_vocab, k);
  if (c.used() > ctx.scratch_size) return false;
  TopKParams p{};
  p.logits = logits;
  p.n_vocab = n_vocab;
  p.n_chunks = (n_vocab + kTopKChunk - 1) / kTopKChunk;
  p.k = k;
  p.inv_temp = 1.0f / temperature;
  p.cand_v = s.cand_v;
  p.cand_i = s.cand_i;
  p.stats = s.stats;
  p.out_ids = out_ids;
  p.out_lp = out_logprobs;
  ARC_LAUNCH(dim3(static_cast<unsigned>(p.n_chunks), static_cast<unsigned>(n_rows)), kThreads, 0,
             ctx.stream, topk_chunk_kernel)
  (p);
  ARC_LAUNCH(static_cast<unsigned>(n_rows), kThreads, 0, ctx.stream, topk_merge_kernel)(p);
  return true;
}

}  // namespace arc::kernels::cuda
