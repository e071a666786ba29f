// ARMv8.6 int8 matrix-multiply kernels (level kNeonI8mm), built with
// -march=armv8.2-a+dotprod+i8mm (kernels/CMakeLists.txt) and chosen at run time when the kernel
// reports HWCAP2_I8MM (isa.cpp; Grace / GB10 have it).
//
// SMMLA multiplies a 2x8 int8 matrix by an 8x2 one: two weight rows against two tokens in one
// instruction, where SDOT covers one row and one token. It pays off when 2+ tokens share the
// weight rows (prefill, MoE experts with several routed tokens): the multi-token tiles of the
// integer formats use it (K-quants: Q4_K, Q5_K, Q6_K; 32-value blocks: Q8_0, Q4_0, MXFP4). One
// token (decode), odd rows and odd tokens run SDOT; float weights run the kernels of
// matmul_neon.inc.
//
// Every path reduces each (row, token, block) to the same exact int32 sums and finishes them
// with the same float operations, so a token's result is bit-identical whichever path or tile
// computed it: results do not depend on how tokens are grouped or rows are split.
#if defined(__aarch64__)
#include <arm_neon.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "cpu/matmul_kernels.h"
#include "quant/blocks.h"
#include "quant/half.h"

#if !defined(__ARM_FEATURE_MATMUL_INT8) || !defined(__ARM_FEATURE_DOTPROD)
#error "matmul_neon_i8mm.cpp must be built with the dotprod and i8mm extensions (+dotprod+i8mm)"
#endif

