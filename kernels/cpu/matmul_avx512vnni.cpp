// AVX-512 VNNI matmul kernels (level kAvx512Vnni) for the integer formats; every other type runs
// the kAvx512 kernel. VNNI fuses the widening multiply-add with the accumulate:
//   vpdpbusd  acc += sum of 4 u8 * s8 products (exact: no int16 saturation as with maddubs)
//   vpdpwssd  acc += sum of 2 s16 * s16 products (applies the K-quant sub-block scales to
//             maddubs' int16 pair sums in the same instruction as the accumulate).
// Decode is compute bound per core on these formats (a core cannot stream its share of DRAM
// bandwidth through the AVX-512 kernels), so these kernels also trim the per-block work around
// the dot products: Q4_K / Q5_K scales are unpacked with two byte shuffles instead of scalar code,
// and per-sub-block scale vectors come from in-lane shuffles (vpshufb) instead of lane-crossing
// permutes.
// GCC 12 reports false "may be used uninitialized" inside its own AVX-512 intrinsics (GCC bug
// 105593: _mm512_undefined_* placeholders); the warning is about the header, not this code.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "cpu/matmul_kernels.h"
#include "quant/blocks.h"
#include "quant/half.h"

namespace arc::kernels::cpu {
namespace avx512vnni {
namespace {
constexpr int kTile = 4;
#include "cpu/matmul_x86.inc"

inline __m512i loadu512(const void* p) {
  return _mm512_loadu_si512(p);
}
// 32 bytes at p in both 256-bit halves.
inline __m512i bcast256(const void* p) {
  return _mm512_broadcast_i64x4(loadu(p));
}
inline const BlockQ8K* q8k(const uint8_t* xa, size_t xs, int t, int64_t b) {
  return reinterpret_cast<const BlockQ8K*>(xa + t * xs) + b;
}
inline const BlockQ8_0* q80(const uint8_t* xa, size_t xs, int t, int64_t b) {
  return reinterpret_cast<const BlockQ8_0*>(xa + t * xs) + b;
}
// The fp16 scales of blocks b and b + 1 (`d` at byte offset `off` of each) as [d_b x8, d_b+1 x8].
template <class Block>
inline __m512 h2f_pair(const Block* blocks, size_t off) {
  uint16_t a, b;
  std::memcpy(&a, reinterpret_cast<const uint8_t*>(blocks) + off, 2);
  std::memcpy(&b, reinterpret_cast<const uint8_t*>(blocks + 1) + off, 2);
  __m256i v = _mm256_set1_epi16(static_cast<int16_t>(a));
  v = _mm256_mask_set1_epi16(v, 0xFF00, static_cast<int16_t>(b));
  return _mm512_cvtph_ps(v);
}
// The constants of the Q4_K / Q5_K kernel, read from memory: built from immediates, GCC
// re-materialised them for every weight row (about 35 instructions, a fifth of a 1024-wide row).
struct alignas(64) KQuant45Tables {
  // scale_idx[g]: pshufb index making each 16-bit word the zero-extended byte 2g (low 256 bits)
  // or 2g + 1 (high 256 bits) of every 128-bit lane.
  uint16_t scale_idx[4][32];
  uint16_t shifts[32];  // 0 in the low 256 bits, 4 in the high ones
  // Mins as 16 words m0 m0 m1 m1 .. m7 m7 from bytes 8..15, against the 16 bsums.
  int8_t min_idx[32];
};
constexpr KQuant45Tables make_kquant45_tables() {
  KQuant45Tables t{};
  for (int g = 0; g < 4; ++g) {
    for (int i = 0; i < 32; ++i)
      t.scale_idx[g][i] = static_cast<uint16_t>(0x8000 | (2 * g + i / 16));
  }
  for (int i = 0; i < 32; ++i) t.shifts[i] = i < 16 ? 0 : 4;
  for (int i = 0; i < 32; ++i) t.min_idx[i] = i % 2 == 0 ? static_cast<int8_t>(8 + i / 4) : -1;
  return t;
}
constexpr KQuant45Tables kKQuant45 = make_kquant45_tables();

// The 12 packed bytes of Q4_K / Q5_K scales of two blocks (128-bit lane i: the first 12 of the
// 16 bytes loaded at packed[i]) -> per lane, bytes 0..7 the 6-bit sub-block scales and 8..15 the
// mins, as unpack_scale_min_k4 does per sub-block:
//   j < 4:  sc = q[j] & 63,                          m = q[j + 4] & 63
//   j >= 4: sc = (q[j + 4] & 15) | (q[j - 4] >> 6) << 4, m = (q[j + 4] >> 4) | (q[j] >> 6) << 4
inline __m256i unpack_scales_k4_x2(const uint8_t* packed0, const uint8_t* packed1) {
  const __m256i raw = _mm256_inserti128_si256(
      _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(packed0))),
      _mm_loadu_si128(reinterpret_cast<const __m128i*>(packed1)), 1);
  // Low parts: q[0..3], q[8..11], q[4..7], q[8..11]; high parts (top 2 bits): -, q[0..3], -,
  // q[4..7].
  const __m256i lo = _mm256_shuffle_epi8(
      raw, _mm256_setr_epi8(0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 8, 9, 10, 11,  //
                            0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 8, 9, 10, 11));
  const __m256i hi = _mm256_shuffle_epi8(
      raw, _mm256_setr_epi8(-1, -1, -1, -1, 0, 1, 2, 3, -1, -1, -1, -1, 4, 5, 6, 7,  //
                            -1, -1, -1, -1, 0, 1, 2, 3, -1, -1, -1, -1, 4, 5, 6, 7));
  // Bytes 12..15 take the high nibble of q[8..11] (shifted within 16-bit words, then masked).
  const __m256i l = _mm256_mask_blend_epi8(0xF000F000, lo, _mm256_srli_epi16(lo, 4));
  const __m256i keep =
      _mm256_setr_epi8(63, 63, 63, 63, 15, 15, 15, 15, 63, 63, 63, 63, 15, 15, 15, 15, 63, 63, 63,
                       63, 15, 15, 15, 15, 63, 63, 63, 63, 15, 15, 15, 15);
  return _mm256_or_si256(_mm256_and_si256(l, keep),
                         _mm256_and_si256(_mm256_srli_epi16(hi, 2), _mm256_set1_epi8(0x30)));
}

// Q4_K and Q5_K (HighBits) against Q8_K, two blocks per step (the scale unpacking, the mins and
// the scale products of a pair share their instructions; an odd last block runs alone). Group g
// (64 values): the 32 bytes of qs are broadcast to both halves and shifted by 0 / 4, which puts
// values 64g .. 64g+63 in order (sub-block 2g in the low half, 2g+1 in the high half) against one
// 512-bit load of the activations. maddubs gives int16 pair sums (<= 2 * 31 * 127), vpdpwssd
// multiplies them by the sub-block scale and accumulates. Mins: dmin * m_j * sum of the
// activations of sub-block j (from the Q8_K bsums). The float accumulation order depends only on
// the block count, never on NT, so a token gets the same result alone and in a tile.
template <bool HighBits>
struct KQuant45Vnni {
  using Block = std::conditional_t<HighBits, BlockQ5K, BlockQ4K>;
  static constexpr size_t kPrefetchAhead = kKQuantPrefetchBytes;

