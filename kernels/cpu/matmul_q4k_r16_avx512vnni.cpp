// Q4_K_R16 against Q8_K activations, AVX-512 VNNI (layout: arc/kernels/repack.h). One 512-bit
// register holds the same 4 columns of 16 rows, so every lane is a row:
//   vpdpbusd  s_j += 4 weight nibbles (u8) x the 4 activations broadcast (s8), per sub-block j
// and the scales of 16 rows unpack with a few byte operations per super-block. Per row:
//   y = sum_b d * xd_b * sum_j sc_j * s_j - dmin * xd_b * sum_j m_j * bsum_j
// with the integer sums exact and the float steps in a fixed order per super-block: a row's
// result depends only on its weights and its token, never on the rows or tokens beside it.
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
constexpr size_t kGroupBlock = 2304;  // one super-block of 16 rows
// How far ahead of the super-block being computed its stream is prefetched. The prefetches are
// spread over the super-block's loop (one line per 64 bytes read): a burst of a whole group's
// lines (9 KiB) at its start filled the core's miss queue and made DRAM streaming a third
// slower than the row-major kernel. 9 KiB ahead: 35 GB/s from DRAM on one core against 27 for the
// row-major Q4_K kernel (a 512 x 1024 expert, Zen 5).
constexpr size_t kAhead = 9216;

// Lane j (0..3) of a register of 16 bytes per 128-bit lane, zero-extended to 16 int32.
template <int J>
inline __m512i lane_u8(__m512i v) {
  if constexpr (J == 0) {
    return _mm512_cvtepu8_epi32(_mm512_castsi512_si128(v));
  } else {
    return _mm512_cvtepu8_epi32(_mm512_extracti32x4_epi32(v, J));
  }
}

// out[j] = sub-block j of the 8 held as bytes in lo (0..3) and hi (4..7), a row per int32 lane.
inline void widen_sub_blocks(__m512i lo, __m512i hi, __m512i* out) {
  out[0] = lane_u8<0>(lo);
  out[1] = lane_u8<1>(lo);
  out[2] = lane_u8<2>(lo);
  out[3] = lane_u8<3>(lo);
  out[4] = lane_u8<0>(hi);
  out[5] = lane_u8<1>(hi);
  out[6] = lane_u8<2>(hi);
  out[7] = lane_u8<3>(hi);
}

// The scales of one super-block of 16 rows (w: its 2304 bytes), each register
// [sub-block j in 128-bit lane j][row]:
//   j < 4:  sc = q[j] & 63,                    m = q[j + 4] & 63
//   j >= 4: sc = q[j + 4] & 15 | q[j - 4] >> 6 << 4, m = q[j + 4] >> 4 | q[j] >> 6 << 4
struct BlockScales {
  __m512i sc03, sc47, m03, m47;
  __m512 d, dmin;  // per row
};
inline BlockScales block_scales(const uint8_t* w) {
  const __m512i low4 = _mm512_set1_epi8(0x0F);
  const __m512i low6 = _mm512_set1_epi8(63);
  const __m512i bits45 = _mm512_set1_epi8(0x30);
  const __m512i q0 = _mm512_loadu_si512(w + 64);   // bytes 0..3 of the rows
  const __m512i q1 = _mm512_loadu_si512(w + 128);  // bytes 4..7
  const __m512i q2 = _mm512_loadu_si512(w + 192);  // bytes 8..11
  BlockScales s;
  s.sc03 = _mm512_and_si512(q0, low6);
  s.m03 = _mm512_and_si512(q1, low6);
  s.sc47 = _mm512_or_si512(_mm512_and_si512(q2, low4),
                           _mm512_and_si512(_mm512_srli_epi16(q0, 2), bits45));
  s.m47 = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(q2, 4), low4),
                          _mm512_and_si512(_mm512_srli_epi16(q1, 2), bits45));
  s.d = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w)));
  s.dmin = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 32)));
  return s;
}