namespace arc::kernels::cpu {
namespace neon_i8mm {
namespace {
#include "cpu/matmul_neon.inc"

// acc lanes [r0t0, r0t1, r1t0, r1t1] += the dot products of 16 int8 values of weight rows w0, w1
// with 16 values of tokens x0, x1. SMMLA takes its operands as two 8-byte rows per register.
inline int32x4_t mmla16(int32x4_t acc, int8x16_t w0, int8x16_t w1, int8x16_t x0, int8x16_t x1) {
  const int64x2_t a0 = vreinterpretq_s64_s8(w0), a1 = vreinterpretq_s64_s8(w1);
  const int64x2_t b0 = vreinterpretq_s64_s8(x0), b1 = vreinterpretq_s64_s8(x1);
  acc = vmmlaq_s32(acc, vreinterpretq_s8_s64(vzip1q_s64(a0, a1)),
                   vreinterpretq_s8_s64(vzip1q_s64(b0, b1)));
  return vmmlaq_s32(acc, vreinterpretq_s8_s64(vzip2q_s64(a0, a1)),
                    vreinterpretq_s8_s64(vzip2q_s64(b0, b1)));
}

// Lanes [s0, s0, s1, s1]: row 0's scale for the r0 lanes, row 1's for the r1 lanes.
inline int32x4_t row_scales(int s0, int s1) {
  const int32_t v[4] = {s0, s0, s1, s1};
  return vld1q_s32(v);
}

inline const BlockQ8K* q8k(const uint8_t* xa, size_t xs, int t, int64_t b) {
  return reinterpret_cast<const BlockQ8K*>(xa + t * xs) + b;
}

// Q4_K / Q5_K: weight rows w0, w1 against 2 * NP tokens; out[r][t].
template <bool HighBits>
struct KQuant45Mmla {
  using Block = std::conditional_t<HighBits, BlockQ5K, BlockQ4K>;
  template <int NP>
  static void tile(int64_t n_in, const uint8_t* const wrow[2], const uint8_t* xa, size_t xs,
                   float out[2][2 * NP]) {
    const Block* w[2] = {reinterpret_cast<const Block*>(wrow[0]),  // [n_in / 256]
                         reinterpret_cast<const Block*>(wrow[1])};
    const uint8x16_t low4 = vdupq_n_u8(0x0F), one = vdupq_n_u8(1);
    float acc[2][2 * NP] = {};
    for (int64_t b = 0; b < n_in / kQKK; ++b) {
      uint8_t sm[2][16];
      [[maybe_unused]] uint8x16_t hb[2][2];
      for (int r = 0; r < 2; ++r) {
        unpack_scales_k4(w[r][b].scales, sm[r]);
        if constexpr (HighBits) {
          hb[r][0] = vld1q_u8(w[r][b].qh);
          hb[r][1] = vld1q_u8(w[r][b].qh + 16);
        }
      }
      int32x4_t sumi[NP];
      for (int p = 0; p < NP; ++p) sumi[p] = vdupq_n_s32(0);
      for (int g = 0; g < 4; ++g) {
        int8x16_t lo[2][2], hi[2][2];  // [row][first / second 16 values] of sub-blocks 2g, 2g+1
        for (int r = 0; r < 2; ++r) {
          for (int k = 0; k < 2; ++k) {
            const uint8x16_t raw = vld1q_u8(w[r][b].qs + 32 * g + 16 * k);
            uint8x16_t l = vandq_u8(raw, low4), h = vshrq_n_u8(raw, 4);
            if constexpr (HighBits) {
              l = vorrq_u8(l, vshlq_n_u8(vandq_u8(hb[r][k], one), 4));
              h = vorrq_u8(h, vshlq_n_u8(vandq_u8(vshrq_n_u8(hb[r][k], 1), one), 4));
              hb[r][k] = vshrq_n_u8(hb[r][k], 2);
            }
            lo[r][k] = vreinterpretq_s8_u8(l);
            hi[r][k] = vreinterpretq_s8_u8(h);
          }
        }
        const int32x4_t s_lo = row_scales(sm[0][2 * g], sm[1][2 * g]);
        const int32x4_t s_hi = row_scales(sm[0][2 * g + 1], sm[1][2 * g + 1]);
        for (int p = 0; p < NP; ++p) {
          const int8_t* x0 = q8k(xa, xs, 2 * p, b)->qs + 64 * g;
          const int8_t* x1 = q8k(xa, xs, 2 * p + 1, b)->qs + 64 * g;
          int32x4_t d_lo = mmla16(vdupq_n_s32(0), lo[0][0], lo[1][0], vld1q_s8(x0), vld1q_s8(x1));
          d_lo = mmla16(d_lo, lo[0][1], lo[1][1], vld1q_s8(x0 + 16), vld1q_s8(x1 + 16));
          int32x4_t d_hi =
              mmla16(vdupq_n_s32(0), hi[0][0], hi[1][0], vld1q_s8(x0 + 32), vld1q_s8(x1 + 32));
          d_hi = mmla16(d_hi, hi[0][1], hi[1][1], vld1q_s8(x0 + 48), vld1q_s8(x1 + 48));
          sumi[p] = vmlaq_s32(vmlaq_s32(sumi[p], d_lo, s_lo), d_hi, s_hi);
        }
      }
      for (int p = 0; p < NP; ++p) {
        int32_t si[4];  // [r0t0, r0t1, r1t0, r1t1]
        vst1q_s32(si, sumi[p]);
        for (int r = 0; r < 2; ++r) {
          const float d = half_to_f32(w[r][b].d), dmin = half_to_f32(w[r][b].dmin);
          for (int j = 0; j < 2; ++j) {
            acc[r][2 * p + j] +=
                k45_term(d, dmin, *q8k(xa, xs, 2 * p + j, b), si[2 * r + j], sm[r] + 8);
          }
        }
      }
    }
    for (int r = 0; r < 2; ++r) {
      for (int t = 0; t < 2 * NP; ++t) out[r][t] = acc[r][t];
    }
  }
};

// Q6_K: weight rows w0, w1 against 2 * NP tokens; out[r][t].
struct Q6KMmla {
  template <int NP>
  static void tile(int64_t n_in, const uint8_t* const wrow[2], const uint8_t* xa, size_t xs,
                   float out[2][2 * NP]) {
    const BlockQ6K* w[2] = {reinterpret_cast<const BlockQ6K*>(wrow[0]),  // [n_in / 256]
                            reinterpret_cast<const BlockQ6K*>(wrow[1])};
    const uint8x16_t low4 = vdupq_n_u8(0x0F), three = vdupq_n_u8(3);
    const int8x16_t m32 = vdupq_n_s8(32);
    float acc[2][2 * NP] = {};
    for (int64_t b = 0; b < n_in / kQKK; ++b) {
      int32x4_t sumi[NP];
      for (int p = 0; p < NP; ++p) sumi[p] = vdupq_n_s32(0);
      for (int h = 0; h < 2; ++h) {
        for (int half = 0; half < 2; ++half) {  // values l < 16, then l >= 16
          int8x16_t q[2][4];                    // [row][sub-block s] as q - 32
          for (int r = 0; r < 2; ++r) {
            const uint8_t* ql = w[r][b].ql + 64 * h + 16 * half;
            const uint8x16_t l0 = vld1q_u8(ql), l1 = vld1q_u8(ql + 32);
            const uint8x16_t qh = vld1q_u8(w[r][b].qh + 32 * h + 16 * half);
            const uint8x16_t u[4] = {
                vorrq_u8(vandq_u8(l0, low4), vshlq_n_u8(vandq_u8(qh, three), 4)),
                vorrq_u8(vandq_u8(l1, low4), vshlq_n_u8(vandq_u8(vshrq_n_u8(qh, 2), three), 4)),
                vorrq_u8(vshrq_n_u8(l0, 4), vshlq_n_u8(vandq_u8(vshrq_n_u8(qh, 4), three), 4)),
                vorrq_u8(vshrq_n_u8(l1, 4), vshlq_n_u8(vshrq_n_u8(qh, 6), 4)),
            };
            for (int s = 0; s < 4; ++s) q[r][s] = vsubq_s8(vreinterpretq_s8_u8(u[s]), m32);
          }
          for (int s = 0; s < 4; ++s) {
            const int sub = 8 * h + 2 * s + half;
            const int32x4_t sc = row_scales(w[0][b].scales[sub], w[1][b].scales[sub]);
            const int off = 128 * h + 32 * s + 16 * half;
            for (int p = 0; p < NP; ++p) {
              const int8x16_t x0 = vld1q_s8(q8k(xa, xs, 2 * p, b)->qs + off);
              const int8x16_t x1 = vld1q_s8(q8k(xa, xs, 2 * p + 1, b)->qs + off);
              sumi[p] = vmlaq_s32(sumi[p], mmla16(vdupq_n_s32(0), q[0][s], q[1][s], x0, x1), sc);
            }
          }
        }
      }
      for (int p = 0; p < NP; ++p) {
        int32_t si[4];  // [r0t0, r0t1, r1t0, r1t1]
        vst1q_s32(si, sumi[p]);
        for (int r = 0; r < 2; ++r) {
          const float d = half_to_f32(w[r][b].d);
          for (int j = 0; j < 2; ++j) {
            acc[r][2 * p + j] += q6k_term(d, *q8k(xa, xs, 2 * p + j, b), si[2 * r + j]);
          }
        }
      }
    }
    for (int r = 0; r < 2; ++r) {
      for (int t = 0; t < 2 * NP; ++t) out[r][t] = acc[r][t];
    }
  }
};

// Q8_0 / Q4_0 / MXFP4 (32-value blocks against Q8_0 activations). Here too every path reduces
// each (row, token, block) to its exact int32 sum and then does acc = fma(acc, float(sum), dw * dx)
// in that (row, token)'s own float lane, so decode (4 rows x 1 token, SDOT) and prefill (2 rows x
// 2 tokens, SMMLA) give the same bits. (The SDOT kernels of matmul_neon.inc keep 4 partial sums
// per token instead, which SMMLA's whole-row sums cannot reproduce; that is why this level has
// its own decode kernel for these formats.)
template <class Block, class Decode>
struct Block32Mmla {
  // Weight rows w[0..3] against one token x (Q8_0 blocks); out[r].
  static void rows4(int64_t n_in, const uint8_t* const wrow[4], const uint8_t* x, float out[4]) {
    const Block* w[4];
    for (int r = 0; r < 4; ++r) w[r] = reinterpret_cast<const Block*>(wrow[r]);  // [n_in / 32]
    const auto* xb = reinterpret_cast<const BlockQ8_0*>(x);                      // [n_in / 32]
    float32x4_t acc = vdupq_n_f32(0);
    for (int64_t b = 0; b < n_in / kQK; ++b) {
      const int8x16_t x0 = vld1q_s8(xb[b].qs), x1 = vld1q_s8(xb[b].qs + 16);
      int32x4_t p[4];
      float dw[4];
      for (int r = 0; r < 4; ++r) {
        int8x16_t q0, q1;
        Decode::run(w[r][b], &q0, &q1, &dw[r]);
        p[r] = vdotq_s32(vdotq_s32(vdupq_n_s32(0), q0, x0), q1, x1);
      }
      // [sum p0, sum p1, sum p2, sum p3]: each row's exact block sum in its lane.
      const int32x4_t sum = vpaddq_s32(vpaddq_s32(p[0], p[1]), vpaddq_s32(p[2], p[3]));
      const float32x4_t scale = vmulq_n_f32(vld1q_f32(dw), half_to_f32(xb[b].d));
      acc = vfmaq_f32(acc, vcvtq_f32_s32(sum), scale);
    }
    vst1q_f32(out, acc);
  }

