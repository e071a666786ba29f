// MXFP4_R16 against Q8_0 activations, AVX-512 VNNI (layout: arc/kernels/repack.h): gpt-oss's
// experts. One 512-bit register holds the same 4 bytes of 16 rows, so every lane is a row. A
// byte shuffle turns the 4-bit indices into the doubled E2M1 values plus 12 (0..24, unsigned:
// vpdpbusd's unsigned operand), low nibbles and high nibbles apart:
//   vpdpbusd  s += 4 values + 12 (u8) x the 4 activations they meet, broadcast (s8)
// starting from -12 * (the block's activation sum), which leaves exactly sum v * x. Per row:
//   y = sum_b (2^(e_b - 128) * xd_b) * s_b
// with s_b exact and the float steps in a fixed order per block: a row's result depends only on
// its weights and its token, never on the rows or tokens beside it.
// The row-by-row kernel (matmul_avx512vnni.cpp) decodes two blocks of one row per register and
// sums each row horizontally; this one unpacks 16 rows' scales in one step and needs no
// horizontal sums, which is what lets one core keep up with its share of the memory bandwidth.
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
constexpr size_t kGroupBlock = 16 * sizeof(quant::BlockMxfp4);  // one block of 16 rows: 272
constexpr int kBias = 12;  // -min of the doubled E2M1 values: makes them unsigned

// The 16 rows' E8M0 bytes as the floats 2^(e - 128) (quant::e8m0_to_f32_half, lane by lane):
// exponent field e - 1 for e >= 2, else the subnormals 0x00200000 << e.
inline __m512 scales16(const uint8_t* e) {
  const __m512i v = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(e)));
  const __m512i normal = _mm512_slli_epi32(_mm512_sub_epi32(v, _mm512_set1_epi32(1)), 23);
  const __m512i sub = _mm512_sllv_epi32(_mm512_set1_epi32(0x00200000), v);
  const __mmask16 is_normal = _mm512_cmpge_epu32_mask(v, _mm512_set1_epi32(2));
  return _mm512_castsi512_ps(_mm512_mask_blend_epi32(is_normal, sub, normal));
}

// y[t][0..15] for the 16 rows of one group (w: [nb][272]) against NT tokens' Q8_0 rows x[t].
template <int NT>
inline void group_dot(const uint8_t* w, int64_t nb, const BlockQ8_0* const* x,
                      const Q8_0BlockPrep* const* prep, __m512* y) {
  int8_t table_bytes[16];
  for (int i = 0; i < 16; ++i) table_bytes[i] = static_cast<int8_t>(quant::kMxfp4Values[i] + kBias);
  const __m512i table =
      _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(table_bytes)));
  const __m512i low4 = _mm512_set1_epi8(0x0F);
  __m512 acc[NT];
  for (int t = 0; t < NT; ++t) acc[t] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nb; ++b, w += kGroupBlock) {
    // Two partial sums per token (low and high nibbles) halve the vpdpbusd dependency chain.
    __m512i s[NT][2];
    for (int t = 0; t < NT; ++t) {
      s[t][0] = _mm512_set1_epi32(prep[t][b].neg_sum);
      s[t][1] = _mm512_setzero_si512();
    }
    for (int c = 0; c < 4; ++c) {
      const __m512i q = _mm512_loadu_si512(w + 16 + 64 * c);
      const __m512i lo = _mm512_shuffle_epi8(table, _mm512_and_si512(q, low4));
      const __m512i hi =
          _mm512_shuffle_epi8(table, _mm512_and_si512(_mm512_srli_epi16(q, 4), low4));
      for (int t = 0; t < NT; ++t) {
        int32_t xl, xh;
        std::memcpy(&xl, x[t][b].qs + 4 * c, 4);
        std::memcpy(&xh, x[t][b].qs + 16 + 4 * c, 4);
        s[t][0] = _mm512_dpbusd_epi32(s[t][0], lo, _mm512_set1_epi32(xl));
        s[t][1] = _mm512_dpbusd_epi32(s[t][1], hi, _mm512_set1_epi32(xh));
      }
    }
    const __m512 d = scales16(w);
    for (int t = 0; t < NT; ++t) {
      const __m512i sum = _mm512_add_epi32(s[t][0], s[t][1]);
      acc[t] = _mm512_fmadd_ps(_mm512_mul_ps(d, _mm512_set1_ps(prep[t][b].d)),
                               _mm512_cvtepi32_ps(sum), acc[t]);
    }
  }
  for (int t = 0; t < NT; ++t) y[t] = acc[t];
}

}  // namespace

void rows_mxfp4_r16_avx512vnni(const RowsArgs& a, int64_t o0, int64_t o1) {
  rows_by_group_q8_0(a, o0, o1, kGroupBlock, kBias,
                     [](auto nt, const uint8_t* w, int64_t nb, const BlockQ8_0* const* x,
                        const Q8_0BlockPrep* const* p,
                        __m512* y) { group_dot<decltype(nt)::value>(w, nb, x, p, y); });
}

}  // namespace arc::kernels::cpu
