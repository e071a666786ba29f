// Q6_K_R16 against Q8_K activations, AVX-512 VNNI (layout: arc/kernels/repack.h). One 512-bit
// register holds the same 4 columns of 16 rows, so every lane is a row. One load of each of
// ql (two chunks) and qh (one chunk) gives 4 registers of 6-bit values q in [0, 63]:
//   vpdpbusd  s_j += 4 values q (u8) x the 4 activations broadcast (s8), per sub-block j
// and the -32 offset of Q6_K is folded in through the activations' sub-block sums. Per row:
//   y = sum_b d * xd_b * (sum_j sc_j * s_j - 32 * sum_j sc_j * bsum_j)
// with the integer sums exact (|sum| < 2^29) and the float steps in a fixed order per super-block:
// a row's result depends only on its weights and its token, never on the rows or tokens beside
// it. The row-major Q6_K kernel sums each row's lanes at its end and unpacks the 16 scales per
// row; here a register of scales serves 16 rows.
// GCC 12 reports false "may be used uninitialized" inside its own AVX-512 intrinsics (GCC bug
// 105593: _mm512_undefined_* placeholders); the warning is about the header, not this code.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include <cstring>

#include "arc/kernels/repack.h"
#include "cpu/matmul_kernels.h"
#include "cpu/matmul_r16.h"
#include "quant/blocks.h"

