// Shared by the *_R16 kernels (arc/kernels/repack.h), which compute a group of 16 rows as the 16
// lanes of one register. Included only by AVX-512 translation units; internal linkage, so the
// differently-compiled copies are never merged.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "cpu/matmul_kernels.h"

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

}  // namespace
}  // namespace arc::kernels::cpu