  // sumi[t] = the scaled integer dot products of block b for every token (sm4: the block's
  // unpacked scales in every 128-bit lane).
  template <int NT>
  static void block_sums(const Block& w, __m512i sm4, const uint8_t* xa, size_t xs, int64_t b,
                         __m512i* sumi) {
    const __m512i low4 = _mm512_set1_epi8(0x0F);
    const __m512i shifts = _mm512_load_si512(kKQuant45.shifts);
    for (int t = 0; t < NT; ++t) sumi[t] = _mm512_setzero_si512();
    [[maybe_unused]] __m512i hb;
    if constexpr (HighBits) hb = bcast256(w.qh);
    for (int g = 0; g < 4; ++g) {
      __m512i q = _mm512_and_si512(_mm512_srlv_epi16(bcast256(w.qs + 32 * g), shifts), low4);
      if constexpr (HighBits) {
        // qh bit 2g (low half) / 2g+1 (high half) of each byte -> +16: move it to bit 4.
        // 16-bit shifts: the bits that cross into the other byte of a word are masked off.
        const int k = 2 * g;
        const __m512i h =
            k < 4 ? _mm512_sllv_epi16(
                        hb, _mm512_inserti64x4(_mm512_set1_epi16(static_cast<int16_t>(4 - k)),
                                               _mm256_set1_epi16(static_cast<int16_t>(3 - k)), 1))
                  : _mm512_srlv_epi16(
                        hb, _mm512_inserti64x4(_mm512_set1_epi16(static_cast<int16_t>(k - 4)),
                                               _mm256_set1_epi16(static_cast<int16_t>(k - 3)), 1));
        q = _mm512_or_si512(q, _mm512_and_si512(h, _mm512_set1_epi8(0x10)));
      }
      const __m512i scv = _mm512_shuffle_epi8(sm4, _mm512_load_si512(kKQuant45.scale_idx[g]));
      for (int t = 0; t < NT; ++t) {
        const __m512i p = _mm512_maddubs_epi16(q, loadu512(q8k(xa, xs, t, b)->qs + 64 * g));
        sumi[t] = _mm512_dpwssd_epi32(sumi[t], p, scv);
      }
    }
  }

