// Activation quantization (Q8_K, Q8_0) for the integer matmul kernels with AVX-512 F/BW: the
// reference quantizers (quant/) round with std::lround, a library call per value, which costs
// about as much as a matvec over a few hundred weight rows. Results are byte-identical to
// quantize_row(): same max |x| (NaN skipped), same float scale arithmetic, round half away from
// zero done exactly (v - trunc(v) is exact), NaN products -> 0 as lround gives after the cast.
// GCC 12 reports false "may be used uninitialized" inside its own AVX-512 intrinsics (GCC bug
// 105593: _mm512_undefined_* placeholders); the warning is about the header, not this code.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include <cstring>

#include "cpu/matmul_kernels.h"
#include "quant/blocks.h"
#include "quant/half.h"

namespace arc::kernels::cpu {
namespace {

using quant::BlockQ8_0;
using quant::BlockQ8K;
using quant::kQK;
using quant::kQKK;

// max |x| of 16 * n floats as std::max(amax, fabs(x)) from 0 gives it: on the bit patterns (the
// order of |x| equals the unsigned order of the bits for non-NaN values), NaN -> 0.
inline __m512i abs_bits(const float* x) {
  const __m512i b = _mm512_and_si512(_mm512_loadu_si512(x), _mm512_set1_epi32(0x7fffffff));
  return _mm512_maskz_mov_epi32(_mm512_cmple_epu32_mask(b, _mm512_set1_epi32(0x7f800000)), b);
}

// lround(v) for each lane (NaN -> 0), v first limited to +-128: the callers clamp or cast to
// int8 afterwards, which gives the same bytes as for the unlimited value.
inline __m512i round_half_away(__m512 v) {
  v = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(v, v, _CMP_ORD_Q), v);
  v = _mm512_min_ps(_mm512_max_ps(v, _mm512_set1_ps(-128.0f)), _mm512_set1_ps(128.0f));
  const __m512i t = _mm512_cvttps_epi32(v);
  const __m512 f = _mm512_sub_ps(v, _mm512_cvtepi32_ps(t));
  const __m512i one = _mm512_set1_epi32(1);
  __m512i r =
      _mm512_mask_add_epi32(t, _mm512_cmp_ps_mask(f, _mm512_set1_ps(0.5f), _CMP_GE_OQ), t, one);
  return _mm512_mask_sub_epi32(r, _mm512_cmp_ps_mask(f, _mm512_set1_ps(-0.5f), _CMP_LE_OQ), r, one);
}

void quantize_q8_k(const float* src, BlockQ8K* dst, int64_t n) {
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const float* x = src + b * kQKK;
    __m512i m = _mm512_setzero_si512();
    for (int j = 0; j < kQKK; j += 16) m = _mm512_max_epu32(m, abs_bits(x + j));
    const uint32_t mb = _mm512_reduce_max_epu32(m);
    float amax;
    std::memcpy(&amax, &mb, 4);
    auto* blk = reinterpret_cast<uint8_t*>(dst + b);
    if (amax == 0.0f) {
      std::memset(blk, 0, sizeof(BlockQ8K));
      continue;
    }
    const float iscale = 127.0f / amax;
    const __m512 is = _mm512_set1_ps(iscale);
    alignas(32) int16_t bsums[16];
    for (int j = 0; j < kQKK; j += 16) {
      __m512i q = round_half_away(_mm512_mul_ps(is, _mm512_loadu_ps(x + j)));
      q = _mm512_min_epi32(_mm512_max_epi32(q, _mm512_set1_epi32(-127)), _mm512_set1_epi32(127));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(blk + offsetof(BlockQ8K, qs) + j),
                       _mm512_cvtepi32_epi8(q));
      bsums[j / 16] = static_cast<int16_t>(_mm512_reduce_add_epi32(q));
    }
    std::memcpy(blk + offsetof(BlockQ8K, bsums), bsums, sizeof(bsums));
    const float d = 1.0f / iscale;
    std::memcpy(blk + offsetof(BlockQ8K, d), &d, 4);
  }
}

void quantize_q8_0(const float* src, BlockQ8_0* dst, int64_t n) {
  for (int64_t b = 0; b < n / kQK; ++b) {
    const float* x = src + b * kQK;
    const uint32_t mb = _mm512_reduce_max_epu32(_mm512_max_epu32(abs_bits(x), abs_bits(x + 16)));
    float amax;
    std::memcpy(&amax, &mb, 4);
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    auto* blk = reinterpret_cast<uint8_t*>(dst + b);
    const uint16_t dh = quant::f32_to_fp16(d);
    std::memcpy(blk + offsetof(BlockQ8_0, d), &dh, 2);
    const __m512 is = _mm512_set1_ps(id);
    for (int j = 0; j < kQK; j += 16) {
      // x * id as the reference computes it (operand order does not matter for one product).
      const __m512i q = round_half_away(_mm512_mul_ps(_mm512_loadu_ps(x + j), is));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(blk + offsetof(BlockQ8_0, qs) + j),
                       _mm512_cvtepi32_epi8(q));
    }
  }
}

}  // namespace

bool quantize_act_avx512(DType act, const float* x, void* dst, int64_t n) {
  if (act == DType::Q8_K && n % kQKK == 0) {
    quantize_q8_k(x, static_cast<BlockQ8K*>(dst), n);
    return true;
  }
  if (act == DType::Q8_0 && n % kQK == 0) {
    quantize_q8_0(x, static_cast<BlockQ8_0*>(dst), n);
    return true;
  }
  return false;
}

}  // namespace arc::kernels::cpu
