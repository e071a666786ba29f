// Sampling candidates (arc/kernels/candidates.h): one block of 1024 threads per logit row.
//   1. lse of the raw row (when asked): block max, then a double sum of exp(x - max);
//   2. penalties: the row copied to `work`, the history tokens rewritten there (each token once,
//      so no two threads touch the same entry);
//   3. radix select of the k-th largest order key, 8 bits per pass from the top: after four
//      passes the threshold key T is known, with how many entries equal to T belong to the k best;
//      the first pass histograms with warp aggregation (most logits share their top bits), the
//      later ones, which see about 1% of the row, with plain shared atomics;
//   4. one pass collects every entry at or above T when all entries equal to T belong to the k
//      best (continuous logits); when ties straddle the k-th place, every entry above T and, in
//      index order (a block-wide scan per tile of 1024 entries), the first entries equal to T:
//      the host's tie rule, lower id first;
//   5. a bitonic sort of the k entries by (key desc, id asc), packed in one 64-bit word
//      (k == 1, greedy, skips 3-5: one pass takes the largest packed word);
//   6. the tempered mass (when asked): a double sum of exp((x - max) / T).
// Arithmetic matches kernels/ref/candidates_ref.cpp: explicit round-to-nearest float operations
// for the penalties (no contraction into FMA), double exp for the sums.
#include <cfloat>

#include "arc/kernels/cuda_candidates.h"
#include "cuda/common.cuh"