  // The 16 Q8_K bsums of block b of token t.
  static __m256i bsums(const uint8_t* xa, size_t xs, int t, int64_t b) {
    return loadu(reinterpret_cast<const uint8_t*>(q8k(xa, xs, t, b)) + offsetof(BlockQ8K, bsums));
  }

  template <int NT>
  static void dot(int64_t n_in, const uint8_t* wrow, const uint8_t* xa, size_t xs, float* out) {
    const auto* w = reinterpret_cast<const Block*>(wrow);  // [n_in / 256]
    const int64_t nb = n_in / kQKK;
    const __m256i min_idx = _mm256_load_si256(reinterpret_cast<const __m256i*>(kKQuant45.min_idx));
    // Lanes 0..7: the dmin product of the first block of a pair (element 1 of [d, dmin, d',
    // dmin']), lanes 8..15: the second block's (element 3).
    const __m512i dmin_idx = _mm512_inserti64x4(_mm512_set1_epi32(1), _mm256_set1_epi32(3), 1);
    __m512 acc[NT], accm[NT];
    for (int t = 0; t < NT; ++t) acc[t] = accm[t] = _mm512_setzero_ps();
    int64_t b = 0;
    for (; b + 2 <= nb; b += 2) {
      const __m512i sm = _mm512_castsi256_si512(unpack_scales_k4_x2(w[b].scales, w[b + 1].scales));
      __m512i sumi0[NT], sumi1[NT];
      block_sums<NT>(w[b], _mm512_shuffle_i32x4(sm, sm, 0x00), xa, xs, b, sumi0);
      block_sums<NT>(w[b + 1], _mm512_shuffle_i32x4(sm, sm, 0x55), xa, xs, b + 1, sumi1);
      // Mins as 16 words m0 m0 .. m7 m7 of each block (128-bit lanes 0-1: block b, 2-3: b + 1)
      // against the 2 x 16 bsums.
      const __m512i mins =
          _mm512_shuffle_epi8(_mm512_shuffle_i64x2(sm, sm, 0x50),
                              _mm512_inserti64x4(_mm512_castsi256_si512(min_idx), min_idx, 1));
      // d and dmin of both blocks (adjacent fp16 at the start of each): [d, dmin, d', dmin'].
      uint32_t dp0, dp1;
      std::memcpy(&dp0, &w[b], 4);
      std::memcpy(&dp1, &w[b + 1], 4);
      const __m128 dd = _mm_cvtph_ps(_mm_unpacklo_epi32(_mm_cvtsi32_si128(static_cast<int>(dp0)),
                                                        _mm_cvtsi32_si128(static_cast<int>(dp1))));
      for (int t = 0; t < NT; ++t) {
        const __m128 xd = _mm_blend_ps(_mm_set1_ps(q8k(xa, xs, t, b)->d),
                                       _mm_set1_ps(q8k(xa, xs, t, b + 1)->d), 0xC);
        const __m128 s = _mm_mul_ps(dd, xd);  // [d xd, dmin xd, d' xd', dmin' xd']
        acc[t] = _mm512_fmadd_ps(_mm512_broadcastss_ps(s), _mm512_cvtepi32_ps(sumi0[t]), acc[t]);
        acc[t] = _mm512_fmadd_ps(_mm512_broadcastss_ps(_mm_movehl_ps(s, s)),
                                 _mm512_cvtepi32_ps(sumi1[t]), acc[t]);
        const __m512i m =
            _mm512_madd_epi16(mins, _mm512_inserti64x4(_mm512_castsi256_si512(bsums(xa, xs, t, b)),
                                                       bsums(xa, xs, t, b + 1), 1));
        accm[t] = _mm512_fmadd_ps(_mm512_permutexvar_ps(dmin_idx, _mm512_castps128_ps512(s)),
                                  _mm512_cvtepi32_ps(m), accm[t]);
      }
    }
    if (b < nb) {
      const __m512i sm = _mm512_castsi256_si512(unpack_scales_k4_x2(w[b].scales, w[b].scales));
      __m512i sumi[NT];
      block_sums<NT>(w[b], _mm512_shuffle_i32x4(sm, sm, 0x00), xa, xs, b, sumi);
      const __m256i mins =
          _mm256_shuffle_epi8(_mm512_castsi512_si256(_mm512_shuffle_i64x2(sm, sm, 0)), min_idx);
      uint32_t dpair;
      std::memcpy(&dpair, &w[b], 4);
      const __m128 dd = _mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(dpair)));
      for (int t = 0; t < NT; ++t) {
        const __m128 s = _mm_mul_ps(dd, _mm_set1_ps(q8k(xa, xs, t, b)->d));  // [d xd, dmin xd, ..]
        acc[t] = _mm512_fmadd_ps(_mm512_broadcastss_ps(s), _mm512_cvtepi32_ps(sumi[t]), acc[t]);
        const __m256i m = _mm256_madd_epi16(mins, bsums(xa, xs, t, b));
        accm[t] = _mm512_fmadd_ps(
            _mm512_broadcastss_ps(_mm_movehdup_ps(s)),
            _mm512_castsi512_ps(_mm512_zextsi256_si512(_mm256_castps_si256(_mm256_cvtepi32_ps(m)))),
            accm[t]);
      }
    }
    for (int t = 0; t < NT; ++t) out[t] = _mm512_reduce_add_ps(_mm512_sub_ps(acc[t], accm[t]));
  }
};

