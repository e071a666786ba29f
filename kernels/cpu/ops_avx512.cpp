// AVX-512 variant of the elementwise and row-wise ops. Tails use masked loads/stores, so any
// length and alignment is handled by the same code path.
// GCC 12 reports false "may be used uninitialized" inside its own AVX-512 intrinsics (GCC bug
// 105593: _mm512_undefined_* placeholders); the warning is about the header, not this code.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <cmath>

#include "cpu/ops_variants.h"
#include "cpu/vec_exp_x86.h"

namespace arc::kernels::avx512 {
namespace {

constexpr int64_t W = 16;

__mmask16 tail(int64_t left) {
  return left >= W ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << left) - 1);
}

// x / (1 + e^-x)
__m512 silu_ps(__m512 x) {
  const __m512 one = _mm512_set1_ps(1.0f);
  return _mm512_div_ps(x,
                       _mm512_add_ps(one, detail::exp512(_mm512_sub_ps(_mm512_setzero_ps(), x))));
}

void rms_norm(const float* x, const float* w, float* y, int64_t n_rows, int64_t d, float eps) {
  for (int64_t r = 0; r < n_rows; ++r) {
    const float* xr = x + r * d;  // [d]
    float* yr = y + r * d;        // [d]
    __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 2 * W <= d; i += 2 * W) {
      const __m512 a = _mm512_loadu_ps(xr + i);
      const __m512 b = _mm512_loadu_ps(xr + i + W);
      s0 = _mm512_fmadd_ps(a, a, s0);
      s1 = _mm512_fmadd_ps(b, b, s1);
    }
    for (; i < d; i += W) {
      const __m512 a = _mm512_maskz_loadu_ps(tail(d - i), xr + i);
      s0 = _mm512_fmadd_ps(a, a, s0);
    }
    const float ss = _mm512_reduce_add_ps(_mm512_add_ps(s0, s1));
    const __m512 inv = _mm512_set1_ps(1.0f / std::sqrt(ss / static_cast<float>(d) + eps));
    for (i = 0; i < d; i += W) {
      const __mmask16 m = tail(d - i);
      __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(m, xr + i), inv);
      if (w != nullptr) v = _mm512_mul_ps(v, _mm512_maskz_loadu_ps(m, w + i));
      _mm512_mask_storeu_ps(yr + i, m, v);
    }
  }
}

void softmax_rows(float* x, int64_t n_rows, int64_t n) {
  for (int64_t r = 0; r < n_rows; ++r) {
    float* xr = x + r * n;  // [n]
    __m512 mx = _mm512_set1_ps(-INFINITY);
    for (int64_t i = 0; i < n; i += W) {
      mx = _mm512_mask_max_ps(mx, tail(n - i), mx, _mm512_maskz_loadu_ps(tail(n - i), xr + i));
    }
    const float m = _mm512_reduce_max_ps(mx);
    if (m == -INFINITY) {
      for (int64_t i = 0; i < n; i += W)
        _mm512_mask_storeu_ps(xr + i, tail(n - i), _mm512_setzero_ps());
      continue;
    }
    const __m512 vm = _mm512_set1_ps(m);
    __m512 sum = _mm512_setzero_ps();
    for (int64_t i = 0; i < n; i += W) {
      const __mmask16 k = tail(n - i);
      const __m512 e = detail::exp512(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, xr + i), vm));
      sum = _mm512_mask_add_ps(sum, k, sum, e);
      _mm512_mask_storeu_ps(xr + i, k, e);
    }
    const __m512 inv = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(sum));
    for (int64_t i = 0; i < n; i += W) {
      const __mmask16 k = tail(n - i);
      _mm512_mask_storeu_ps(xr + i, k, _mm512_mul_ps(_mm512_maskz_loadu_ps(k, xr + i), inv));
    }
  }
}

void silu(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; i += W) {
    const __mmask16 k = tail(n - i);
    _mm512_mask_storeu_ps(y + i, k, silu_ps(_mm512_maskz_loadu_ps(k, x + i)));
  }
}

// 0.5 v (1 + tanh(z)) == v * sigmoid(2 z), z = sqrt(2/pi) (v + 0.044715 v^3)
void gelu(const float* x, float* y, int64_t n) {
  const __m512 c2 = _mm512_set1_ps(-2.0f * 0.7978845608028654f);
  const __m512 c3 = _mm512_set1_ps(0.044715f);
  const __m512 one = _mm512_set1_ps(1.0f);
  for (int64_t i = 0; i < n; i += W) {
    const __mmask16 k = tail(n - i);
    const __m512 v = _mm512_maskz_loadu_ps(k, x + i);
    const __m512 inner = _mm512_fmadd_ps(_mm512_mul_ps(c3, v), _mm512_mul_ps(v, v), v);
    const __m512 e = detail::exp512(_mm512_mul_ps(c2, inner));
    _mm512_mask_storeu_ps(y + i, k, _mm512_div_ps(v, _mm512_add_ps(one, e)));
  }
}

void swiglu(const float* gate, const float* up, float* y, int64_t n) {
  for (int64_t i = 0; i < n; i += W) {
    const __mmask16 k = tail(n - i);
    const __m512 g = silu_ps(_mm512_maskz_loadu_ps(k, gate + i));
    _mm512_mask_storeu_ps(y + i, k, _mm512_mul_ps(g, _mm512_maskz_loadu_ps(k, up + i)));
  }
}

void add(const float* a, const float* b, float* y, int64_t n) {
  for (int64_t i = 0; i < n; i += W) {
    const __mmask16 k = tail(n - i);
    _mm512_mask_storeu_ps(
        y + i, k, _mm512_add_ps(_mm512_maskz_loadu_ps(k, a + i), _mm512_maskz_loadu_ps(k, b + i)));
  }
}

void scale(float* x, float s, int64_t n) {
  const __m512 vs = _mm512_set1_ps(s);
  for (int64_t i = 0; i < n; i += W) {
    const __mmask16 k = tail(n - i);
    _mm512_mask_storeu_ps(x + i, k, _mm512_mul_ps(_mm512_maskz_loadu_ps(k, x + i), vs));
  }
}

}  // namespace

const OpsTable kOps = {rms_norm, softmax_rows, silu, gelu, swiglu, add, scale};

}  // namespace arc::kernels::avx512