namespace arc::kernels::cuda {
namespace detail {
namespace {

constexpr int kThreads = 1024;
constexpr int kBins = 256;

// Larger logit -> larger key; -0 and +0 equal; NaN as -inf.
__device__ __forceinline__ uint32_t order_key(float x) {
  if (isnan(x)) x = -INFINITY;
  uint32_t u = __float_as_uint(x);
  if (u == 0x80000000u) u = 0;
  return (u & 0x80000000u) != 0 ? ~u : (u | 0x80000000u);
}

// Sorts descending: a larger key first, then a lower id (stored as 0xffffffff - id).
__device__ __forceinline__ uint64_t pack(uint32_t key, int64_t id) {
  return (static_cast<uint64_t>(key) << 32) | (0xffffffffu - static_cast<uint32_t>(id));
}
__device__ __forceinline__ int32_t unpack_id(uint64_t p) {
  return static_cast<int32_t>(0xffffffffu - static_cast<uint32_t>(p & 0xffffffffu));
}

__device__ __forceinline__ float penalised(float x, int32_t count, float rep, float pres,
                                           float freq) {
  if (rep != 1.0f) x = x > 0.0f ? __fdiv_rn(x, rep) : __fmul_rn(x, rep);
  if (count > 0) x = __fsub_rn(x, __fadd_rn(pres, __fmul_rn(freq, __int2float_rn(count))));
  return x;
}

__device__ __forceinline__ double warp_sum_d(double v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// Every thread gets the block's sum. red: shared [32].
__device__ double block_sum_d(double v, double* red) {
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  v = warp_sum_d(v);
  __syncthreads();
  if (lane == 0) red[warp] = v;
  __syncthreads();
  v = lane < static_cast<int>(blockDim.x / kWarp) ? red[lane] : 0.0;
  return warp_sum_d(v);
}

__global__ void __launch_bounds__(kThreads) candidates_kernel(TopCandidatesArgs a) {
  ARC_SHARED(double, dred, [32]);
  ARC_SHARED(float, fred, [32]);
  ARC_SHARED(uint32_t, hist, [kBins]);
  ARC_SHARED(uint64_t, sorted, [kMaxCandidates]);
  ARC_SHARED(int, warp_count, [32]);
  ARC_SHARED(int, warp_offset, [32]);
  ARC_SHARED(int, s_bin, );
  ARC_SHARED(int, s_remaining, );
  ARC_SHARED(int, s_in, );
  ARC_SHARED(int, s_above, );
  ARC_SHARED(int, s_eq_seen, );
  ARC_SHARED(int, s_tile_eq, );

  const int64_t r = blockIdx.x;
  const CandidateRow row = a.rows[r];
  const int64_t n = a.n_vocab;
  const int k =
      static_cast<int>(min(min(static_cast<int64_t>(row.k), n), static_cast<int64_t>(a.k_stride)));
  if (row.k < 1 || row.k > kMaxCandidates || k < 1) return;  // uniform: the whole block leaves
  const int tid = threadIdx.x, lane = tid % kWarp, warp = tid / kWarp;
  const int n_warps = blockDim.x / kWarp;
  const float* raw = a.logits + r * n;

  // 1. lse of the raw row.
  double lse = 0.0;
  if ((row.flags & kCandidateLse) != 0) {
    float mx = -INFINITY;
    for (int64_t i = tid; i < n; i += blockDim.x) mx = fmaxf(mx, raw[i]);
    mx = block_max(mx, fred);
    double sum = 0.0;
    for (int64_t i = tid; i < n; i += blockDim.x) sum += exp(static_cast<double>(raw[i] - mx));
    sum = block_sum_d(sum, dred);
    lse = static_cast<double>(mx) + log(sum);
  }

  // 2. Penalties, on a copy.
  const float* l = raw;
  if (row.pen_end > row.pen_begin && a.work != nullptr) {
    float* w = a.work + r * n;
    for (int64_t i = tid; i < n; i += blockDim.x) w[i] = raw[i];
    __syncthreads();
    for (int32_t j = row.pen_begin + tid; j < row.pen_end; j += blockDim.x) {
      const int32_t t = a.pen_tokens[j];
      if (t < 0 || t >= n) continue;
      w[t] = penalised(w[t], a.pen_counts[j], row.repetition_penalty, row.presence_penalty,
                       row.frequency_penalty);
    }
    __syncthreads();
    l = w;
  }

  if (k == 1) {
    // Greedy: one pass, the largest packed (key, id), i.e. the first of the best.
    uint64_t best = 0;
    for (int64_t i = tid; i < n; i += blockDim.x) best = max(best, pack(order_key(l[i]), i));
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) best = max(best, __shfl_xor_sync(0xffffffffu, best, o));
    __syncthreads();
    if (lane == 0) sorted[warp] = best;
    __syncthreads();
    if (warp == 0) {
      best = lane < n_warps ? sorted[lane] : 0;
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) best = max(best, __shfl_xor_sync(0xffffffffu, best, o));
      if (lane == 0) sorted[0] = best;
    }
  } else {
    // 3. Radix select of the k-th largest key.
    uint32_t prefix = 0, mask = 0;
    int remaining = k;
    int64_t n_in = n;  // keys that match the prefix so far
    for (int shift = 24; shift >= 0; shift -= 8) {
      for (int b = tid; b < kBins; b += blockDim.x) hist[b] = 0;
      __syncthreads();
      if (n_in > n / 16) {
        // Dense (the first pass, or logits crowded into one bin): warp-aggregated, since logits
        // share their top bits and most lanes hit the same bin.
        for (int64_t base = 0; base < n; base += blockDim.x) {  // whole warps: the ballot below
          const int64_t i = base + tid;
          const uint32_t key = i < n ? order_key(l[i]) : 0u;
          const bool in = i < n && (key & mask) == prefix;
          const uint32_t bin = (key >> shift) & (kBins - 1);
          const unsigned active = __ballot_sync(0xffffffffu, in);
          if (in) {
            const unsigned same = __match_any_sync(active, bin);
            if (lane == __ffs(same) - 1) {
              atomicAdd(&hist[bin], static_cast<uint32_t>(__popc(same)));
            }
          }
        }
      } else {
        // Sparse (after the first pass usually about 1% of the row is left): plain atomics on
        // the few keys that still match, no warp collectives per entry.
        for (int64_t i = tid; i < n; i += blockDim.x) {
          const uint32_t key = order_key(l[i]);
          if ((key & mask) == prefix) atomicAdd(&hist[(key >> shift) & (kBins - 1)], 1u);
        }
      }
      __syncthreads();
      if (tid == 0) {
        int above = 0, b = kBins - 1;
        for (; b > 0; --b) {
          if (above + static_cast<int>(hist[b]) >= remaining) break;
          above += static_cast<int>(hist[b]);
        }
        s_bin = b;
        s_remaining = remaining - above;
        s_in = static_cast<int>(hist[b]);
      }
      __syncthreads();
      prefix |= static_cast<uint32_t>(s_bin) << shift;
      mask |= static_cast<uint32_t>(kBins - 1) << shift;
      remaining = s_remaining;
      n_in = s_in;
    }
    // After the last pass n_in counts the keys equal to the threshold.
    // The k best: every key above `prefix` (k - remaining of them) and the first `remaining` keys
    // equal to it.
    const int n_above = k - remaining;

    // 4. Collect.
    if (tid == 0) {
      s_above = 0;
      s_eq_seen = 0;
    }
    __syncthreads();
    if (n_in == remaining) {
      // Every key equal to the threshold is taken (with continuous logits: the one k-th key), so
      // the order of collection does not matter: the sort below orders by (key, id).
      for (int64_t i = tid; i < n; i += blockDim.x) {
        const uint32_t key = order_key(l[i]);
        if (key >= prefix) sorted[atomicAdd(&s_above, 1)] = pack(key, i);
      }
    } else {
      // Ties straddle the k-th place: the first `remaining` equal keys in index order (the
      // host's tie rule), found with a block-wide scan per tile.
      for (int64_t base = 0; base < n; base += blockDim.x) {
        const int64_t i = base + tid;
        const uint32_t key = i < n ? order_key(l[i]) : 0u;
        const bool above = i < n && key > prefix;
        const bool equal = i < n && key == prefix;
        if (above) sorted[atomicAdd(&s_above, 1)] = pack(key, i);
        const unsigned ballot = __ballot_sync(0xffffffffu, equal);
        if (lane == 0) warp_count[warp] = __popc(ballot);
        __syncthreads();
        if (warp == 0) {
          const int c = lane < n_warps ? warp_count[lane] : 0;
          int incl = c;
#pragma unroll
          for (int o = 1; o < kWarp; o <<= 1) {
            const int up = __shfl_up_sync(0xffffffffu, incl, o);
            if (lane >= o) incl += up;
          }
          warp_offset[lane] = incl - c;
          if (lane == kWarp - 1) s_tile_eq = incl;
        }
        __syncthreads();
        if (equal) {
          const int rank = s_eq_seen + warp_offset[warp] + __popc(ballot & ((1u << lane) - 1u));
          if (rank < remaining) sorted[n_above + rank] = pack(key, i);
        }
        __syncthreads();
        if (tid == 0) s_eq_seen += s_tile_eq;
      }
    }

    // 5. Bitonic sort, descending, padded to a power of two with zeros (below every real entry).
    int p2 = 1;
    while (p2 < k) p2 <<= 1;
    for (int i = k + tid; i < p2; i += blockDim.x) sorted[i] = 0;
    for (int size = 2; size <= p2; size <<= 1) {
      for (int stride = size / 2; stride > 0; stride >>= 1) {
        __syncthreads();
        for (int i = tid; i < p2 / 2; i += blockDim.x) {
          const int pos = 2 * i - (i & (stride - 1));
          const int partner = pos + stride;
          const bool descending = (pos & size) == 0;
          const uint64_t x = sorted[pos], y = sorted[partner];
          if ((x < y) == descending) {
            sorted[pos] = y;
            sorted[partner] = x;
          }
        }
      }
    }
  }  // k > 1
  __syncthreads();
  int32_t* ids = a.ids + r * a.k_stride;
  float* values = a.values + r * a.k_stride;
  for (int i = tid; i < k; i += blockDim.x) {
    const int32_t id = unpack_id(sorted[i]);
    ids[i] = id;
    values[i] = l[id];
  }
  const float best = l[unpack_id(sorted[0])];