namespace arc::kernels::cpu {
namespace {

using quant::BlockQ8K;
// One super-block of 16 rows and where its parts start (repack.h).
constexpr size_t kGroupBlock = 3360;
constexpr size_t kScales = 32, kQl = 288, kQh = 2336;
// How far ahead of the super-block being computed its stream is prefetched, one line per 64 bytes
// read, spread over the loop (as the Q4_K_R16 kernel, which computes at a similar rate).
constexpr size_t kAhead = 9216;

inline int32_t load_i32(const void* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// y[t][0..15] for the 16 rows of one group (w: [nb][3360]) against NT tokens' Q8_K rows x[t]
// ([nb] blocks each). pf_end: where prefetching stops (rows_by_group). The loops over a
// super-block are unrolled: GCC 12 otherwise keeps the chunk loop and copies the accumulators
// around it (one core from L2: 8.0 -> 7.1 us per 128 x 4096 product).
template <int NT>
inline void group_dot(const uint8_t* w, int64_t nb, const BlockQ8K* const* x, const uint8_t* pf_end,
                      __m512* y) {
  const __m512i low4 = _mm512_set1_epi8(0x0F);
  const __m512i bits45 = _mm512_set1_epi8(0x30);
  __m512 acc[NT];
  for (int t = 0; t < NT; ++t) acc[t] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nb; ++b, w += kGroupBlock) {
    const bool prefetch = w + kAhead < pf_end;
    if (prefetch) {
      for (int i = 0; i < 5; ++i)  // d and scales: 288 bytes
        _mm_prefetch(reinterpret_cast<const char*>(w) + kAhead + 64 * i, _MM_HINT_T0);
    }
    __m512i isum[NT], osum[NT];  // [token] sum_j sc_j * s_j and sum_j sc_j * bsum_j per row
    for (int t = 0; t < NT; ++t) isum[t] = osum[t] = _mm512_setzero_si512();
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {  // values 128h .. 128h + 127, sub-blocks 8h .. 8h + 7
      // Scale pairs: 32-bit lane r of pairs[k] holds sc_{2p}, sc_{2p+1} of row r (p = 4h + k).
      __m512i pairs[4];
      for (int k = 0; k < 4; ++k) {
        pairs[k] = _mm512_cvtepi8_epi16(
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + kScales + 32 * (4 * h + k))));
        for (int t = 0; t < NT; ++t) {
          osum[t] = _mm512_dpwssd_epi32(
              osum[t], pairs[k], _mm512_set1_epi32(load_i32(x[t][b].bsums + 2 * (4 * h + k))));
        }
      }
      // Chunks c = 4q .. 4q + 3 complete sub-blocks 8h + q + 2k (k = 0..3), values
      // 128h + 32k + 16q .. + 15; their scales are the even (q = 0) or odd (q = 1) halves of the
      // pairs.
#pragma GCC unroll 2
      for (int q = 0; q < 2; ++q) {
        __m512i s[NT][4];  // [token][k]
        for (int t = 0; t < NT; ++t) {
          for (int k = 0; k < 4; ++k) s[t][k] = _mm512_setzero_si512();
        }
#pragma GCC unroll 4
        for (int c = 4 * q; c < 4 * q + 4; ++c) {
          const uint8_t* qh_chunk = w + kQh + 64 * (8 * h + c);
          const uint8_t* ql_a = w + kQl + 64 * (16 * h + c);  // values 128h + 4c (+ 64 high)
          const uint8_t* ql_b = ql_a + 64 * 8;                // values 128h + 32 + 4c (+ 64)
          if (prefetch) {
            _mm_prefetch(reinterpret_cast<const char*>(qh_chunk) + kAhead, _MM_HINT_T0);
            _mm_prefetch(reinterpret_cast<const char*>(ql_a) + kAhead, _MM_HINT_T0);
            _mm_prefetch(reinterpret_cast<const char*>(ql_b) + kAhead, _MM_HINT_T0);
          }
          const __m512i qh = _mm512_loadu_si512(qh_chunk);
          const __m512i qa = _mm512_loadu_si512(ql_a);
          const __m512i qb = _mm512_loadu_si512(ql_b);
          // Value registers k = 0..3 (values 128h + 32k + 4c ..): a low or high nibble with qh
          // bits 2k, 2k + 1 on top. 16-bit shifts: bits crossing into the other byte of a word
          // are masked off.
          const __m512i v[4] = {
              _mm512_or_si512(_mm512_and_si512(qa, low4),
                              _mm512_and_si512(_mm512_slli_epi16(qh, 4), bits45)),
              _mm512_or_si512(_mm512_and_si512(qb, low4),
                              _mm512_and_si512(_mm512_slli_epi16(qh, 2), bits45)),
              _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(qa, 4), low4),
                              _mm512_and_si512(qh, bits45)),
              _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(qb, 4), low4),
                              _mm512_and_si512(_mm512_srli_epi16(qh, 2), bits45))};
          for (int t = 0; t < NT; ++t) {
            const int8_t* xq = x[t][b].qs + 128 * h + 4 * c;
            for (int k = 0; k < 4; ++k) {
              s[t][k] =
                  _mm512_dpbusd_epi32(s[t][k], v[k], _mm512_set1_epi32(load_i32(xq + 32 * k)));
            }
          }
        }
        for (int k = 0; k < 4; ++k) {
          const __m512i sc = q == 0 ? _mm512_srai_epi32(_mm512_slli_epi32(pairs[k], 16), 16)
                                    : _mm512_srai_epi32(pairs[k], 16);
          for (int t = 0; t < NT; ++t) {
            isum[t] = _mm512_add_epi32(isum[t], _mm512_mullo_epi32(sc, s[t][k]));
          }
        }
      }
    }
    const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w)));
    for (int t = 0; t < NT; ++t) {
      const __m512i total = _mm512_sub_epi32(isum[t], _mm512_slli_epi32(osum[t], 5));
      acc[t] = _mm512_fmadd_ps(_mm512_mul_ps(d, _mm512_set1_ps(x[t][b].d)),
                               _mm512_cvtepi32_ps(total), acc[t]);
    }
  }
  for (int t = 0; t < NT; ++t) y[t] = acc[t];
}

}  // namespace

void rows_q6k_r16_avx512vnni(const RowsArgs& a, int64_t o0, int64_t o1) {
  const int64_t nb = a.n_in / quant::kQKK;
  // Prefill tokens in tiles of 4 (then 2, 1): one core, cache-resident (64 groups x 512 columns,
  // 64 tokens), 254 -> 187 us against pairs; the bench model's prefill +1.4% (median of 5).
  rows_by_group_q8k<4>(
      a, o0, o1, kGroupBlock,
      [&](const uint8_t* w, const BlockQ8K* const* x, auto nt, const uint8_t* pf_end, __m512* y) {
        group_dot<decltype(nt)::value>(w, nb, x, pf_end, y);
      });
}

}  // namespace arc::kernels::cpu