// sum_j m_j * bsum_j per row for one token's block xb (mn: the widened mins, widen_sub_blocks;
// bsum_j: the sums of the token's 32 values of sub-block j).
inline __m512i mins_dot(const __m512i* mn, const BlockQ8K& xb) {
  alignas(32) int32_t bsum[8];
  _mm256_store_si256(
      reinterpret_cast<__m256i*>(bsum),
      _mm256_madd_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(xb.bsums)),
                        _mm256_set1_epi16(1)));
  __m512i msum = _mm512_mullo_epi32(mn[0], _mm512_set1_epi32(bsum[0]));
  for (int j = 1; j < 8; ++j) {
    msum = _mm512_add_epi32(msum, _mm512_mullo_epi32(mn[j], _mm512_set1_epi32(bsum[j])));
  }
  return msum;
}

// mins_dot with vpdpwssd on pairs of sub-blocks: mpair[k] holds m_{2k} | m_{2k+1} << 16 per row,
// and the token's sums fit int16 (|bsum_j| <= 32 * 127), so 4 products replace 8 multiplies and
// 7 additions; the sums are the same exact integers. For 8 tokens: 126-129 -> 116-118 us (the
// measurement of group_dot_wide below).
inline __m512i mins_dot_pairs(const __m512i* mpair, const BlockQ8K& xb) {
  const __m256i sums = _mm256_madd_epi16(
      _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xb.bsums)), _mm256_set1_epi16(1));
  alignas(16) int32_t pairs[4];  // bsum_{2k} | bsum_{2k+1} << 16
  _mm_store_si128(reinterpret_cast<__m128i*>(pairs),
                  _mm_packs_epi32(_mm256_castsi256_si128(sums), _mm256_extracti128_si256(sums, 1)));
  __m512i msum = _mm512_setzero_si512();
  for (int k = 0; k < 4; ++k) {
    msum = _mm512_dpwssd_epi32(msum, mpair[k], _mm512_set1_epi32(pairs[k]));
  }
  return msum;
}

// acc + d * xd * isum - dmin * xd * msum for one token's block xb, where isum = sum_j sc_j * s_j
// and msum = sum_j m_j * bsum_j.
inline __m512 add_block(const BlockScales& s, const BlockQ8K& xb, __m512i isum, __m512i msum,
                        __m512 acc) {
  const __m512 xd = _mm512_set1_ps(xb.d);
  acc = _mm512_fmadd_ps(_mm512_mul_ps(s.d, xd), _mm512_cvtepi32_ps(isum), acc);
  return _mm512_fnmadd_ps(_mm512_mul_ps(s.dmin, xd), _mm512_cvtepi32_ps(msum), acc);
}

inline void prefetch_block_head(const uint8_t* w) {
  for (int i = 0; i < 4; ++i) {
    _mm_prefetch(reinterpret_cast<const char*>(w) + kAhead + 64 * i, _MM_HINT_T0);
  }
}