// Q6_K against Q8_K. Half h (128 values): ql[64h .. 64h+63] as one 512-bit load holds the low
// nibbles of values 128h + 0..63 and the high nibbles of 128h + 64..127; qh[32h ..] (broadcast to
// both halves) holds the top 2 bits, bits 0-1 / 2-3 / 4-5 / 6-7 for the four 32-value quarters.
// q in [0, 63] goes through maddubs (pairs <= 2 * 63 * 127) and vpdpwssd with the int8 sub-block
// scale, one per 16 values = one per 128-bit lane. The -32 offset is folded in through the bsums:
// sum sc * (q - 32) * x = sum sc * q * x - 32 * sum_j sc_j * bsums_j.
struct Q6KVnni {
  static constexpr size_t kPrefetchAhead = kKQuantPrefetchBytes;
  template <int NT>
  static void dot(int64_t n_in, const uint8_t* wrow, const uint8_t* xa, size_t xs, float* out) {
    const auto* w = reinterpret_cast<const BlockQ6K*>(wrow);  // [n_in / 256]
    const int64_t nb = n_in / kQKK;
    const __m512i low4 = _mm512_set1_epi8(0x0F), m30 = _mm512_set1_epi8(0x30);
    const __m512i shl_a = _mm512_inserti64x4(_mm512_set1_epi16(4), _mm256_set1_epi16(2), 1);
    const __m512i shr_b = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(2), 1);
    // Lane k of the scale table holds, in the high bytes of words c = 0..3, scale 4c + k.
    alignas(64) static constexpr int8_t kTableIdx[64] = {
        -1, 0, -1, 4, -1, 8,  -1, 12, -1, -1, -1, -1, -1, -1, -1, -1,  //
        -1, 1, -1, 5, -1, 9,  -1, 13, -1, -1, -1, -1, -1, -1, -1, -1,  //
        -1, 2, -1, 6, -1, 10, -1, 14, -1, -1, -1, -1, -1, -1, -1, -1,  //
        -1, 3, -1, 7, -1, 11, -1, 15, -1, -1, -1, -1, -1, -1, -1, -1};
    const __m512i table_idx = _mm512_load_si512(kTableIdx);
    __m512 acc[NT];
    for (int t = 0; t < NT; ++t) acc[t] = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
      const __m128i sc8 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w[b].scales));
      // Words c = 0..3 of lane k: scale 4c + k, sign-extended.
      const __m512i table =
          _mm512_srai_epi16(_mm512_shuffle_epi8(_mm512_broadcast_i32x4(sc8), table_idx), 8);
      const __m256i sc16 = _mm256_cvtepi8_epi16(sc8);
      __m512i sumi[NT];
      for (int t = 0; t < NT; ++t) {
        const BlockQ8K* xb = q8k(xa, xs, t, b);
        const __m256i off = _mm256_madd_epi16(
            sc16, loadu(reinterpret_cast<const uint8_t*>(xb) + offsetof(BlockQ8K, bsums)));
        sumi[t] = _mm512_zextsi256_si512(
            _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(off, 5)));
      }
      for (int h = 0; h < 2; ++h) {
        const __m512i ql = loadu512(w[b].ql + 64 * h);
        const __m512i qh = bcast256(w[b].qh + 32 * h);
        // Values 128h + 0..63: low nibbles | qh bits 0-1 (low half) / 2-3 (high half) << 4;
        // values 128h + 64..127: high nibbles | qh bits 4-5 / 6-7. 16-bit shifts: bits crossing
        // into the other byte of a word are masked off.
        const __m512i q[2] = {_mm512_or_si512(_mm512_and_si512(ql, low4),
                                              _mm512_and_si512(_mm512_sllv_epi16(qh, shl_a), m30)),
                              _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(ql, 4), low4),
                                              _mm512_and_si512(_mm512_srlv_epi16(qh, shr_b), m30))};
        for (int s = 0; s < 2; ++s) {
          const int c = 2 * h + s;
          const __m512i scv = _mm512_shuffle_epi8(
              table, _mm512_set1_epi16(static_cast<int16_t>((2 * c + 1) << 8 | 2 * c)));
          for (int t = 0; t < NT; ++t) {
            const __m512i p = _mm512_maddubs_epi16(q[s], loadu512(q8k(xa, xs, t, b)->qs + 64 * c));
            sumi[t] = _mm512_dpwssd_epi32(sumi[t], p, scv);
          }
        }
      }
      const float d = h2f(w[b].d);
      for (int t = 0; t < NT; ++t) {
        acc[t] = _mm512_fmadd_ps(_mm512_set1_ps(d * q8k(xa, xs, t, b)->d),
                                 _mm512_cvtepi32_ps(sumi[t]), acc[t]);
      }
    }
    for (int t = 0; t < NT; ++t) out[t] = _mm512_reduce_add_ps(acc[t]);
  }
};

