// AVX2 paged and MLA attention: the shared kernels with 8-lane registers; F16 K/V widened by
// F16C.
#include <immintrin.h>

#include "cpu/attention_kernel.h"
#include "cpu/mla_kernel.h"
#include "cpu/ops_variants.h"
#include "cpu/vec_exp_x86.h"

namespace arc::kernels::avx2 {
namespace {

struct Lanes8 {
  static constexpr int W = 8;
  using R = __m256;
  static R zero() { return _mm256_setzero_ps(); }
  static R set1(float f) { return _mm256_set1_ps(f); }
  static R load(const float* p) { return _mm256_loadu_ps(p); }
  static R load(const uint16_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static void store(float* p, R r) { _mm256_storeu_ps(p, r); }
  static R fma(R a, R b, R c) { return _mm256_fmadd_ps(a, b, c); }
  static R add(R a, R b) { return _mm256_add_ps(a, b); }
  static R sub(R a, R b) { return _mm256_sub_ps(a, b); }
  static R mul(R a, R b) { return _mm256_mul_ps(a, b); }
  static R exp(R a) { return detail::exp256(a); }
  static float hsum(R v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
  // Four sums from one tree (see the AVX-512 variant).
  static void hsum4(const R* v, float* out) {
    const __m256 ab = _mm256_add_ps(_mm256_unpacklo_ps(v[0], v[1]), _mm256_unpackhi_ps(v[0], v[1]));
    const __m256 cd = _mm256_add_ps(_mm256_unpacklo_ps(v[2], v[3]), _mm256_unpackhi_ps(v[2], v[3]));
    const __m256 abcd = _mm256_add_ps(
        _mm256_castpd_ps(_mm256_unpacklo_pd(_mm256_castps_pd(ab), _mm256_castps_pd(cd))),
        _mm256_castpd_ps(_mm256_unpackhi_pd(_mm256_castps_pd(ab), _mm256_castps_pd(cd))));
    _mm_storeu_ps(out, _mm_add_ps(_mm256_castps256_ps128(abcd), _mm256_extractf128_ps(abcd, 1)));
  }
};

}  // namespace

void paged_attention(const PagedAttentionArgs& args, Parallel* pool) {
  if (!detail::attention_args_ok(args)) return;
  if (args.head_dim % Lanes8::W != 0) return scalar::paged_attention(args, pool);
  detail::paged_attention_impl<Lanes8>(args, pool);
}

bool mla_attention(const MlaAttentionArgs& args, Parallel* pool) {
  if (!detail::mla_shape_ok<Lanes8>(args)) return false;
  detail::mla_attention_impl<Lanes8>(args, pool);
  return true;
}

}  // namespace arc::kernels::avx2
