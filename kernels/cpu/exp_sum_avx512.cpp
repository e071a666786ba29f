// AVX-512 sums of exp in double (cpu/exp_sum.h): sixteen lanes (two vectors of eight), one
// partial sum each; the tail is a masked load.
// GCC 12 reports false "may be used uninitialized" inside its own AVX-512 intrinsics (GCC bug
// 105593: _mm512_undefined_* placeholders); the warning is about the header, not this code.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include "cpu/exp_sum.h"

namespace arc::kernels::cpu::avx512 {
namespace {

// exp of 8 exponents <= 0 (or NaN, kept).
inline __m512d exp8(__m512d x) {
  // max(floor, x): the second operand comes back when one is NaN, so a NaN stays.
  const __m512d xc = _mm512_max_pd(_mm512_set1_pd(kExpFloor), x);
  const __m512d shifter = _mm512_set1_pd(kExpShifter);
  const __m512d t = _mm512_fmadd_pd(xc, _mm512_set1_pd(kExpLog2e), shifter);
  const __m512d n = _mm512_sub_pd(t, shifter);
  __m512d r = _mm512_fnmadd_pd(n, _mm512_set1_pd(kExpLn2Hi), xc);
  r = _mm512_fnmadd_pd(n, _mm512_set1_pd(kExpLn2Lo), r);
  __m512d p = _mm512_set1_pd(kExpPoly[0]);
  for (int i = 1; i < 14; ++i) p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(kExpPoly[i]));
  // t's bits are the shifter's plus n: 2^n from n + 1023 in the exponent field.
  const __m512i nb = _mm512_sub_epi64(_mm512_castpd_si512(t), _mm512_castpd_si512(shifter));
  const __m512d scale =
      _mm512_castsi512_pd(_mm512_slli_epi64(_mm512_add_epi64(nb, _mm512_set1_epi64(1023)), 52));
  const __mmask8 under = _mm512_cmp_pd_mask(x, _mm512_set1_pd(kExpFloor), _CMP_LT_OQ);
  return _mm512_maskz_mul_pd(static_cast<__mmask8>(~under), p, scale);
}

// Masked tail: lanes past n read as -inf, whose exp is 0.
inline __m512 load_tail(const float* l, int64_t left) {
  const __mmask16 m = static_cast<__mmask16>((1u << left) - 1);
  return _mm512_mask_loadu_ps(_mm512_set1_ps(-__builtin_inff()), m, l);
}

}  // namespace

double sum_exp_diff(const float* l, int64_t n, float mx) {
  const __m512 m = _mm512_set1_ps(mx);
  __m512d acc0 = _mm512_setzero_pd(), acc1 = _mm512_setzero_pd();
  for (int64_t i = 0; i < n; i += 16) {
    const __m512 v = n - i >= 16 ? _mm512_loadu_ps(l + i) : load_tail(l + i, n - i);
    const __m512 d = _mm512_sub_ps(v, m);  // in float, as the reference
    acc0 = _mm512_add_pd(acc0, exp8(_mm512_cvtps_pd(_mm512_castps512_ps256(d))));
    acc1 = _mm512_add_pd(
        acc1,
        exp8(_mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(d), 1)))));
  }
  return _mm512_reduce_add_pd(_mm512_add_pd(acc0, acc1));
}

double sum_exp_tempered(const float* l, int64_t n, double mx, double temperature) {
  const __m512d m = _mm512_set1_pd(mx), t = _mm512_set1_pd(temperature);
  __m512d acc0 = _mm512_setzero_pd(), acc1 = _mm512_setzero_pd();
  for (int64_t i = 0; i < n; i += 16) {
    const __m512 v = n - i >= 16 ? _mm512_loadu_ps(l + i) : load_tail(l + i, n - i);
    const __m512d lo = _mm512_cvtps_pd(_mm512_castps512_ps256(v));
    const __m512d hi =
        _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
    // (x - mx) / T with a true division, as the reference.
    acc0 = _mm512_add_pd(acc0, exp8(_mm512_div_pd(_mm512_sub_pd(lo, m), t)));
    acc1 = _mm512_add_pd(acc1, exp8(_mm512_div_pd(_mm512_sub_pd(hi, m), t)));
  }
  return _mm512_reduce_add_pd(_mm512_add_pd(acc0, acc1));
}

}  // namespace arc::kernels::cpu::avx512

