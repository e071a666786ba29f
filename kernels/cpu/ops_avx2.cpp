// AVX2 + FMA variant of the elementwise and row-wise ops. Tails use vmaskmov loads/stores, so any
// length and alignment goes through the same arithmetic.
#include <immintrin.h>

#include <cmath>

#include "arc/kernels/fp16.h"
#include "cpu/ops_variants.h"
#include "cpu/vec_exp_x86.h"

namespace arc::kernels::avx2 {
namespace {

constexpr int64_t W = 8;

// Lane i is active when i < left.
__m256i tail(int64_t left) {
  const int32_t l = left >= W ? static_cast<int32_t>(W) : static_cast<int32_t>(left);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(l), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
__m256 load(const float* p, __m256i m) {
  return _mm256_maskload_ps(p, m);
}
void store(float* p, __m256i m, __m256 v) {
  _mm256_maskstore_ps(p, m, v);
}

float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
float hmax(__m256 v) {
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  s = _mm_max_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

__m256 silu_ps(__m256 x) {
  const __m256 one = _mm256_set1_ps(1.0f);
  return _mm256_div_ps(x,
                       _mm256_add_ps(one, detail::exp256(_mm256_sub_ps(_mm256_setzero_ps(), x))));
}

void rms_norm(const float* x, const float* w, float* y, int64_t n_rows, int64_t d, float eps) {
  for (int64_t r = 0; r < n_rows; ++r) {
    const float* xr = x + r * d;  // [d]
    float* yr = y + r * d;        // [d]
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 2 * W <= d; i += 2 * W) {
      const __m256 a = _mm256_loadu_ps(xr + i);
      const __m256 b = _mm256_loadu_ps(xr + i + W);
      s0 = _mm256_fmadd_ps(a, a, s0);
      s1 = _mm256_fmadd_ps(b, b, s1);
    }
    for (; i < d; i += W) {
      const __m256 a = load(xr + i, tail(d - i));
      s0 = _mm256_fmadd_ps(a, a, s0);
    }
    const float ss = hsum(_mm256_add_ps(s0, s1));
    const __m256 inv = _mm256_set1_ps(1.0f / std::sqrt(ss / static_cast<float>(d) + eps));
    for (i = 0; i < d; i += W) {
      const __m256i m = tail(d - i);
      __m256 v = _mm256_mul_ps(load(xr + i, m), inv);
      if (w != nullptr) v = _mm256_mul_ps(v, load(w + i, m));
      store(yr + i, m, v);
    }
  }
}

void softmax_rows(float* x, int64_t n_rows, int64_t n) {
  const __m256 ninf = _mm256_set1_ps(-INFINITY);
  for (int64_t r = 0; r < n_rows; ++r) {
    float* xr = x + r * n;  // [n]
    __m256 mx = ninf;
    for (int64_t i = 0; i < n; i += W) {
      const __m256i m = tail(n - i);
      const __m256 v = _mm256_blendv_ps(ninf, load(xr + i, m), _mm256_castsi256_ps(m));
      mx = _mm256_max_ps(mx, v);
    }
    const float mval = hmax(mx);
    if (mval == -INFINITY) {
      for (int64_t i = 0; i < n; i += W) store(xr + i, tail(n - i), _mm256_setzero_ps());
      continue;
    }
    const __m256 vm = _mm256_set1_ps(mval);
    __m256 sum = _mm256_setzero_ps();
    for (int64_t i = 0; i < n; i += W) {
      const __m256i m = tail(n - i);
      __m256 e = detail::exp256(_mm256_sub_ps(load(xr + i, m), vm));
      e = _mm256_and_ps(e, _mm256_castsi256_ps(m));  // inactive lanes add nothing
      sum = _mm256_add_ps(sum, e);
      store(xr + i, m, e);
    }
    const __m256 inv = _mm256_set1_ps(1.0f / hsum(sum));
    for (int64_t i = 0; i < n; i += W) {
      const __m256i m = tail(n - i);
      store(xr + i, m, _mm256_mul_ps(load(xr + i, m), inv));
    }
  }
}

void silu(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; i += W) {
    const __m256i m = tail(n - i);
    store(y + i, m, silu_ps(load(x + i, m)));
  }
}

// 0.5 v (1 + tanh(z)) == v * sigmoid(2 z), z = sqrt(2/pi) (v + 0.044715 v^3)
void gelu(const float* x, float* y, int64_t n) {
  const __m256 c2 = _mm256_set1_ps(-2.0f * 0.7978845608028654f);
  const __m256 c3 = _mm256_set1_ps(0.044715f);
  const __m256 one = _mm256_set1_ps(1.0f);
  for (int64_t i = 0; i < n; i += W) {
    const __m256i m = tail(n - i);
    const __m256 v = load(x + i, m);
    const __m256 inner = _mm256_fmadd_ps(_mm256_mul_ps(c3, v), _mm256_mul_ps(v, v), v);
    const __m256 e = detail::exp256(_mm256_mul_ps(c2, inner));
    store(y + i, m, _mm256_div_ps(v, _mm256_add_ps(one, e)));
  }
}

void swiglu(const float* gate, const float* up, float* y, int64_t n) {
  for (int64_t i = 0; i < n; i += W) {
    const __m256i m = tail(n - i);
    store(y + i, m, _mm256_mul_ps(silu_ps(load(gate + i, m)), load(up + i, m)));
  }
}

void add(const float* a, const float* b, float* y, int64_t n) {
  for (int64_t i = 0; i < n; i += W) {
    const __m256i m = tail(n - i);
    store(y + i, m, _mm256_add_ps(load(a + i, m), load(b + i, m)));
  }
}

void scale(float* x, float s, int64_t n) {
  const __m256 vs = _mm256_set1_ps(s);
  for (int64_t i = 0; i < n; i += W) {
    const __m256i m = tail(n - i);
    store(x + i, m, _mm256_mul_ps(load(x + i, m), vs));
  }
}

}  // namespace

const OpsTable kOps = {rms_norm, softmax_rows, silu, gelu, swiglu, add, scale};

// vcvtps2ph rounds to nearest even and keeps NaNs quiet with their top payload bits, exactly as
// fp32_to_fp16 does (MXCSR is never changed, so no flush of subnormals).
void fp32_to_fp16_row(const float* src, uint16_t* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), h);
  }
  for (; i < n; ++i) dst[i] = kernels::fp32_to_fp16(src[i]);
}

}  // namespace arc::kernels::avx2