  // 6. Tempered mass.
  double mass = 0.0;
  if ((row.flags & kCandidateMass) != 0 && row.temperature > 0.0f) {
    const double mx = best;
    const double t = row.temperature;
    double sum = 0.0;
    for (int64_t i = tid; i < n; i += blockDim.x) sum += exp((static_cast<double>(l[i]) - mx) / t);
    mass = block_sum_d(sum, dred);
  }
  if (tid == 0) {
    double* stats = a.stats + 3 * r;
    stats[0] = lse;
    stats[1] = best;
    stats[2] = mass;
  }
}

}  // namespace
}  // namespace detail

bool top_candidates(const Context& ctx, const TopCandidatesArgs& a) {
  if (a.n_rows < 0 || a.n_rows > 0x7fffffff || a.n_vocab <= 0 || a.n_vocab > 0x7fffffff) {
    return false;
  }
  if (a.k_stride < 1 || a.logits == nullptr || a.rows == nullptr || a.ids == nullptr ||
      a.values == nullptr || a.stats == nullptr) {
    return false;
  }
  if (a.n_rows == 0) return true;
  ARC_LAUNCH(static_cast<unsigned>(a.n_rows), detail::kThreads, 0, ctx.stream,
             detail::candidates_kernel)
  (a);
  return true;
}

}  // namespace arc::kernels::cuda
