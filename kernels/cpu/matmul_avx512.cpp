// AVX-512 (F/BW/VL/DQ) matmul kernels. Float weights, the 32-element block formats (Q8_0, Q4_0,
// MXFP4: two blocks per 512-bit register) and Q4_K have 512-bit kernels here; Q5_K and Q6_K use
// the 256-bit kernels of matmul_x86.inc compiled for AVX-512 (EVEX encoding, 32 registers).
// GCC 12 reports false "may be used uninitialized" inside its own AVX-512 intrinsics (GCC bug
// 105593: _mm512_undefined_* placeholders); the warning is about the header, not this code.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "cpu/matmul_kernels.h"
#include "quant/blocks.h"
#include "quant/half.h"

namespace arc::kernels::cpu {
namespace avx512 {
namespace {
constexpr int kTile = 4;
#include "cpu/matmul_x86.inc"

inline __m512i join(__m256i lo, __m256i hi) {
  return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}
inline __m512 join_scales(float lo, float hi) {
  return _mm512_insertf32x8(_mm512_set1_ps(lo), _mm256_set1_ps(hi), 1);
}

// s8 * s8 sums of 4 products as 16 int32: |a| * (b with a's sign); AVX-512 has no vpsignb, so
// the sign moves through a mask.
inline __m512i dot_s8s8_512(__m512i a, __m512i b) {
  const __mmask64 neg = _mm512_movepi8_mask(a);
  const __m512i b_signed = _mm512_mask_sub_epi8(b, neg, _mm512_setzero_si512(), b);
  const __m512i p = _mm512_maddubs_epi16(_mm512_abs_epi8(a), b_signed);
  return _mm512_madd_epi16(p, _mm512_set1_epi16(1));
}

// Two consecutive 32-element blocks per 512-bit step; an odd last block takes the 256-bit step.
template <class Block, class Decode>
struct Block32Kernel512 {
  template <int NT>
  static void dot(int64_t n_in, const uint8_t* wrow, const uint8_t* xa, size_t xs, float* out) {
    const auto* w = reinterpret_cast<const Block*>(wrow);  // [n_in / 32]
    const int64_t nb = n_in / kQK;
    __m512 acc[NT];
    for (int t = 0; t < NT; ++t) acc[t] = _mm512_setzero_ps();
    int64_t b = 0;
    for (; b + 2 <= nb; b += 2) {
      float d0, d1;
      const __m256i q0 = Decode::run(w[b], &d0);
      const __m256i q1 = Decode::run(w[b + 1], &d1);
      const __m512i q = join(q0, q1);
      for (int t = 0; t < NT; ++t) {
        const auto* xb = reinterpret_cast<const BlockQ8_0*>(xa + t * xs) + b;
        const __m512i xq = join(loadu(xb[0].qs), loadu(xb[1].qs));
        const __m512 s = join_scales(d0 * h2f(xb[0].d), d1 * h2f(xb[1].d));
        acc[t] = _mm512_fmadd_ps(s, _mm512_cvtepi32_ps(dot_s8s8_512(q, xq)), acc[t]);
      }
    }
    float tail[NT] = {};
    if (b < nb) {
      float d0;
      const __m256i q = Decode::run(w[b], &d0);
      for (int t = 0; t < NT; ++t) {
        const auto* xb = reinterpret_cast<const BlockQ8_0*>(xa + t * xs) + b;
        const __m256 p = _mm256_cvtepi32_ps(dot_s8s8(q, loadu(xb->qs)));
        tail[t] = hsum(_mm256_mul_ps(_mm256_set1_ps(d0 * h2f(xb->d)), p));
      }
    }
    for (int t = 0; t < NT; ++t) out[t] = _mm512_reduce_add_ps(acc[t]) + tail[t];
  }
};

// Q4_K against Q8_K, 64 weights per 512-bit step: the 32 bytes of group g are broadcast to both
// halves and shifted by 0 / 4 per half, which puts elements 64g .. 64g+63 in order, matching one
// 512-bit load of the activations (no per-token shuffles). Sub-block scales 2g / 2g+1 are
// permuted into the two halves; mins go through the activation block sums as in the .inc.
struct Q4K512Kernel {
  static constexpr size_t kPrefetchAhead = kKQuantPrefetchBytes;
  template <int NT>
  static void dot(int64_t n_in, const uint8_t* wrow, const uint8_t* xa, size_t xs, float* out) {
    const auto* w = reinterpret_cast<const BlockQ4K*>(wrow);  // [n_in / 256]
    const int64_t nb = n_in / kQKK;
    const __m512i low4 = _mm512_set1_epi8(0x0F);
    const __m512i shifts = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(4), 1);
    __m512 acc[NT];
    __m128 accm[NT];
    for (int t = 0; t < NT; ++t) {
      acc[t] = _mm512_setzero_ps();
      accm[t] = _mm_setzero_ps();
    }
    for (int64_t b = 0; b < nb; ++b) {
      alignas(16) uint8_t sm[16];
      unpack_scales_k4(w[b].scales, sm);
      const __m512i sc16 = _mm512_cvtepu8_epi16(
          _mm256_castsi128_si256(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(sm))));
      __m512i sumi[NT];
      for (int t = 0; t < NT; ++t) sumi[t] = _mm512_setzero_si512();
      for (int g = 0; g < 4; ++g) {
        const __m512i raw = _mm512_broadcast_i64x4(loadu(w[b].qs + 32 * g));
        const __m512i q = _mm512_and_si512(_mm512_srlv_epi16(raw, shifts), low4);
        const __m512i idx =
            _mm512_inserti64x4(_mm512_set1_epi16(static_cast<int16_t>(2 * g)),
                               _mm256_set1_epi16(static_cast<int16_t>(2 * g + 1)), 1);
        const __m512i scv = _mm512_permutexvar_epi16(idx, sc16);
        for (int t = 0; t < NT; ++t) {
          const auto* xb = reinterpret_cast<const BlockQ8K*>(xa + t * xs) + b;
          const __m512i p = _mm512_maddubs_epi16(q, _mm512_loadu_si512(xb->qs + 64 * g));
          sumi[t] = _mm512_add_epi32(sumi[t], _mm512_madd_epi16(p, scv));
        }
      }
      const float d = h2f(w[b].d), dmin = h2f(w[b].dmin);
      for (int t = 0; t < NT; ++t) {
        const auto* xb = reinterpret_cast<const BlockQ8K*>(xa + t * xs) + b;
        acc[t] = _mm512_fmadd_ps(_mm512_set1_ps(d * xb->d), _mm512_cvtepi32_ps(sumi[t]), acc[t]);
        const __m128i m = mins_dot_bsums(sm + 8, xb);
        accm[t] = _mm_fmadd_ps(_mm_set1_ps(dmin * xb->d), _mm_cvtepi32_ps(m), accm[t]);
      }
    }
    for (int t = 0; t < NT; ++t) out[t] = _mm512_reduce_add_ps(acc[t]) - hsum128(accm[t]);
  }
};

struct Load512F32 {
  static __m512 load16(const uint8_t* p) { return _mm512_loadu_ps(p); }
};
struct Load512F16 {
  static __m512 load16(const uint8_t* p) { return _mm512_cvtph_ps(loadu(p)); }
};
struct Load512BF16 {
  static __m512 load16(const uint8_t* p) {
    const __m512i v = _mm512_cvtepu16_epi32(loadu(p));
    return _mm512_castsi512_ps(_mm512_slli_epi32(v, 16));
  }
};

// Float weights, 32 values per step in two accumulator sets; scalar tail (L1 from the .inc).
template <class L512, class L1>
struct FloatKernel512 {
  template <int NT>
  static void dot(int64_t n, const uint8_t* w, const uint8_t* xa, size_t xs, float* out) {
    __m512 acc0[NT], acc1[NT];
    for (int t = 0; t < NT; ++t) acc0[t] = acc1[t] = _mm512_setzero_ps();
    const float* x[NT];
    for (int t = 0; t < NT; ++t) x[t] = reinterpret_cast<const float*>(xa + t * xs);
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
      const __m512 w0 = L512::load16(w + i * L1::kBytes);
      const __m512 w1 = L512::load16(w + (i + 16) * L1::kBytes);
      for (int t = 0; t < NT; ++t) {
        acc0[t] = _mm512_fmadd_ps(w0, _mm512_loadu_ps(x[t] + i), acc0[t]);
        acc1[t] = _mm512_fmadd_ps(w1, _mm512_loadu_ps(x[t] + i + 16), acc1[t]);
      }
    }
    for (; i + 16 <= n; i += 16) {
      const __m512 w0 = L512::load16(w + i * L1::kBytes);
      for (int t = 0; t < NT; ++t)
        acc0[t] = _mm512_fmadd_ps(w0, _mm512_loadu_ps(x[t] + i), acc0[t]);
    }
    for (int t = 0; t < NT; ++t) {
      float tail = 0;
      for (int64_t k = i; k < n; ++k) tail += L1::load1(w + k * L1::kBytes) * x[t][k];
      out[t] = _mm512_reduce_add_ps(_mm512_add_ps(acc0[t], acc1[t])) + tail;
    }
  }
};

}  // namespace
}  // namespace avx512

RowsKernel rows_kernel_avx512(DType t) {
  using namespace avx512;
  switch (t) {
    case DType::F32:
      return {rows<FloatKernel512<Load512F32, LoadF32>>, ActFormat::kF32};
    case DType::F16:
      return {rows<FloatKernel512<Load512F16, LoadF16>>, ActFormat::kF32};
    case DType::BF16:
      return {rows<FloatKernel512<Load512BF16, LoadBF16>>, ActFormat::kF32};
    case DType::Q8_0:
      return {rows<Block32Kernel512<BlockQ8_0, DecodeQ8_0>>, ActFormat::kQ8_0};
    case DType::Q4_0:
      return {rows<Block32Kernel512<BlockQ4_0, DecodeQ4_0>>, ActFormat::kQ8_0};
    case DType::MXFP4:
      return {rows<Block32Kernel512<BlockMxfp4, DecodeMxfp4>>, ActFormat::kQ8_0};
    case DType::Q4_K:
      return {rows<Q4K512Kernel>, ActFormat::kQ8_K};
    default:
      return x86_rows_kernel(t);
  }
}

}  // namespace arc::kernels::cpu
