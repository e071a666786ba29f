// Shared by the *_R16 kernels (arc/kernels/repack.h), which compute a group of 16 rows as the 16
// lanes of one register. Included only by AVX-512 translation units; internal linkage, so the
// differently-compiled copies are never merged.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "arc/kernels/repack.h"
#include "cpu/matmul_kernels.h"
#include "quant/blocks.h"

namespace arc::kernels::cpu {
namespace {

// Writes rows [r0, r1) of the group whose first row is g0 (lanes r0 - g0 .. r1 - g0 - 1 of v)
// for token t, adding to y where the call accumulates.
inline void store_group_rows(const RowsArgs& a, int64_t t, int64_t g0, int64_t r0, int64_t r1,
                             __m512 v) {
  const __mmask16 m = static_cast<__mmask16>(((1u << (r1 - g0)) - 1) & ~((1u << (r0 - g0)) - 1));
  float* y = a.y + t * a.y_stride + g0;
  if (a.accumulate) v = _mm512_add_ps(_mm512_maskz_loadu_ps(m, y), v);
  _mm512_mask_storeu_ps(y, m, v);
}

// Rows [o0, o1) of an interleaved matrix (group_bytes per group of 16 rows) for every token.
// dot(w, t, std::integral_constant<int, NT>, pf_end, y) computes tokens t .. t + NT - 1 against
// the group at w into y[NT]: NT = kMaxTile (8, 4 or 2) while that many tokens are left, then the
// smaller tiles down to 1, so a prefill's tokens share the weight loads and unpacking; pf_end
// is where a kernel that prefetches stops. Ranges may start or end inside a group: its other
// rows are computed and dropped (callers split at groups).
template <int kMaxTile = 2, class Dot>
inline void rows_by_group(const RowsArgs& a, int64_t o0, int64_t o1, size_t group_bytes,
                          Dot&& dot) {
  static_assert(kMaxTile == 2 || kMaxTile == 4 || kMaxTile == 8);
  if (o1 <= o0) return;
  const int64_t g_first = o0 / kRepackRows, g_last = (o1 - 1) / kRepackRows;
  // Prefetching runs on to the matrix's end where it is known: a decode share is walked in
  // several short ranges, and each would otherwise start cold (bench_kernels MatvecSmall
  // Q4_K_R16 1024 x 1024: 14.5 -> 13.6 us).
  const uint8_t* range_end = a.w + static_cast<size_t>(g_last + 1) * group_bytes;
  const uint8_t* pf_end = a.w_end == nullptr ? range_end : std::max(range_end, a.w_end);
  for (int64_t g = g_first; g <= g_last; ++g) {
    const uint8_t* w = a.w + static_cast<size_t>(g) * group_bytes;
    const int64_t g0 = g * kRepackRows;
    const int64_t r0 = std::max(o0, g0), r1 = std::min(o1, g0 + kRepackRows);
    int64_t t = 0;
    auto tiles = [&](auto nt) {
      constexpr int NT = decltype(nt)::value;
      for (; t + NT <= a.n_tokens; t += NT) {
        __m512 y[NT];
        dot(w, t, nt, pf_end, y);
        for (int i = 0; i < NT; ++i) store_group_rows(a, t + i, g0, r0, r1, y[i]);
      }
    };
    if constexpr (kMaxTile >= 8) tiles(std::integral_constant<int, 8>{});
    if constexpr (kMaxTile >= 4) tiles(std::integral_constant<int, 4>{});
    tiles(std::integral_constant<int, 2>{});
    tiles(std::integral_constant<int, 1>{});
  }
}

// rows_by_group for the kernels against Q8_K activations (Q4_K_R16, Q6_K_R16), whose groups
// hold one block of block_bytes per 256-value super-block: dot(w, x, nt, pf_end, y) gets the NT
// tokens' Q8_K rows x[0 .. NT) ([n_in / 256] blocks each).
template <int kMaxTile = 2, class Dot>
inline void rows_by_group_q8k(const RowsArgs& a, int64_t o0, int64_t o1, size_t block_bytes,
                              Dot&& dot) {
  const size_t nb = static_cast<size_t>(a.n_in / quant::kQKK);
  rows_by_group<kMaxTile>(
      a, o0, o1, nb * block_bytes,
      [&](const uint8_t* w, int64_t t, auto nt, const uint8_t* pf_end, __m512* y) {
        constexpr int NT = decltype(nt)::value;
        const quant::BlockQ8K* x[NT];
        for (int i = 0; i < NT; ++i) {
          x[i] = reinterpret_cast<const quant::BlockQ8K*>(a.xa + (t + i) * a.xa_stride);
        }
        dot(w, x, nt, pf_end, y);
      });
}

// Per token and block of Q8_0 activations, for the kernels whose weights are stored unsigned as
// value + bias (vpdpbusd's unsigned operand): the block scale as float and -bias * the sum of its
// 32 values, the start value that cancels the bias exactly.
struct Q8_0BlockPrep {
  float d;
  int32_t neg_sum;
};

inline void prepare_q8_0_blocks(const quant::BlockQ8_0* x, int64_t nb, int32_t bias,
                                Q8_0BlockPrep* out) {
  const __m256i ones = _mm256_set1_epi8(1);
  for (int64_t b = 0; b < nb; ++b) {
    const __m256i s8 =
        _mm256_dpbusd_epi32(_mm256_setzero_si256(), ones,
                            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[b].qs)));
    __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(s8), _mm256_extracti128_si256(s8, 1));
    s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0x4E));
    s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0xB1));
    out[b] = {_cvtsh_ss(x[b].d), -bias * _mm_cvtsi128_si32(s4)};
  }
}

