// Prefill attention on tensor cores (F16 caches, head_dim 64 / 128 / 256): one block of 4 warps
// per (64-token tile, query head); each warp owns 16 query rows. Per key tile:
//   S = Q K^T with mma.sync m16n8k16 (F16 inputs, F32 accumulation), the causal / window / other-
//   sequence mask, the online softmax on S in registers, then O += P V with P rounded to F16 (the
//   softmax denominator sums the same rounded P, so the weights stay normalised).
// The m16n8k16 accumulator layout is fixed by PTX (lane = 4 * group + quad: rows group and
// group + 8, columns 2 * quad and 2 * quad + 1 of each 8-column block), so the running max and
// sum of each row live in registers, and an S tile converts to the A fragment of P V without
// going through shared memory. V is stored transposed in shared memory so that its B fragments
// are 32-bit loads.
// Tiles that hold tokens of several sequences run the key loop once per sequence, as the CUDA-core
// kernel (attention_prefill.cu) does.
#include "cuda/attention.cuh"

namespace arc::kernels::cuda {
namespace detail {
namespace {

constexpr int kTcWarps = 4;
constexpr int kTcRows = 16 * kTcWarps;  // query tokens per block
constexpr int kTcThreads = kTcWarps * kWarp;

// c += a * b: a 16x16 (row), b 16x8 (col), F16 inputs, F32 accumulators.
__device__ __forceinline__ void mma_16816(float (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                                          uint32_t b1) {
#if defined(ARC_CUDA_EMULATION)
  arc::cuda_emu::mma_m16n8k16_row_col_f32_f16(c, a, b0, b1);  // the PTX layouts, emulated
#else
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
}

// Two adjacent halves of shared memory (4-byte aligned) as one register.
__device__ __forceinline__ uint32_t ld_pair(const __half* p) {
  return *reinterpret_cast<const uint32_t*>(p);
}

__device__ __forceinline__ uint32_t pack_half2(float lo, float hi) {
  const __half2 h = __floats2half2_rn(lo, hi);  // lo: the lower column
  return *reinterpret_cast<const uint32_t*>(&h);
}

template <int D, int KEYS>
struct TcShape {
  static constexpr int kQld = D + 8;     // halves per Q row (padding against bank conflicts)
  static constexpr int kKld = D + 8;     // halves per K row
  static constexpr int kVld = KEYS + 8;  // halves per row of V^T
  static constexpr size_t kSmem =
      (static_cast<size_t>(kTcRows) * kQld + static_cast<size_t>(KEYS) * kKld +
       static_cast<size_t>(D) * kVld) *
      sizeof(__half);
};

// grid: (ceil(n_tokens / 64), n_head); block: 128; dynamic shared memory: TcShape::kSmem.
template <int D, int KEYS>
__global__ void __launch_bounds__(kTcThreads) prefill_tc_kernel(AttnParams p) {
  using S = TcShape<D, KEYS>;
  ARC_DYNAMIC_SHARED(unsigned char, tc_smem);
  __half* qs = reinterpret_cast<__half*>(tc_smem);  // [64][kQld] scaled queries
  __half* ks = qs + kTcRows * S::kQld;              // [KEYS][kKld] keys
  __half* vt = ks + KEYS * S::kKld;                 // [D][kVld] values, transposed
  ARC_SHARED(int32_t, r_seq, [kTcRows]);
  ARC_SHARED(int64_t, r_pos, [kTcRows]);
  ARC_SHARED(int64_t, r_first, [kTcRows]);
  ARC_SHARED(int, r_done, [kTcRows]);
  ARC_SHARED(int32_t, s_seq, );
  ARC_SHARED(int64_t, s_lo, );
  ARC_SHARED(int64_t, s_hi, );

  const int tid = threadIdx.x, lane = tid % kWarp, warp = tid / kWarp;
  const int grp = lane / 4, quad = lane % 4;
  const int64_t t0 = static_cast<int64_t>(blockIdx.x) * kTcRows, h = blockIdx.y;
  const int64_t kvh = h / (p.n_head / p.n_kv_head);
  for (int i = tid; i < kTcRows; i += kTcThreads) {
    const int64_t t = t0 + i;
    const bool ok = t < p.n_tokens;
    r_seq[i] = ok ? p.token_seq[t] : -1;
    r_pos[i] = ok ? p.token_pos[t] : -1;
    r_first[i] = ok && p.window > 0 ? max(static_cast<int64_t>(0), r_pos[i] - p.window + 1) : 0;
    r_done[i] = !ok || r_pos[i] < 0;
  }
  for (int i = tid; i < kTcRows * D; i += kTcThreads) {
    const int r = i / D, c = i % D;
    const int64_t t = t0 + r;
    const float x = t < p.n_tokens ? p.q[(t * p.n_head + h) * D + c] * p.scale : 0.0f;
    qs[r * S::kQld + c] = __float2half_rn(x);
  }
  __syncthreads();

  const int row0 = warp * 16 + grp, row1 = row0 + 8;  // this thread's two query rows
  float o[D / 8][4];
#pragma unroll
  for (int j = 0; j < D / 8; ++j) o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.0f;
  float m0 = -INFINITY, m1 = -INFINITY;
  float l0 = 0.0f, l1 = 0.0f;  // this thread's share of the row sums (its columns only)

  for (;;) {
    if (tid == 0) {
      // The sequence of the first unfinished row and the union of its rows' key ranges.
      int32_t seq = -1;
      int64_t lo = 0, hi = -1;
      for (int i = 0; i < kTcRows; ++i) {
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
      s_seq = seq;
      s_lo = lo;
      s_hi = hi;
    }
    __syncthreads();
    const int32_t seq = s_seq;
    const int64_t lo = s_lo, hi = s_hi;
    if (seq < 0) break;
    const bool mine0 = !r_done[row0] && r_seq[row0] == seq;
    const bool mine1 = !r_done[row1] && r_seq[row1] == seq;
    const int64_t first0 = r_first[row0], pos0 = r_pos[row0];
    const int64_t first1 = r_first[row1], pos1 = r_pos[row1];

    for (int64_t kb = lo; kb <= hi; kb += KEYS) {
      // K rows and V^T columns of the tile: 8 halves (16 bytes) per load. Consecutive threads
      // take consecutive keys, so the transposed V stores hit consecutive halves (no bank
      // conflicts); the K/V rows come from L2, shared by the blocks of the other heads and tiles.
      for (int i = tid; i < KEYS * (D / 8); i += kTcThreads) {
        const int kk = i % KEYS, c8 = (i / KEYS) * 8;
        const int64_t ps = kb + kk;
        uint4 kv = make_uint4(0, 0, 0, 0), vv = make_uint4(0, 0, 0, 0);
        if (ps <= hi) {
          const int64_t row = kv_row(p, seq, ps, kvh);
          kv = *reinterpret_cast<const uint4*>(p.k + row * p.row_bytes + c8 * 2);
          vv = *reinterpret_cast<const uint4*>(p.v + row * p.row_bytes + c8 * 2);
        }
        *reinterpret_cast<uint4*>(ks + kk * S::kKld + c8) = kv;
        const __half* vh = reinterpret_cast<const __half*>(&vv);
#pragma unroll
        for (int j = 0; j < 8; ++j) vt[(c8 + j) * S::kVld + kk] = vh[j];
      }
      __syncthreads();

      // S = Q K^T for this warp's 16 rows: [16, KEYS] as KEYS / 8 accumulator blocks.
      float s[KEYS / 8][4];
#pragma unroll
      for (int nb = 0; nb < KEYS / 8; ++nb) s[nb][0] = s[nb][1] = s[nb][2] = s[nb][3] = 0.0f;
      const __half* qw = qs + warp * 16 * S::kQld;
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) {
        uint32_t a[4];
        a[0] = ld_pair(qw + grp * S::kQld + kk * 16 + 2 * quad);
        a[1] = ld_pair(qw + (grp + 8) * S::kQld + kk * 16 + 2 * quad);
        a[2] = ld_pair(qw + grp * S::kQld + kk * 16 + 2 * quad + 8);
        a[3] = ld_pair(qw + (grp + 8) * S::kQld + kk * 16 + 2 * quad + 8);
#pragma unroll
        for (int nb = 0; nb < KEYS / 8; ++nb) {
          const __half* kr = ks + (nb * 8 + grp) * S::kKld + kk * 16 + 2 * quad;
          mma_16816(s[nb], a, ld_pair(kr), ld_pair(kr + 8));
        }
      }

      // Mask, then the online softmax of rows row0 (s[.][0..1]) and row1 (s[.][2..3]).
      float mx0 = -INFINITY, mx1 = -INFINITY;
#pragma unroll
      for (int nb = 0; nb < KEYS / 8; ++nb) {
#pragma unroll
        for (int j = 0; j < 2; ++j) {
          const int64_t key = kb + nb * 8 + 2 * quad + j;
          if (!(mine0 && key >= first0 && key <= pos0)) s[nb][j] = -INFINITY;
          if (!(mine1 && key >= first1 && key <= pos1)) s[nb][2 + j] = -INFINITY;
          mx0 = fmaxf(mx0, s[nb][j]);
          mx1 = fmaxf(mx1, s[nb][2 + j]);
        }
      }
      // The four lanes of a group hold the same two rows.
#pragma unroll
      for (int off = 1; off < 4; off <<= 1) {
        mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, off));
        mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, off));
      }
      const float n0 = fmaxf(m0, mx0), n1 = fmaxf(m1, mx1);
      const float c0 = n0 == -INFINITY ? 1.0f : expf(m0 - n0);  // m = -inf: 0
      const float c1 = n1 == -INFINITY ? 1.0f : expf(m1 - n1);
      m0 = n0;
      m1 = n1;
      float sum0 = 0.0f, sum1 = 0.0f;
#pragma unroll
      for (int nb = 0; nb < KEYS / 8; ++nb) {
#pragma unroll
        for (int j = 0; j < 2; ++j) {
          // Rounded to F16 here, as P V will see them.
          const float w0 =
              s[nb][j] == -INFINITY ? 0.0f : __half2float(__float2half_rn(expf(s[nb][j] - n0)));
          const float w1 = s[nb][2 + j] == -INFINITY
                               ? 0.0f
                               : __half2float(__float2half_rn(expf(s[nb][2 + j] - n1)));
          s[nb][j] = w0;
          s[nb][2 + j] = w1;
          sum0 += w0;
          sum1 += w1;
        }
      }
      l0 = l0 * c0 + sum0;
      l1 = l1 * c1 + sum1;
#pragma unroll
      for (int j = 0; j < D / 8; ++j) {
        o[j][0] *= c0;
        o[j][1] *= c0;
        o[j][2] *= c1;
        o[j][3] *= c1;
      }