// y[t][0..15] for the 16 rows of one group (w: [nb][2304]) against NT (1 or 2) tokens' Q8_K rows
// x[t] ([nb] blocks each). pf_end: where prefetching stops (rows_by_group).
template <int NT>
inline void group_dot(const uint8_t* w, int64_t nb, const BlockQ8K* const* x, const uint8_t* pf_end,
                      __m512* y) {
  const __m512i high4 = _mm512_set1_epi8(static_cast<char>(0xF0));
  __m512 acc[NT];
  for (int t = 0; t < NT; ++t) acc[t] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nb; ++b, w += kGroupBlock) {
    const bool prefetch = w + kAhead < pf_end;
    if (prefetch) prefetch_block_head(w);
    const BlockScales bs = block_scales(w);
    __m512i sc[8], mn[8];
    widen_sub_blocks(bs.sc03, bs.sc47, sc);
    widen_sub_blocks(bs.m03, bs.m47, mn);

    // The nibbles are not unpacked: a byte q = lo + 16 hi goes to vpdpbusd whole, and its high
    // nibble stays in place (h16 = q & 0xF0 = 16 hi). Per 64 bytes, 1 mask and 3 vpdpbusd:
    //   s[2g]     += q . xl - h16 . xl  (= lo . xl, the second sum kept apart in f)
    //   s[2g + 1] += h16 . xh           (= 16 hi . xh, divided by 16 after the loop)
    // instead of 3 unpacking operations and 2 vpdpbusd. The sums are exact either way:
    // |q . x| <= 32 * 255 * 128 per sub-block. Measured on one Zen 5 core, the variants
    // alternated in one process (32 groups x 1024 columns): cache-resident, 4.7 -> 3.9 us for one
    // token and 6.9 -> 5.7 us for two (unrolled); streaming from DRAM, unchanged.
    // Unrolled only for two tokens (prefill, where a group is reused from L1 by every pair):
    // unrolled, one token computed 25% faster from cache but streamed 20-25% slower from DRAM
    // (25 against 33 GB/s), whatever the prefetch distance or hint, and decode streams.
    __m512i s[NT][8];  // [token][sub-block j] integer dot products of the 16 rows
    __m512i f[NT][4];  // [token][g] h16 . xl of sub-block 2g, subtracted from s[2g]
    for (int t = 0; t < NT; ++t) {
      for (int j = 0; j < 8; ++j) s[t][j] = _mm512_setzero_si512();
      for (int j = 0; j < 4; ++j) f[t][j] = _mm512_setzero_si512();
    }
    // Chunk c of sub-blocks 2g, 2g + 1 (values 64g + 4c .., + 32) for every token.
    auto chunk_step = [&](int g, int c) {
      const uint8_t* chunk = w + 256 + 64 * (8 * g + c);
      if (prefetch) _mm_prefetch(reinterpret_cast<const char*>(chunk) + kAhead, _MM_HINT_T0);
      const __m512i q = _mm512_loadu_si512(chunk);
      const __m512i h16 = _mm512_and_si512(q, high4);
      for (int t = 0; t < NT; ++t) {
        int32_t xl, xh;
        std::memcpy(&xl, x[t][b].qs + 64 * g + 4 * c, 4);
        std::memcpy(&xh, x[t][b].qs + 64 * g + 32 + 4 * c, 4);
        const __m512i bl = _mm512_set1_epi32(xl);
        s[t][2 * g] = _mm512_dpbusd_epi32(s[t][2 * g], q, bl);
        f[t][g] = _mm512_dpbusd_epi32(f[t][g], h16, bl);
        s[t][2 * g + 1] = _mm512_dpbusd_epi32(s[t][2 * g + 1], h16, _mm512_set1_epi32(xh));
      }
    };
    if constexpr (NT == 1) {
      for (int g = 0; g < 4; ++g) {
        for (int c = 0; c < 8; ++c) chunk_step(g, c);
      }
    } else {
#pragma GCC unroll 4
      for (int g = 0; g < 4; ++g) {
#pragma GCC unroll 8
        for (int c = 0; c < 8; ++c) chunk_step(g, c);
      }
    }
    for (int t = 0; t < NT; ++t) {
      for (int g = 0; g < 4; ++g) {
        s[t][2 * g] = _mm512_sub_epi32(s[t][2 * g], f[t][g]);
        s[t][2 * g + 1] = _mm512_srai_epi32(s[t][2 * g + 1], 4);  // exact: a multiple of 16
      }
    }
    for (int t = 0; t < NT; ++t) {
      __m512i isum = _mm512_mullo_epi32(sc[0], s[t][0]);
      for (int j = 1; j < 8; ++j) isum = _mm512_add_epi32(isum, _mm512_mullo_epi32(sc[j], s[t][j]));
      acc[t] = add_block(bs, x[t][b], isum, mins_dot(mn, x[t][b]), acc[t]);
    }
  }
  for (int t = 0; t < NT; ++t) y[t] = acc[t];
}