// rows_by_group for the kernels against Q8_0 activations with a bias (Q8_0_R16, MXFP4_R16): every
// token's blocks are prepared once (on the stack for decode-sized calls), then
// dot(std::integral_constant<int, NT>, w, nb, x, prep, y) computes NT tokens against the group at
// w (group_block bytes per 32-value block of 16 rows), in tiles of 4, 2 and 1.
template <class Dot>
inline void rows_by_group_q8_0(const RowsArgs& a, int64_t o0, int64_t o1, size_t group_block,
                               int32_t bias, Dot&& dot) {
  const int64_t nb = a.n_in / quant::kQK;
  constexpr int64_t kStackBlocks = 1024;
  Q8_0BlockPrep stack_prep[kStackBlocks];
  std::vector<Q8_0BlockPrep> heap_prep;
  Q8_0BlockPrep* prep = stack_prep;
  if (nb * a.n_tokens > kStackBlocks) {
    heap_prep.resize(static_cast<size_t>(nb * a.n_tokens));
    prep = heap_prep.data();
  }
  auto x_of = [&](int64_t t) {
    return reinterpret_cast<const quant::BlockQ8_0*>(a.xa + static_cast<size_t>(t) * a.xa_stride);
  };
  for (int64_t t = 0; t < a.n_tokens; ++t) prepare_q8_0_blocks(x_of(t), nb, bias, prep + t * nb);
  // Prefill tokens in tiles of 4 (then 2, 1): the Q8_0 bench model's prefill ran at 1125-1159
  // tok/s against 962-972 with pairs (3 alternating rounds); tiles of 8 ran at 570.
  rows_by_group<4>(a, o0, o1, static_cast<size_t>(nb) * group_block,
                   [&](const uint8_t* w, int64_t t, auto nt, const uint8_t*, __m512* y) {
                     constexpr int NT = decltype(nt)::value;
                     const quant::BlockQ8_0* x[NT];
                     const Q8_0BlockPrep* p[NT];
                     for (int i = 0; i < NT; ++i) {
                       x[i] = x_of(t + i);
                       p[i] = prep + (t + i) * nb;
                     }
                     dot(nt, w, nb, x, p, y);
                   });
}

}  // namespace
}  // namespace arc::kernels::cpu
