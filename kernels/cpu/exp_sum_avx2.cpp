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