// group_dot for NT = 4 or 8 tokens (prefill). The nibbles are unpacked once per 64 bytes and
// shared by every token, and each pair of sub-blocks is folded into the scale sums right after
// its 8 chunks, so the tokens need 2 NT accumulators instead of 8 NT. The integer sums are the
// same exact values, so each token's result equals group_dot's bit for bit. One Zen 5 core,
// cache-resident (32 groups x 1024 columns, 64 tokens): 177-201 us as pairs, 142-159 us as
// fours, 126-129 us as eights (116-118 with mins_dot_pairs). The super-block loop is written out
// here and in group_dot: passing its body as a lambda made the one-token kernel stream 2.5%
// slower from DRAM.
template <int NT>
inline void group_dot_wide(const uint8_t* w, int64_t nb, const BlockQ8K* const* x,
                           const uint8_t* pf_end, __m512* y) {
  const __m512i low4 = _mm512_set1_epi8(0x0F);
  __m512 acc[NT];
  for (int t = 0; t < NT; ++t) acc[t] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nb; ++b, w += kGroupBlock) {
    const bool prefetch = w + kAhead < pf_end;
    if (prefetch) prefetch_block_head(w);
    const BlockScales bs = block_scales(w);
    __m512i isum[NT];  // [token] sum_j sc_j * s_j
    for (int t = 0; t < NT; ++t) isum[t] = _mm512_setzero_si512();
#pragma GCC unroll 4
    for (int g = 0; g < 4; ++g) {
      __m512i s[NT][2];  // [token] sub-blocks 2g, 2g + 1
      for (int t = 0; t < NT; ++t) s[t][0] = s[t][1] = _mm512_setzero_si512();
#pragma GCC unroll 8
      for (int c = 0; c < 8; ++c) {
        const uint8_t* chunk = w + 256 + 64 * (8 * g + c);
        if (prefetch) _mm_prefetch(reinterpret_cast<const char*>(chunk) + kAhead, _MM_HINT_T0);
        const __m512i q = _mm512_loadu_si512(chunk);
        const __m512i lo = _mm512_and_si512(q, low4);
        const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(q, 4), low4);
        for (int t = 0; t < NT; ++t) {
          int32_t xl, xh;
          std::memcpy(&xl, x[t][b].qs + 64 * g + 4 * c, 4);
          std::memcpy(&xh, x[t][b].qs + 64 * g + 32 + 4 * c, 4);
          s[t][0] = _mm512_dpbusd_epi32(s[t][0], lo, _mm512_set1_epi32(xl));
          s[t][1] = _mm512_dpbusd_epi32(s[t][1], hi, _mm512_set1_epi32(xh));
        }
      }
      const __m512i sc_pair = g < 2 ? bs.sc03 : bs.sc47;
      const __m512i sc_lo = g % 2 == 0 ? lane_u8<0>(sc_pair) : lane_u8<2>(sc_pair);
      const __m512i sc_hi = g % 2 == 0 ? lane_u8<1>(sc_pair) : lane_u8<3>(sc_pair);
      for (int t = 0; t < NT; ++t) {
        isum[t] = _mm512_add_epi32(isum[t], _mm512_add_epi32(_mm512_mullo_epi32(sc_lo, s[t][0]),
                                                             _mm512_mullo_epi32(sc_hi, s[t][1])));
      }
    }
    __m512i mn[8], mpair[4];
    widen_sub_blocks(bs.m03, bs.m47, mn);
    for (int k = 0; k < 4; ++k) {
      mpair[k] = _mm512_or_si512(mn[2 * k], _mm512_slli_epi32(mn[2 * k + 1], 16));
    }
    for (int t = 0; t < NT; ++t) {
      acc[t] = add_block(bs, x[t][b], isum[t], mins_dot_pairs(mpair, x[t][b]), acc[t]);
    }
  }
  for (int t = 0; t < NT; ++t) y[t] = acc[t];
}

}  // namespace

void rows_q4k_r16_avx512vnni(const RowsArgs& a, int64_t o0, int64_t o1) {
  const int64_t nb = a.n_in / quant::kQKK;
  rows_by_group_q8k<8>(
      a, o0, o1, kGroupBlock,
      [&](const uint8_t* w, const BlockQ8K* const* x, auto nt, const uint8_t* pf_end, __m512* y) {
        constexpr int NT = decltype(nt)::value;
        if constexpr (NT >= 4) {
          group_dot_wide<NT>(w, nb, x, pf_end, y);
        } else {
          group_dot<NT>(w, nb, x, pf_end, y);
        }
      });
}

}  // namespace arc::kernels::cpu