      // O += P V: the S blocks 2kk and 2kk + 1 are the A fragment of keys [16 kk, 16 kk + 16).
#pragma unroll
      for (int kk = 0; kk < KEYS / 16; ++kk) {
        uint32_t a[4];
        a[0] = pack_half2(s[2 * kk][0], s[2 * kk][1]);
        a[1] = pack_half2(s[2 * kk][2], s[2 * kk][3]);
        a[2] = pack_half2(s[2 * kk + 1][0], s[2 * kk + 1][1]);
        a[3] = pack_half2(s[2 * kk + 1][2], s[2 * kk + 1][3]);
#pragma unroll
        for (int nd = 0; nd < D / 8; ++nd) {
          const __half* vr = vt + (nd * 8 + grp) * S::kVld + kk * 16 + 2 * quad;
          mma_16816(o[nd], a, ld_pair(vr), ld_pair(vr + 8));
        }
      }
      __syncthreads();  // before the next tile overwrites K and V
    }
    if (tid < kTcRows && r_seq[tid] == seq) r_done[tid] = 1;
    __syncthreads();
  }

  // Row sums over the group's four lanes, then the outputs.
#pragma unroll
  for (int off = 1; off < 4; off <<= 1) {
    l0 += __shfl_xor_sync(0xffffffffu, l0, off);
    l1 += __shfl_xor_sync(0xffffffffu, l1, off);
  }
  l0 = with_sink(p, h, m0, l0);
  l1 = with_sink(p, h, m1, l1);
  const int64_t ta = t0 + row0, tb = t0 + row1;
#pragma unroll
  for (int nd = 0; nd < D / 8; ++nd) {
    const int c = nd * 8 + 2 * quad;
    if (ta < p.n_tokens) {
      float* out = p.out + (ta * p.n_head + h) * D + c;
      out[0] = l0 > 0.0f ? o[nd][0] / l0 : 0.0f;
      out[1] = l0 > 0.0f ? o[nd][1] / l0 : 0.0f;
    }
    if (tb < p.n_tokens) {
      float* out = p.out + (tb * p.n_head + h) * D + c;
      out[0] = l1 > 0.0f ? o[nd][2] / l1 : 0.0f;
      out[1] = l1 > 0.0f ? o[nd][3] / l1 : 0.0f;
    }
  }
}

