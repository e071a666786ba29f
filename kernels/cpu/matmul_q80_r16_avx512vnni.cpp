// Q8_0_R16 against Q8_0 activations, AVX-512 VNNI (layout: arc/kernels/repack.h). One 512-bit
// register holds the same 4 columns of 16 rows, stored as value + 128 (unsigned), so every lane
// is a row:
//   vpdpbusd  s += 4 weights + 128 (u8) x the 4 activations broadcast (s8)
// starting from -128 * (the block's activation sum), which leaves exactly sum w * x. Per row:
//   y = sum_b (d_b * xd_b) * s_b
// with s_b exact and the float steps in a fixed order per block: a row's result depends only on
// its weights and its token, never on the rows or tokens beside it.
// GCC 12 reports false "may be used uninitialized" inside its own AVX-512 intrinsics (GCC bug
// 105593: _mm512_undefined_* placeholders); the warning is about the header, not this code.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include <cstring>
#include <vector>

#include "arc/kernels/repack.h"
#include "cpu/matmul_kernels.h"
#include "cpu/matmul_r16.h"
#include "quant/blocks.h"

namespace arc::kernels::cpu {
namespace {

using quant::BlockQ8_0;
constexpr size_t kGroupBlock = 544;  // one block of 16 rows
// No software prefetch: this kernel computes fast enough (about 90 GB/s per core from L2) that
// its loads alone keep the hardware prefetchers ahead. Prefetching 2-16 KiB ahead, in a burst per
// block or spread over it, made MoE decode 10-26% slower (Zen 5, paired runs of the same expert
// stream). The slower Q4_K_R16 kernel is the other way round: without its prefetch it is 50%
// slower.

// y[t][0..15] for the 16 rows of one group (w: [nb][544]) against NT tokens' Q8_0 rows x[t].
template <int NT>
inline void group_dot(const uint8_t* w, int64_t nb, const BlockQ8_0* const* x,
                      const Q8_0BlockPrep* const* prep, __m512* y) {
  __m512 acc[NT];
  for (int t = 0; t < NT; ++t) acc[t] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nb; ++b, w += kGroupBlock) {
    // Two partial sums per token (even and odd chunks) halve the vpdpbusd dependency chain.
    __m512i s[NT][2];
    for (int t = 0; t < NT; ++t) {
      s[t][0] = _mm512_set1_epi32(prep[t][b].neg_sum);
      s[t][1] = _mm512_setzero_si512();
    }
    for (int c = 0; c < 8; ++c) {
      const __m512i q = _mm512_loadu_si512(w + 32 + 64 * c);
      for (int t = 0; t < NT; ++t) {
        int32_t xc;
        std::memcpy(&xc, x[t][b].qs + 4 * c, 4);
        s[t][c & 1] = _mm512_dpbusd_epi32(s[t][c & 1], q, _mm512_set1_epi32(xc));
      }
    }
    const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w)));
    for (int t = 0; t < NT; ++t) {
      const __m512i sum = _mm512_add_epi32(s[t][0], s[t][1]);
      acc[t] = _mm512_fmadd_ps(_mm512_mul_ps(d, _mm512_set1_ps(prep[t][b].d)),
                               _mm512_cvtepi32_ps(sum), acc[t]);
    }
  }
  for (int t = 0; t < NT; ++t) y[t] = acc[t];
}

}  // namespace

void rows_q80_r16_avx512vnni(const RowsArgs& a, int64_t o0, int64_t o1) {
  rows_by_group_q8_0(a, o0, o1, kGroupBlock, 128,
                     [](auto nt, const uint8_t* w, int64_t nb, const BlockQ8_0* const* x,
                        const Q8_0BlockPrep* const* p,
                        __m512* y) { group_dot<decltype(nt)::value>(w, nb, x, p, y); });
}

}  // namespace arc::kernels::cpu
