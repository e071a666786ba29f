// Prefill attention: one block per (16-token tile, query head). The tile's tokens are usually one
// sequence at consecutive positions; tokens of other sequences in the same tile are handled by
// running the key loop once per distinct sequence (their scores are masked in the other passes).
// Keys and values stream through one shared 32 x head_dim buffer; online softmax in F32.
#include "cuda/attention.cuh"

namespace arc::kernels::cuda {
namespace detail {
namespace {

constexpr int kRows = 16;  // query tokens per block
constexpr int kKeys = 32;  // keys per tile
constexpr int kThreads = 128;
constexpr int kPerRow = kThreads / kRows;  // 8 threads share a query row

size_t prefill_smem(int64_t d) {
  return (static_cast<size_t>(kRows) * (d + 1) + static_cast<size_t>(kKeys) * (d + 1) +
          static_cast<size_t>(kRows) * (kKeys + 1)) *
         sizeof(float);
}

// grid: (ceil(n_tokens / 16), n_head); block: 128; dynamic shared memory: prefill_smem(d).
__global__ void __launch_bounds__(kThreads) prefill_kernel(AttnParams p) {
  ARC_DYNAMIC_SHARED(float, smem);
  const int64_t d = p.head_dim, ld = d + 1;  // +1: conflict-free column reads
  float* sq = smem;                          // [16][d + 1] scaled queries
  float* skv = sq + kRows * ld;              // [32][d + 1] keys, then values
  float* sp = skv + kKeys * ld;              // [16][33] probabilities
  ARC_SHARED(int32_t, r_seq, [kRows]);
  ARC_SHARED(int64_t, r_pos, [kRows]);
  ARC_SHARED(int64_t, r_first, [kRows]);
  ARC_SHARED(int, r_done, [kRows]);

  const int tid = threadIdx.x;
  const int64_t t0 = static_cast<int64_t>(blockIdx.x) * kRows, h = blockIdx.y;
  const int64_t g = h / (p.n_head / p.n_kv_head);
  if (tid < kRows) {
    const int64_t t = t0 + tid;
    const bool ok = t < p.n_tokens;
    r_seq[tid] = ok ? p.token_seq[t] : -1;
    r_pos[tid] = ok ? p.token_pos[t] : -1;
    r_first[tid] = ok && p.window > 0 ? max(static_cast<int64_t>(0), r_pos[tid] - p.window + 1) : 0;
    r_done[tid] = !ok || r_pos[tid] < 0;
  }
  const int di = static_cast<int>(d);
  for (int i = tid; i < kRows * di; i += kThreads) {
    const int r = i / di, c = i - r * di;
    const int64_t t = t0 + r;
    sq[r * ld + c] = t < p.n_tokens ? p.q[(t * p.n_head + h) * d + c] * p.scale : 0.0f;
  }
  __syncthreads();

  const int r = tid / kPerRow, c = tid % kPerRow;
  const int nd = static_cast<int>(d / kPerRow);  // <= 32 dims per thread
  float acc[kMaxHeadDim / kPerRow];
#pragma unroll
  for (int j = 0; j < kMaxHeadDim / kPerRow; ++j) acc[j] = 0.0f;
  float m = -INFINITY, l = 0.0f;

  while (true) {
    // The sequence of the first unfinished row and the union of its rows' key ranges.
    int32_t seq = -1;
    int64_t lo = 0, hi = -1;
    for (int i = 0; i < kRows; ++i) {
      if (r_done[i]) continue;
      if (seq < 0) {
        seq = r_seq[i];
        lo = r_first[i];
        hi = r_pos[i];
      } else if (r_seq[i] == seq) {
        lo = min(lo, r_first[i]);
        hi = max(hi, r_pos[i]);
      }
    }
    if (seq < 0) break;
    const bool mine = r_seq[r] == seq && !r_done[r];
    for (int64_t kb = lo; kb <= hi; kb += kKeys) {
      for (int i = tid; i < kKeys * di; i += kThreads) {
        const int kk = i / di, cc = i - kk * di;
        const int64_t ps = kb + kk;
        skv[kk * ld + cc] = ps <= hi ? kv_elem(p, p.k, kv_row(p, seq, ps, g), cc) : 0.0f;
      }
      __syncthreads();
      float s[kKeys / kPerRow];
      float mx = -INFINITY;
#pragma unroll
      for (int j = 0; j < kKeys / kPerRow; ++j) {
        const int kk = c + kPerRow * j;
        const int64_t ps = kb + kk;
        float v = -INFINITY;
        if (mine && ps >= r_first[r] && ps <= r_pos[r]) {
          v = 0.0f;
          for (int e = 0; e < di; ++e) v += sq[r * ld + e] * skv[kk * ld + e];
        }
        s[j] = v;
        mx = fmaxf(mx, v);
      }
#pragma unroll
      for (int o = 1; o < kPerRow; o <<= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
      const float m_new = fmaxf(m, mx);
      const float corr = m_new == -INFINITY ? 1.0f : expf(m - m_new);
      float sum = 0.0f;
#pragma unroll
      for (int j = 0; j < kKeys / kPerRow; ++j) {
        const float w = s[j] == -INFINITY ? 0.0f : expf(s[j] - m_new);
        sp[r * (kKeys + 1) + c + kPerRow * j] = w;
        sum += w;
      }
#pragma unroll
      for (int o = 1; o < kPerRow; o <<= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
      l = l * corr + sum;
      m = m_new;
      __syncthreads();  // keys no longer needed: load the values into the same buffer
      for (int i = tid; i < kKeys * di; i += kThreads) {
        const int kk = i / di, cc = i - kk * di;
        const int64_t ps = kb + kk;
        skv[kk * ld + cc] = ps <= hi ? kv_elem(p, p.v, kv_row(p, seq, ps, g), cc) : 0.0f;
      }
      __syncthreads();
#pragma unroll
      for (int j = 0; j < kMaxHeadDim / kPerRow; ++j) {
        if (j >= nd) break;
        float a = acc[j] * corr;
        for (int kk = 0; kk < kKeys; ++kk)
          a += sp[r * (kKeys + 1) + kk] * skv[kk * ld + c + kPerRow * j];
        acc[j] = a;
      }
      __syncthreads();  // before the next tile overwrites keys and probabilities
    }
    if (tid < kRows && r_seq[tid] == seq) r_done[tid] = 1;
    __syncthreads();
  }
  const int64_t t = t0 + r;
  if (t < p.n_tokens) {
    l = with_sink(p, h, m, l);
    float* out = p.out + (t * p.n_head + h) * d;
#pragma unroll
    for (int j = 0; j < kMaxHeadDim / kPerRow; ++j) {
      if (j >= nd) break;
      out[c + kPerRow * j] = l > 0.0f ? acc[j] / l : 0.0f;
    }
  }
}

}  // namespace

bool launch_attention_prefill(Stream s, const AttnParams& p) {
  const size_t smem = prefill_smem(p.head_dim);
  if (smem > 48 * 1024) {
    ARC_CUDA_CHECK(cudaFuncSetAttribute(prefill_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(smem)));
  }
  const dim3 grid(ceil_div(p.n_tokens, kRows), static_cast<unsigned>(p.n_head));
  ARC_LAUNCH(grid, kThreads, smem, s, prefill_kernel)(p);
  return true;
}

}  // namespace detail
}  // namespace arc::kernels::cuda
