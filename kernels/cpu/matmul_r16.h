// Shared by the *_R16 kernels (arc/kernels/repack.h), which compute a group of 16 rows as the 16
// lanes of one register. Included only by AVX-512 translation units; internal linkage, so the
// differently-compiled copies are never merged.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

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

}  // namespace
}  // namespace arc::kernels::cpu
