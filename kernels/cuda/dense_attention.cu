// Dense attention within segments (see dense_attention.cuh).
//
// Per block: rows r0 .. r0 + kDenseRowsPerBlock - 1 of head blockIdx.y. Each row attends to the
// keys of its segment [sb, se) (found by a binary search in seg_offsets); the block walks the union
// of its rows' ranges in tiles of 32 keys. Shared memory: the rows' queries [rows, hd], the key
// tile [32, hd + 1] (the +1 keeps a lane-per-key dot product free of bank conflicts) and the value
// tile [32, hd].
#include <climits>

#include "cuda/dense_attention.cuh"

namespace arc::kernels::cuda {
namespace detail {
namespace {

struct DenseParams {
  const float* q;
  const float* k;
  const float* v;
  float* out;
  int64_t n_tokens, n_head, head_dim, q_stride, kv_stride, out_stride;
  const int32_t* seg_offsets;  // [n_segments + 1] or null
  int64_t n_segments;
  float scale;
};

// The segment [*b, *e) holding token t.
__device__ void segment_of(const DenseParams& p, int64_t t, int64_t* b, int64_t* e) {
  if (p.seg_offsets == nullptr) {
    *b = 0;
    *e = p.n_tokens;
    return;
  }
  // Largest s with seg_offsets[s] <= t (empty segments are skipped over).
  int64_t lo = 0, hi = p.n_segments;  // invariant: off[lo] <= t < off[hi]
  while (hi - lo > 1) {
    const int64_t mid = (lo + hi) / 2;
    if (p.seg_offsets[mid] <= t) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  *b = p.seg_offsets[lo];
  *e = p.seg_offsets[lo + 1];
}

__global__ void dense_attention_kernel(DenseParams p) {
  constexpr int kDims = static_cast<int>(kDenseMaxHeadDim / kWarp);  // per lane
  ARC_DYNAMIC_SHARED(float, smem);
  const int64_t hd = p.head_dim, h = blockIdx.y;
  float* qs = smem;                           // [rows, hd]
  float* ks = qs + kDenseRowsPerBlock * hd;   // [32, hd + 1]
  float* vs = ks + kDenseKeyTile * (hd + 1);  // [32, hd]
  ARC_SHARED(int64_t, row_b, [kDenseRowsPerBlock]);
  ARC_SHARED(int64_t, row_e, [kDenseRowsPerBlock]);

  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  const int64_t t = static_cast<int64_t>(blockIdx.x) * kDenseRowsPerBlock + warp;
  const bool active = t < p.n_tokens;
  int64_t sb = 0, se = 0;
  if (active) {
    segment_of(p, t, &sb, &se);
    const float* qrow = p.q + t * p.q_stride + h * hd;
    for (int64_t d = lane; d < hd; d += kWarp) qs[warp * hd + d] = qrow[d];
  }
  if (lane == 0) {
    row_b[warp] = active ? sb : LLONG_MAX;
    row_e[warp] = active ? se : 0;
  }
  __syncthreads();
  int64_t kb = LLONG_MAX, ke = 0;
  for (int r = 0; r < kDenseRowsPerBlock; ++r) {
    kb = row_b[r] < kb ? row_b[r] : kb;
    ke = row_e[r] > ke ? row_e[r] : ke;
  }

  float acc[kDims];
#pragma unroll
  for (int i = 0; i < kDims; ++i) acc[i] = 0.0f;
  float m = -INFINITY, l = 0.0f;
  for (int64_t j0 = kb; j0 < ke; j0 += kDenseKeyTile) {
    // The tile's keys and values (zeros past the union's end).
    for (int64_t idx = threadIdx.x; idx < kDenseKeyTile * hd; idx += blockDim.x) {
      const int64_t jj = idx / hd, d = idx % hd, j = j0 + jj;
      const bool in = j < ke;
      ks[jj * (hd + 1) + d] = in ? p.k[j * p.kv_stride + h * hd + d] : 0.0f;
      vs[jj * hd + d] = in ? p.v[j * p.kv_stride + h * hd + d] : 0.0f;
    }
    __syncthreads();
    // Warp-uniform: does this row see any key of the tile?
    if (active && j0 < se && j0 + kDenseKeyTile > sb) {
      const int64_t j = j0 + lane;
      const bool valid = j >= sb && j < se;
      float s = -INFINITY;
      if (valid) {
        const float* kr = ks + lane * (hd + 1);
        const float* qr = qs + warp * hd;
        float dot = 0.0f;
        for (int64_t d = 0; d < hd; ++d) dot += qr[d] * kr[d];
        s = dot * p.scale;
      }
      const float tile_max = warp_max(s);  // finite: the tile holds a valid key
      const float new_m = fmaxf(m, tile_max);
      const float corr = expf(m - new_m);  // m = -inf at first: 0
      const float pj = valid ? expf(s - new_m) : 0.0f;
      l = l * corr + warp_sum(pj);
#pragma unroll
      for (int i = 0; i < kDims; ++i) acc[i] *= corr;
      for (int jj = 0; jj < kDenseKeyTile; ++jj) {
        const float w = __shfl_sync(0xffffffffu, pj, jj);
        if (w == 0.0f) continue;  // uniform across the warp (a broadcast value)
#pragma unroll
        for (int i = 0; i < kDims; ++i) {
          const int64_t d = lane + i * kWarp;
          if (d < hd) acc[i] += w * vs[jj * hd + d];
        }
      }
      m = new_m;
    }
    __syncthreads();  // the tile is overwritten next
  }
  if (active) {
    float* o = p.out + t * p.out_stride + h * hd;
    const float inv = l > 0.0f ? 1.0f / l : 0.0f;
#pragma unroll
    for (int i = 0; i < kDims; ++i) {
      const int64_t d = lane + i * kWarp;
      if (d < hd) o[d] = acc[i] * inv;
    }
  }
}

}  // namespace
}  // namespace detail

bool dense_attention(const Context& ctx, const DenseAttentionArgs& a) {
  const int64_t hd = a.head_dim, width = a.n_head * hd;
  if (a.n_tokens < 0 || a.n_head < 1 || a.n_head > 65535 || hd < 1 ||
      hd > detail::kDenseMaxHeadDim) {
    return false;
  }
  if (a.seg_offsets != nullptr && a.n_segments < 1) return false;
  if (a.n_tokens == 0) return true;
  detail::DenseParams p;
  p.q = a.q;
  p.k = a.k;
  p.v = a.v;
  p.out = a.out;
  p.n_tokens = a.n_tokens;
  p.n_head = a.n_head;
  p.head_dim = hd;
  p.q_stride = a.q_stride != 0 ? a.q_stride : width;
  p.kv_stride = a.kv_stride != 0 ? a.kv_stride : width;
  p.out_stride = a.out_stride != 0 ? a.out_stride : width;
  p.seg_offsets = a.seg_offsets;
  p.n_segments = a.n_segments;
  p.scale = a.scale != 0.0f ? a.scale : 1.0f / sqrtf(static_cast<float>(hd));
  const size_t smem = sizeof(float) * static_cast<size_t>(detail::kDenseRowsPerBlock * hd +
                                                          detail::kDenseKeyTile * (hd + 1) +
                                                          detail::kDenseKeyTile * hd);
  if (smem > 48 * 1024) {
    ARC_CUDA_CHECK(cudaFuncSetAttribute(detail::dense_attention_kernel,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(smem)));
  }
  const dim3 grid(detail::ceil_div(a.n_tokens, detail::kDenseRowsPerBlock),
                  static_cast<unsigned>(a.n_head));
  ARC_LAUNCH(grid, detail::kDenseRowsPerBlock * detail::kWarp, smem, ctx.stream,
             detail::dense_attention_kernel)
  (p);
  return true;
}

}  // namespace arc::kernels::cuda
