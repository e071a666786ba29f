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

// Per token and block of the activations: the block scale as float and -12 * the sum of its 32
// values (the start value that cancels the +12 of the shuffled weights).
struct BlockPrep {
  float d;
  int32_t neg_sum;
};

void prepare(const BlockQ8_0* x, int64_t nb, BlockPrep* out) {
  const __m256i ones = _mm256_set1_epi8(1);
  for (int64_t b = 0; b < nb; ++b) {
    const __m256i s8 =
        _mm256_dpbusd_epi32(_mm256_setzero_si256(), ones,
                            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[b].qs)));
    __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(s8), _mm256_extracti128_si256(s8, 1));
    s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0x4E));
    s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0xB1));
    out[b] = {_cvtsh_ss(x[b].d), -kBias * _mm_cvtsi128_si32(s4)};
  }
}

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
                      const BlockPrep* const* prep, __m512* y) {
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
  const int64_t nb = a.n_in / quant::kQK;
  // Prepared blocks of every token: on the stack for decode-sized calls.
  constexpr int64_t kStackBlocks = 1024;
  BlockPrep stack_prep[kStackBlocks];
  std::vector<BlockPrep> heap_prep;
  BlockPrep* prep = stack_prep;
  if (nb * a.n_tokens > kStackBlocks) {
    heap_prep.resize(static_cast<size_t>(nb * a.n_tokens));
    prep = heap_prep.data();
  }
  auto x_of = [&](int64_t t) {
    return reinterpret_cast<const BlockQ8_0*>(a.xa + static_cast<size_t>(t) * a.xa_stride);
  };
  for (int64_t t = 0; t < a.n_tokens; ++t) prepare(x_of(t), nb, prep + t * nb);

  // Prefill tokens in tiles of 4 (then 2, 1), as the Q8_0_R16 kernel.
  rows_by_group<4>(a, o0, o1, static_cast<size_t>(nb) * kGroupBlock,
                   [&](const uint8_t* w, int64_t t, auto nt, const uint8_t*, __m512* y) {
                     constexpr int NT = decltype(nt)::value;
                     const BlockQ8_0* x[NT];
                     const BlockPrep* p[NT];
                     for (int i = 0; i < NT; ++i) {
                       x[i] = x_of(t + i);
                       p[i] = prep + (t + i) * nb;
                     }
                     group_dot<NT>(w, nb, x, p, y);
                   });
}

}  // namespace arc::kernels::cpu
