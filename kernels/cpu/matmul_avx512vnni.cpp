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
// After matmul_x86.inc, whose helpers it uses.
#include "cpu/matmul_kquant_vnni.inc"

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
// MXFP4: two blocks' 4-bit indices to the doubled E2M1 values (signed int8, |q| <= 12) by a
// byte shuffle, and their E8M0 scales as floats (lanes 0-7 the first block, 8-15 the second).
struct Mxfp4Vnni {
  static __m512i decode2(const BlockMxfp4* w) {
    const __m512i table = _mm512_broadcast_i32x4(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(quant::kMxfp4Values)));
    const __m512i idx = _mm512_inserti64x4(_mm512_castsi256_si512(unpack_nibbles(w[0].qs)),
                                           unpack_nibbles(w[1].qs), 1);
    return _mm512_shuffle_epi8(table, idx);
  }
  static __m512 scale2(const BlockMxfp4* w) {
    return _mm512_mask_blend_ps(0xFF00, _mm512_set1_ps(quant::e8m0_to_f32_half(w[0].e)),
                                _mm512_set1_ps(quant::e8m0_to_f32_half(w[1].e)));
  }
};

// Signed int8 values of blocks b, b + 1 (Q8_0 or MXFP4), and their scales.
template <class Block>
inline __m512i signed_pair(const Block* w) {
  if constexpr (std::is_same_v<Block, BlockMxfp4>) {
    return Mxfp4Vnni::decode2(w);
  } else {
    return Q8_0Vnni::decode2(reinterpret_cast<const BlockQ8_0*>(w));
  }
}
template <class Block>
inline __m512 scale_pair(const Block* w) {
  if constexpr (std::is_same_v<Block, BlockMxfp4>) {
    return Mxfp4Vnni::scale2(w);
  } else {
    return h2f_pair(w, offsetof(Block, d));
  }
}

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
        q = signed_pair(w + b);
        qa = _mm512_abs_epi8(q);
        neg = _mm512_movepi8_mask(q);
      } else {
        qa = Q4_0Vnni::decode2(reinterpret_cast<const BlockQ4_0*>(w + b));
      }
      const __m512 dw = scale_pair(w + b);
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
      if constexpr (std::is_same_v<Block, BlockMxfp4>) {
        q = DecodeMxfp4::run(w[b], &d0);
      } else if constexpr (Signed) {
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
      q = _mm512_xor_si512(signed_pair(w + 2 * i), _mm512_set1_epi8(static_cast<char>(0x80)));
    } else {
      q = Q4_0Vnni::decode2(reinterpret_cast<const BlockQ4_0*>(w + 2 * i));
    }
    const __m512i dot =
        _mm512_dpbusd_epi32(_mm512_load_si512(p[i].neg_corr), q, _mm512_load_si512(p[i].x));
    const __m512 s = _mm512_mul_ps(scale_pair(w + 2 * i), _mm512_load_ps(p[i].d));
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
    case DType::MXFP4:  // gpt-oss's experts
      return {rows_block32<BlockMxfp4, true>, ActFormat::kQ8_0};
    case DType::Q4_K:
      return {rows<KQuant45Vnni<false>>, ActFormat::kQ8_K};
    case DType::Q5_K:
      return {rows<KQuant45Vnni<true>>, ActFormat::kQ8_K};
    case DType::Q6_K:
      return {rows<Q6KVnni>, ActFormat::kQ8_K};
    case DType::Q4_K_R16:
      return {rows_q4k_r16_avx512vnni, ActFormat::kQ8_K};
    case DType::Q8_0_R16:
      return {rows_q80_r16_avx512vnni, ActFormat::kQ8_0};
    case DType::Q6_K_R16:
      return {rows_q6k_r16_avx512vnni, ActFormat::kQ8_K};
    case DType::MXFP4_R16:
      return {rows_mxfp4_r16_avx512vnni, ActFormat::kQ8_0};
    default:
      return rows_kernel_avx512(t);
  }
}

}  // namespace arc::kernels::cpu