namespace arc::kernels::cpu::avx512 {

// Per 16 values: two vectors of eight exponents (x - mx) * inv_t in double; NaN lanes count 0.
void tempered_masses(const float* l, int64_t n, float mx, double inv_t, const float* edges,
                     double* above) {
  constexpr int kEdges = 8;  // arc/kernels/sampling.h kMassEdges
  const __m512d m = _mm512_set1_pd(mx), it = _mm512_set1_pd(inv_t);
  __m512 e[kEdges];
  for (int j = 0; j < kEdges; ++j) e[j] = _mm512_set1_ps(edges[j]);
  __m512d acc_lo[kEdges + 1], acc_hi[kEdges + 1];
  for (int j = 0; j <= kEdges; ++j) acc_lo[j] = acc_hi[j] = _mm512_setzero_pd();
  for (int64_t i = 0; i < n; i += 16) {
    const __m512 v = n - i >= 16 ? _mm512_loadu_ps(l + i) : load_tail(l + i, n - i);
    const __mmask16 ok = _mm512_cmp_ps_mask(v, v, _CMP_ORD_Q);
    const __m512d lo = _mm512_cvtps_pd(_mm512_castps512_ps256(v));
    const __m512d hi =
        _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
    const __m512d p_lo = exp8(_mm512_mul_pd(_mm512_sub_pd(lo, m), it));
    const __m512d p_hi = exp8(_mm512_mul_pd(_mm512_sub_pd(hi, m), it));
    acc_lo[kEdges] =
        _mm512_mask_add_pd(acc_lo[kEdges], static_cast<__mmask8>(ok), acc_lo[kEdges], p_lo);
    acc_hi[kEdges] =
        _mm512_mask_add_pd(acc_hi[kEdges], static_cast<__mmask8>(ok >> 8), acc_hi[kEdges], p_hi);
    for (int j = 0; j < kEdges; ++j) {
      const __mmask16 k = _mm512_cmp_ps_mask(v, e[j], _CMP_GE_OQ);  // NaN: false
      acc_lo[j] = _mm512_mask_add_pd(acc_lo[j], static_cast<__mmask8>(k), acc_lo[j], p_lo);
      acc_hi[j] = _mm512_mask_add_pd(acc_hi[j], static_cast<__mmask8>(k >> 8), acc_hi[j], p_hi);
    }
  }
  for (int j = 0; j <= kEdges; ++j)
    above[j] = _mm512_reduce_add_pd(_mm512_add_pd(acc_lo[j], acc_hi[j]));
}

void tempered_probs(const float* l, int64_t n, float mx, double inv_t, double* p) {
  const __m512d m = _mm512_set1_pd(mx), it = _mm512_set1_pd(inv_t);
  for (int64_t i = 0; i < n; i += 16) {
    const int64_t left = n - i;
    const __m512 v = left >= 16 ? _mm512_loadu_ps(l + i) : load_tail(l + i, left);
    const __mmask16 ok = _mm512_cmp_ps_mask(v, v, _CMP_ORD_Q);
    const __m512d lo = _mm512_cvtps_pd(_mm512_castps512_ps256(v));
    const __m512d hi =
        _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
    const __m512d p_lo = _mm512_maskz_mov_pd(static_cast<__mmask8>(ok),
                                             exp8(_mm512_mul_pd(_mm512_sub_pd(lo, m), it)));
    const __m512d p_hi = _mm512_maskz_mov_pd(static_cast<__mmask8>(ok >> 8),
                                             exp8(_mm512_mul_pd(_mm512_sub_pd(hi, m), it)));
    if (left >= 16) {
      _mm512_storeu_pd(p + i, p_lo);
      _mm512_storeu_pd(p + i + 8, p_hi);
    } else {
      const uint32_t all = (1u << left) - 1;
      _mm512_mask_storeu_pd(p + i, static_cast<__mmask8>(all), p_lo);
      _mm512_mask_storeu_pd(p + i + 8, static_cast<__mmask8>(all >> 8), p_hi);
    }
  }
}

// Compress in registers and store whole vectors (a compress straight to memory is microcoded and
// slow on some cores): the outputs have room for 16 past the count.
int64_t collect_range(const float* x, const int32_t* ids, int64_t n, float lo, float hi,
                      float* out_x, int32_t* out_id) {
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  int64_t c = 0;
  for (int64_t i = 0; i < n; i += 16) {
    const int64_t left = n - i;
    const __mmask16 valid =
        left >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << left) - 1);
    const __m512 v = _mm512_maskz_loadu_ps(valid, x + i);
    const __mmask16 k = _mm512_mask_cmp_ps_mask(valid, v, vlo, _CMP_GE_OQ) &
                        static_cast<__mmask16>(~_mm512_cmp_ps_mask(v, vhi, _CMP_GE_OQ));
    if (k == 0) continue;
    const __m512i id = ids != nullptr
                           ? _mm512_maskz_loadu_epi32(valid, ids + i)
                           : _mm512_add_epi32(lane, _mm512_set1_epi32(static_cast<int32_t>(i)));
    _mm512_storeu_ps(out_x + c, _mm512_maskz_compress_ps(k, v));
    _mm512_storeu_si512(out_id + c, _mm512_maskz_compress_epi32(k, id));
    c += __builtin_popcount(k);
  }
  return c;
}

}  // namespace arc::kernels::cpu::avx512