template <int D, int KEYS>
bool launch_tc(Stream s, const AttnParams& p) {
  constexpr size_t smem = TcShape<D, KEYS>::kSmem;
  if (smem > 48 * 1024) {
    ARC_CUDA_CHECK(cudaFuncSetAttribute(prefill_tc_kernel<D, KEYS>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(smem)));
  }
  const dim3 grid(ceil_div(p.n_tokens, kTcRows), static_cast<unsigned>(p.n_head));
  ARC_LAUNCH(grid, kTcThreads, smem, s, prefill_tc_kernel<D, KEYS>)(p);
  return true;
}

}  // namespace

bool prefill_tc_supported(const AttnParams& p) {
  return p.kv_type == static_cast<int>(DType::F16) &&
         (p.head_dim == 64 || p.head_dim == 128 || p.head_dim == 256) &&
         p.row_bytes == static_cast<size_t>(p.head_dim) * 2;
}

bool launch_attention_prefill_tc(Stream s, const AttnParams& p) {
  switch (p.head_dim) {
    case 64:
      return launch_tc<64, 64>(s, p);
    case 128:
      return launch_tc<128, 64>(s, p);
    case 256:
      return launch_tc<256, 32>(s,
                                p);  // 32-key tiles: the O accumulators already take 128 registers
    default:
      return false;
  }
}

}  // namespace detail
}  // namespace arc::kernels::cuda