// Two consecutive 32-value blocks as one 512-bit vector: Q8_0's int8 values, Q4_0's unsigned
// nibbles 0..15 (the value is q - 8).
struct Q8_0Vnni {
  static __m512i decode2(const BlockQ8_0* w) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(loadu(w[0].qs)), loadu(w[1].qs), 1);
  }
};
struct Q4_0Vnni {
  static __m512i decode2(const BlockQ4_0* w) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(unpack_nibbles(w[0].qs)),
                              unpack_nibbles(w[1].qs), 1);
  }
};

// Q8_0 (Signed) and Q4_0 against Q8_0 activations, two blocks per step, for prefill tiles and odd
// block counts (decode goes through rows_block32 below). Q8_0: vpdpbusd(|w|, x with w's sign),
// exact for any int8 weight (also -128, which maddubs' sign trick could not take). Q4_0: the
// nibbles straight into vpdpbusd, minus a second vpdpbusd for sum(8 * x). An odd last block runs
// a 256-bit step.
template <class Block, bool Signed>
struct Block32Vnni {
  // 8 tokens per weight-row pass: Q8_0 prefill 16% faster than 4 (bench_kernels Matmul, 1
  // thread) and 3-10% in the engine; Q4_K and Q6_K gained nothing in the engine and keep 4.
  static constexpr int kTileTokens = 8;
  template <int NT>
  static void dot(int64_t n_in, const uint8_t* wrow, const uint8_t* xa, size_t xs, float* out) {
    const auto* w = reinterpret_cast<const Block*>(wrow);  // [n_in / 32]
    const int64_t nb = n_in / kQK;
    const __m512i eight = _mm512_set1_epi8(8);
    // Pairs of blocks alternate between two accumulators per token, exactly as dot_prepared
    // (decode) does, so a token's result does not depend on whether it ran alone or in a tile.
    __m512 acc[2][NT];
    for (int t = 0; t < NT; ++t) acc[0][t] = acc[1][t] = _mm512_setzero_ps();
    int64_t b = 0;
    for (; b + 2 <= nb; b += 2) {
      const int k = static_cast<int>((b / 2) & 1);
      __m512i q, qa;
      [[maybe_unused]] __mmask64 neg = 0;
      if constexpr (Signed) {
        q = Q8_0Vnni::decode2(reinterpret_cast<const BlockQ8_0*>(w + b));
        qa = _mm512_abs_epi8(q);
        neg = _mm512_movepi8_mask(q);
      } else {
        qa = Q4_0Vnni::decode2(reinterpret_cast<const BlockQ4_0*>(w + b));
      }
      const __m512 dw = h2f_pair(w + b, offsetof(Block, d));
      for (int t = 0; t < NT; ++t) {
        const BlockQ8_0* xb = q80(xa, xs, t, b);
        const __m512i xv =
            _mm512_inserti64x4(_mm512_castsi256_si512(loadu(xb[0].qs)), loadu(xb[1].qs), 1);
        __m512i p;
        if constexpr (Signed) {
          p = _mm512_dpbusd_epi32(_mm512_setzero_si512(), qa,
                                  _mm512_mask_sub_epi8(xv, neg, _mm512_setzero_si512(), xv));
        } else {
          const __m512i sx = _mm512_dpbusd_epi32(_mm512_setzero_si512(), eight, xv);
          p = _mm512_sub_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), qa, xv), sx);
        }
        const __m512 s = _mm512_mul_ps(dw, h2f_pair(xb, offsetof(BlockQ8_0, d)));
        acc[k][t] = _mm512_fmadd_ps(s, _mm512_cvtepi32_ps(p), acc[k][t]);
      }
    }
    float tail[NT] = {};
    if (b < nb) {
      float d0;
      __m256i q;
      if constexpr (Signed) {
        q = DecodeQ8_0::run(*reinterpret_cast<const BlockQ8_0*>(w + b), &d0);
      } else {
        q = DecodeQ4_0::run(*reinterpret_cast<const BlockQ4_0*>(w + b), &d0);
      }
      for (int t = 0; t < NT; ++t) {
        const BlockQ8_0* xb = q80(xa, xs, t, b);
        const __m256i p = _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_abs_epi8(q),
                                              _mm256_sign_epi8(loadu(xb->qs), q));
        tail[t] = hsum(_mm256_mul_ps(_mm256_set1_ps(d0 * h2f(xb->d)), _mm256_cvtepi32_ps(p)));
      }
    }
    for (int t = 0; t < NT; ++t) {
      const float r = _mm512_reduce_add_ps(_mm512_add_ps(acc[0][t], acc[1][t]));
      out[t] = b < nb ? r + tail[t] : r;
    }
  }
};