  // Weight rows w0, w1 against 2 * NP tokens; out[r][t].
  template <int NP>
  static void tile(int64_t n_in, const uint8_t* const wrow[2], const uint8_t* xa, size_t xs,
                   float out[2][2 * NP]) {
    const Block* w[2] = {reinterpret_cast<const Block*>(wrow[0]),  // [n_in / 32]
                         reinterpret_cast<const Block*>(wrow[1])};
    float32x4_t acc[NP];  // lanes [r0t0, r0t1, r1t0, r1t1] of token pair p
    for (int p = 0; p < NP; ++p) acc[p] = vdupq_n_f32(0);
    for (int64_t b = 0; b < n_in / kQK; ++b) {
      int8x16_t q[2][2];
      float dw[2];
      for (int r = 0; r < 2; ++r) Decode::run(w[r][b], &q[r][0], &q[r][1], &dw[r]);
      const float dw_lanes[4] = {dw[0], dw[0], dw[1], dw[1]};
      for (int p = 0; p < NP; ++p) {
        const auto* x0 = reinterpret_cast<const BlockQ8_0*>(xa + (2 * p) * xs) + b;
        const auto* x1 = reinterpret_cast<const BlockQ8_0*>(xa + (2 * p + 1) * xs) + b;
        int32x4_t sum =
            mmla16(vdupq_n_s32(0), q[0][0], q[1][0], vld1q_s8(x0->qs), vld1q_s8(x1->qs));
        sum = mmla16(sum, q[0][1], q[1][1], vld1q_s8(x0->qs + 16), vld1q_s8(x1->qs + 16));
        const float dx0 = half_to_f32(x0->d), dx1 = half_to_f32(x1->d);
        const float dx_lanes[4] = {dx0, dx1, dx0, dx1};
        const float32x4_t scale = vmulq_f32(vld1q_f32(dw_lanes), vld1q_f32(dx_lanes));
        acc[p] = vfmaq_f32(acc[p], vcvtq_f32_s32(sum), scale);
      }
    }
    for (int p = 0; p < NP; ++p) {
      float lanes[4];
      vst1q_f32(lanes, acc[p]);
      for (int r = 0; r < 2; ++r) {
        for (int j = 0; j < 2; ++j) out[r][2 * p + j] = lanes[2 * r + j];
      }
    }
  }
};

inline void store(const RowsArgs& a, int64_t t, int64_t o, float v) {
  float* y = a.y + t * a.y_stride + o;
  *y = a.accumulate ? *y + v : v;
}

// One weight row against nt <= kTile tokens with the SDOT kernel K.
template <class K>
void row_sdot(const RowsArgs& a, int64_t o, const uint8_t* xa, int64_t t0, int nt) {
  const uint8_t* w = a.w + static_cast<size_t>(o) * a.w_row_bytes;
  float out[kTile];
  switch (nt) {
    case 1:
      K::template dot<1>(a.n_in, w, xa, a.xa_stride, out);
      break;
    case 2:
      K::template dot<2>(a.n_in, w, xa, a.xa_stride, out);
      break;
    case 3:
      K::template dot<3>(a.n_in, w, xa, a.xa_stride, out);
      break;
    default:
      K::template dot<kTile>(a.n_in, w, xa, a.xa_stride, out);
      break;
  }
  for (int t = 0; t < nt; ++t) store(a, t0 + t, o, out[t]);
}

// Rows [o0, o1) for all tokens: as rows() in matmul_rows.inc (16-row blocks reused across token
// tiles of 4), with each pair of rows and pair of tokens done by the SMMLA tile M; an odd last
// row or token goes through the SDOT kernel K, which gives the same bits.
template <class K, class M>
void rows_mmla(const RowsArgs& a, int64_t o0, int64_t o1) {
  if (a.n_tokens == 1) {
    rows_decode<K>(a, o0, o1);
    return;
  }
  constexpr int64_t kRowBlock = 16;
  for (int64_t r0 = o0; r0 < o1; r0 += kRowBlock) {
    const int64_t r1 = std::min(o1, r0 + kRowBlock);
    for (int64_t t0 = 0; t0 < a.n_tokens; t0 += kTile) {
      const int nt = static_cast<int>(std::min<int64_t>(kTile, a.n_tokens - t0));
      const int paired = nt & ~1;  // tokens done by SMMLA
      const uint8_t* xa = a.xa + static_cast<size_t>(t0) * a.xa_stride;
      int64_t o = r0;
      for (; paired > 0 && o + 2 <= r1; o += 2) {
        const uint8_t* w[2] = {a.w + static_cast<size_t>(o) * a.w_row_bytes,
                               a.w + static_cast<size_t>(o + 1) * a.w_row_bytes};
        float out[2][kTile];
        if (paired == 4) {
          M::template tile<2>(a.n_in, w, xa, a.xa_stride, out);
        } else {
          float out2[2][2];
          M::template tile<1>(a.n_in, w, xa, a.xa_stride, out2);
          for (int r = 0; r < 2; ++r) std::copy(out2[r], out2[r] + 2, out[r]);
        }
        for (int r = 0; r < 2; ++r) {
          for (int t = 0; t < paired; ++t) store(a, t0 + t, o + r, out[r][t]);
        }
        if (paired < nt) {  // odd last token
          const uint8_t* xl = xa + static_cast<size_t>(paired) * a.xa_stride;
          row_sdot<K>(a, o, xl, t0 + paired, 1);
          row_sdot<K>(a, o + 1, xl, t0 + paired, 1);
        }
      }
      for (; o < r1; ++o) row_sdot<K>(a, o, xa, t0, nt);  // odd last row, or a single token
    }
  }
}

// Rows [o0, o1) of a 32-value block format with the Block32Mmla kernel M. Decode: 4 rows at a
// time in order, prefetching ahead as rows_decode does. Prefill: 2x2 SMMLA tiles over 16-row
// blocks and token tiles of 4, an odd last token 4 rows at a time. Rows missing from a group of
// 4 (or 2) repeat the group's last row and are not stored: lanes are independent, so the stored
// ones are unchanged.
template <class M>
void rows_block32(const RowsArgs& a, int64_t o0, int64_t o1) {
  const size_t rb = a.w_row_bytes;
  auto row = [&](int64_t o) { return a.w + static_cast<size_t>(o) * rb; };
  // Rows [g0, g1) (at most 4) against the token at xa; stores token t.
  auto group4 = [&](int64_t g0, int64_t g1, const uint8_t* xa, int64_t t) {
    const uint8_t* w[4];
    for (int r = 0; r < 4; ++r) w[r] = row(std::min(g0 + r, g1 - 1));
    float out[4];
    M::rows4(a.n_in, w, xa, out);
    for (int64_t o = g0; o < g1; ++o) store(a, t, o, out[o - g0]);
  };
  if (a.n_tokens == 1) {
    const uint8_t* w_end = row(o1);
    const uint8_t* pf = row(o0);  // next line to prefetch
    for (int64_t g0 = o0; g0 < o1; g0 += 4) {
      const int64_t g1 = std::min(o1, g0 + 4);
      const uint8_t* pf_to = std::min(w_end, row(g1) + kPrefetchBytes);
      for (; kPrefetchBytes > 0 && pf < pf_to; pf += 64) __builtin_prefetch(pf);
      group4(g0, g1, a.xa, 0);
    }
    return;
  }
  constexpr int64_t kRowBlock = 16;
  for (int64_t r0 = o0; r0 < o1; r0 += kRowBlock) {
    const int64_t r1 = std::min(o1, r0 + kRowBlock);
    for (int64_t t0 = 0; t0 < a.n_tokens; t0 += kTile) {
      const int nt = static_cast<int>(std::min<int64_t>(kTile, a.n_tokens - t0));
      const int paired = nt & ~1;  // tokens done by SMMLA
      const uint8_t* xa = a.xa + static_cast<size_t>(t0) * a.xa_stride;
      for (int64_t o = r0; paired > 0 && o < r1; o += 2) {
        const int64_t n_rows = std::min<int64_t>(2, r1 - o);
        const uint8_t* w[2] = {row(o), row(o + n_rows - 1)};
        float out[2][kTile];
        if (paired == 4) {
          M::template tile<2>(a.n_in, w, xa, a.xa_stride, out);
        } else {
          float out2[2][2];
          M::template tile<1>(a.n_in, w, xa, a.xa_stride, out2);
          for (int r = 0; r < 2; ++r) std::copy(out2[r], out2[r] + 2, out[r]);
        }
        for (int r = 0; r < n_rows; ++r) {
          for (int t = 0; t < paired; ++t) store(a, t0 + t, o + r, out[r][t]);
        }
      }
      if (paired < nt) {  // odd last token
        const uint8_t* xl = xa + static_cast<size_t>(paired) * a.xa_stride;
        for (int64_t g0 = r0; g0 < r1; g0 += 4) group4(g0, std::min(r1, g0 + 4), xl, t0 + paired);
      }
    }
  }
}

}  // namespace
}  // namespace neon_i8mm

RowsKernel rows_kernel_neon_i8mm(DType t) {
  using namespace neon_i8mm;
  switch (t) {
    case DType::Q4_K:
      return {rows_mmla<KQuant45Kernel<false>, KQuant45Mmla<false>>, ActFormat::kQ8_K};
    case DType::Q5_K:
      return {rows_mmla<KQuant45Kernel<true>, KQuant45Mmla<true>>, ActFormat::kQ8_K};
    case DType::Q6_K:
      return {rows_mmla<Q6KKernel, Q6KMmla>, ActFormat::kQ8_K};
    case DType::Q8_0:
      return {rows_block32<Block32Mmla<BlockQ8_0, DecodeQ8_0>>, ActFormat::kQ8_0};
    case DType::Q4_0:
      return {rows_block32<Block32Mmla<BlockQ4_0, DecodeQ4_0>>, ActFormat::kQ8_0};
    case DType::MXFP4:
      return {rows_block32<Block32Mmla<BlockMxfp4, DecodeMxfp4>>, ActFormat::kQ8_0};
    default:
      return kernel_for(t);  // float weights: the kernels of matmul_neon.inc
  }
}

}  // namespace arc::kernels::cpu
#endif  // __aarch64__
