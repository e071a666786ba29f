// AVX-512 paged and MLA attention: the shared kernels with 16-lane registers; F16 K/V widened by
// vcvtph2ps.
// GCC 12 reports false "may be used uninitialized" inside its own AVX-512 intrinsics (GCC bug
// 105593: _mm512_undefined_* placeholders); the warning is about the header, not this code.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include "cpu/attention_kernel.h"
#include "cpu/mla_kernel.h"
#include "cpu/ops_variants.h"
#include "cpu/vec_exp_x86.h"

namespace arc::kernels::avx512 {
namespace {

struct Lanes16 {
  static constexpr int W = 16;
  using R = __m512;
  static R zero() { return _mm512_setzero_ps(); }
  static R set1(float f) { return _mm512_set1_ps(f); }
  static R load(const float* p) { return _mm512_loadu_ps(p); }
  static R load(const uint16_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static void store(float* p, R r) { _mm512_storeu_ps(p, r); }
  static R fma(R a, R b, R c) { return _mm512_fmadd_ps(a, b, c); }
  static R add(R a, R b) { return _mm512_add_ps(a, b); }
  static R sub(R a, R b) { return _mm512_sub_ps(a, b); }
  static R mul(R a, R b) { return _mm512_mul_ps(a, b); }
  static R exp(R a) { return detail::exp512(a); }
  static float hsum(R r) { return _mm512_reduce_add_ps(r); }
  static R max(R a, R b) { return _mm512_max_ps(a, b); }
  static float hmax(R r) { return _mm512_reduce_max_ps(r); }
  static bool any_greater(R r, float f) {
    return _mm512_cmp_ps_mask(r, _mm512_set1_ps(f), _CMP_GT_OQ) != 0;
  }
  // Four sums from one tree: pairs of registers interleaved and added within 128-bit lanes, then
  // the four 128-bit lanes added.
  static void hsum4(const R* v, float* out) {
    const __m512 ab = _mm512_add_ps(_mm512_unpacklo_ps(v[0], v[1]), _mm512_unpackhi_ps(v[0], v[1]));
    const __m512 cd = _mm512_add_ps(_mm512_unpacklo_ps(v[2], v[3]), _mm512_unpackhi_ps(v[2], v[3]));
    // Each 128-bit lane: [a, b, c, d] partial sums.
    const __m512 abcd = _mm512_add_ps(
        _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(ab), _mm512_castps_pd(cd))),
        _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(ab), _mm512_castps_pd(cd))));
    const __m256 h = _mm256_add_ps(_mm512_castps512_ps256(abcd), _mm512_extractf32x8_ps(abcd, 1));
    _mm_storeu_ps(out, _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1)));
  }
};

}  // namespace

void paged_attention(const PagedAttentionArgs& args, Parallel* pool) {
  if (!detail::attention_args_ok(args)) return;
  if (args.head_dim % Lanes16::W != 0) return scalar::paged_attention(args, pool);
  detail::paged_attention_impl<Lanes16>(args, pool);
}

bool mla_attention(const MlaAttentionArgs& args, Parallel* pool) {
  if (!detail::mla_shape_ok<Lanes16>(args)) return false;
  detail::mla_attention_impl<Lanes16>(args, pool);
  return true;
}

}  // namespace arc::kernels::avx512