// Decode (one token) for Q8_0 / Q4_0: the activation-side work of each 64-value pair of blocks
// is done once per call instead of once per weight row. Per pair the prepared activations hold
// the 64 int8 values, -c * (sum of each 4 values) as the 16 int32 lanes vpdpbusd produces, and
// the two block scales as [d0 x8, d1 x8]. The weights enter vpdpbusd unsigned: Q8_0 as w + 128
// (xor 0x80, c = 128), Q4_0 as the nibble q = w + 8 (c = 8); starting the accumulate from
// -c * sum(x) makes the result exactly sum(w * x).
struct alignas(64) PreparedPair {
  int8_t x[64];
  int32_t neg_corr[16];
  float d[16];
};

template <bool Signed>
void prepare_pairs(const BlockQ8_0* xb, int64_t n_pairs, PreparedPair* out) {
  const __m512i c = _mm512_set1_epi8(Signed ? static_cast<char>(0x80) : 8);
  for (int64_t i = 0; i < n_pairs; ++i) {
    const BlockQ8_0* x = xb + 2 * i;
    const __m512i xv =
        _mm512_inserti64x4(_mm512_castsi256_si512(loadu(x[0].qs)), loadu(x[1].qs), 1);
    _mm512_store_si512(out[i].x, xv);
    _mm512_store_si512(out[i].neg_corr,
                       _mm512_sub_epi32(_mm512_setzero_si512(),
                                        _mm512_dpbusd_epi32(_mm512_setzero_si512(), c, xv)));
    _mm512_store_ps(out[i].d, h2f_pair(x, offsetof(BlockQ8_0, d)));
  }
}

