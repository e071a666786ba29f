// AVX2 sums of exp in double (cpu/exp_sum.h): four lanes, one partial sum each; the last n % 4
// values go through the same arithmetic in a padded vector.
#include <immintrin.h>

#include "cpu/exp_sum.h"

namespace arc::kernels::cpu::avx2 {
namespace {

// exp of 4 exponents <= 0 (or NaN, kept).
inline __m256d exp4(__m256d x) {
  const __m256d floor = _mm256_set1_pd(kExpFloor);
  const __m256d xc = _mm256_max_pd(floor, x);  // NaN: the second operand, kept
  const __m256d shifter = _mm256_set1_pd(kExpShifter);
  const __m256d t = _mm256_fmadd_pd(xc, _mm256_set1_pd(kExpLog2e), shifter);
  const __m256d n = _mm256_sub_pd(t, shifter);
  __m256d r = _mm256_fnmadd_pd(n, _mm256_set1_pd(kExpLn2Hi), xc);
  r = _mm256_fnmadd_pd(n, _mm256_set1_pd(kExpLn2Lo), r);
  __m256d p = _mm256_set1_pd(kExpPoly[0]);
  for (int i = 1; i < 14; ++i) p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(kExpPoly[i]));
  const __m256i nb = _mm256_sub_epi64(_mm256_castpd_si256(t), _mm256_castpd_si256(shifter));
  const __m256d scale =
      _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_add_epi64(nb, _mm256_set1_epi64x(1023)), 52));
  const __m256d under = _mm256_cmp_pd(x, floor, _CMP_LT_OQ);
  return _mm256_andnot_pd(under, _mm256_mul_pd(p, scale));
}

// Four values from l (fewer at the end: the rest -inf, whose exp is 0).
inline __m128 load4(const float* l, int64_t left) {
  if (left >= 4) return _mm_loadu_ps(l);
  float v[4] = {-__builtin_inff(), -__builtin_inff(), -__builtin_inff(), -__builtin_inff()};
  for (int64_t i = 0; i < left; ++i) v[i] = l[i];
  return _mm_loadu_ps(v);
}

}  // namespace

double sum_exp_diff(const float* l, int64_t n, float mx) {
  const __m128 m = _mm_set1_ps(mx);
  __m256d acc = _mm256_setzero_pd();
  for (int64_t i = 0; i < n; i += 4) {
    acc = _mm256_add_pd(acc, exp4(_mm256_cvtps_pd(_mm_sub_ps(load4(l + i, n - i), m))));
  }
  const __m128d s = _mm_add_pd(_mm256_castpd256_pd128(acc), _mm256_extractf128_pd(acc, 1));
  return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

double sum_exp_tempered(const float* l, int64_t n, double mx, double temperature) {
  const __m256d m = _mm256_set1_pd(mx), t = _mm256_set1_pd(temperature);
  __m256d acc = _mm256_setzero_pd();
  for (int64_t i = 0; i < n; i += 4) {
    const __m256d x = _mm256_cvtps_pd(load4(l + i, n - i));
    acc = _mm256_add_pd(acc, exp4(_mm256_div_pd(_mm256_sub_pd(x, m), t)));
  }
  const __m128d s = _mm_add_pd(_mm256_castpd256_pd128(acc), _mm256_extractf128_pd(acc, 1));
  return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

}  // namespace arc::kernels::cpu::avx2

namespace arc::kernels::cpu::avx2 {
namespace {
// Four exponents (x - mx) * inv_t with NaN lanes as 0.
inline __m256d tempered4(__m128 v, __m256d m, __m256d it) {
  const __m256d x = _mm256_cvtps_pd(v);
  const __m256d ok = _mm256_cmp_pd(x, x, _CMP_ORD_Q);
  return _mm256_and_pd(ok, exp4(_mm256_mul_pd(_mm256_sub_pd(x, m), it)));
}
}  // namespace

void tempered_masses(const float* l, int64_t n, float mx, double inv_t, const float* edges,
                     double* above) {
  constexpr int kEdges = 8;  // arc/kernels/sampling.h kMassEdges
  const __m256d m = _mm256_set1_pd(mx), it = _mm256_set1_pd(inv_t);
  __m128 e[kEdges];
  for (int j = 0; j < kEdges; ++j) e[j] = _mm_set1_ps(edges[j]);
  __m256d acc[kEdges + 1];
  for (int j = 0; j <= kEdges; ++j) acc[j] = _mm256_setzero_pd();
  for (int64_t i = 0; i < n; i += 4) {
    const __m128 v = load4(l + i, n - i);
    const __m256d p = tempered4(v, m, it);
    acc[kEdges] = _mm256_add_pd(acc[kEdges], p);
    for (int j = 0; j < kEdges; ++j) {
      // The 32-bit compare mask widened to 64 bits per lane (NaN: false).
      const __m256d k = _mm256_castsi256_pd(
          _mm256_cvtepi32_epi64(_mm_castps_si128(_mm_cmp_ps(v, e[j], _CMP_GE_OQ))));
      acc[j] = _mm256_add_pd(acc[j], _mm256_and_pd(k, p));
    }
  }
  for (int j = 0; j <= kEdges; ++j) {
    alignas(32) double s[4];
    _mm256_store_pd(s, acc[j]);
    above[j] = (s[0] + s[1]) + (s[2] + s[3]);
  }
}

void tempered_probs(const float* l, int64_t n, float mx, double inv_t, double* p) {
  const __m256d m = _mm256_set1_pd(mx), it = _mm256_set1_pd(inv_t);
  for (int64_t i = 0; i < n; i += 4) {
    const __m256d q = tempered4(load4(l + i, n - i), m, it);
    if (n - i >= 4) {
      _mm256_storeu_pd(p + i, q);
    } else {
      alignas(32) double s[4];
      _mm256_store_pd(s, q);
      for (int64_t j = 0; j < n - i; ++j) p[i + j] = s[j];
    }
  }
}

}  // namespace arc::kernels::cpu::avx2