template <class Block, bool Signed>
float dot_prepared(const Block* w, int64_t n_pairs, const PreparedPair* p) {
  __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
  auto step = [&](int64_t i, __m512& acc) {
    __m512i q;
    if constexpr (Signed) {
      q = _mm512_xor_si512(Q8_0Vnni::decode2(reinterpret_cast<const BlockQ8_0*>(w + 2 * i)),
                           _mm512_set1_epi8(static_cast<char>(0x80)));
    } else {
      q = Q4_0Vnni::decode2(reinterpret_cast<const BlockQ4_0*>(w + 2 * i));
    }
    const __m512i dot =
        _mm512_dpbusd_epi32(_mm512_load_si512(p[i].neg_corr), q, _mm512_load_si512(p[i].x));
    const __m512 s = _mm512_mul_ps(h2f_pair(w + 2 * i, offsetof(Block, d)), _mm512_load_ps(p[i].d));
    acc = _mm512_fmadd_ps(s, _mm512_cvtepi32_ps(dot), acc);
  };
  int64_t i = 0;
  for (; i + 2 <= n_pairs; i += 2) {  // two accumulators hide the FMA latency
    step(i, acc0);
    step(i + 1, acc1);
  }
  if (i < n_pairs) step(i, acc0);
  return _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
}

// Rows [o0, o1): prefill and odd block counts run rows<Block32Vnni>; decode prepares the token's
// pairs (on the stack up to kStackIn values) and walks the rows with rows_decode's prefetching.
template <class Block, bool Signed>
void rows_block32(const RowsArgs& a, int64_t o0, int64_t o1) {
  constexpr int64_t kStackIn = 8192;
  const int64_t nb = a.n_in / kQK;
  if (a.n_tokens != 1 || nb % 2 != 0) {
    rows<Block32Vnni<Block, Signed>>(a, o0, o1);
    return;
  }
  const int64_t n_pairs = nb / 2;
  PreparedPair stack_buf[kStackIn / 64];
  std::vector<PreparedPair> heap_buf;
  PreparedPair* prep = stack_buf;
  if (a.n_in > kStackIn) {
    heap_buf.resize(static_cast<size_t>(n_pairs));
    prep = heap_buf.data();
  }
  prepare_pairs<Signed>(reinterpret_cast<const BlockQ8_0*>(a.xa), n_pairs, prep);
  const size_t rb = a.w_row_bytes;
  const uint8_t* w_end = a.w + static_cast<size_t>(o1) * rb;
  const uint8_t* pf = a.w + static_cast<size_t>(o0) * rb;  // next line to prefetch
  for (int64_t o = o0; o < o1; ++o) {
    const uint8_t* w = a.w + static_cast<size_t>(o) * rb;
    const uint8_t* pf_to = std::min(w_end, w + rb + kPrefetchBytes);
    prefetch_lines(pf, pf_to);
    const float v = dot_prepared<Block, Signed>(reinterpret_cast<const Block*>(w), n_pairs, prep);
    a.y[o] = a.accumulate ? a.y[o] + v : v;
  }
}

}  // namespace
}  // namespace avx512vnni

RowsKernel rows_kernel_avx512vnni(DType t) {
  using namespace avx512vnni;
  switch (t) {
    case DType::Q8_0:
      return {rows_block32<BlockQ8_0, true>, ActFormat::kQ8_0};
    case DType::Q4_0:
      return {rows_block32<BlockQ4_0, false>, ActFormat::kQ8_0};
    case DType::Q4_K:
      return {rows<KQuant45Vnni<false>>, ActFormat::kQ8_K};
    case DType::Q5_K:
      return {rows<KQuant45Vnni<true>>, ActFormat::kQ8_K};
    case DType::Q6_K:
      return {rows<Q6KVnni>, ActFormat::kQ8_K};
    default:
      return rows_kernel_avx512(t);
  }
}

}  // namespace arc::kernels::cpu
