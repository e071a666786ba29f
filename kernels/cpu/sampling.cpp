// Whole-row sampling helpers (arc/kernels/sampling.h): dispatch to the AVX-512 and AVX2 versions
// (cpu/exp_sum_avx512.cpp, cpu/exp_sum_avx2.cpp) and the portable versions below, which are
// also their scalar reference in the tests.
#include "arc/kernels/sampling.h"

#include <algorithm>
#include <cmath>

#include "arc/kernels/cpu_dispatch.h"
#include "cpu/exp_sum.h"

namespace arc::kernels {
namespace {

double tempered_p(float x, float mx, double inv_t) {
  if (std::isnan(x)) return 0.0;
  return cpu::exp_nonpositive((static_cast<double>(x) - mx) * inv_t);
}

void tempered_masses_scalar(const float* x, int64_t n, float mx, double inv_t, const float* edges,
                            double* above) {
  std::fill(above, above + kMassEdges + 1, 0.0);
  for (int64_t i = 0; i < n; ++i) {
    const double p = tempered_p(x[i], mx, inv_t);
    above[kMassEdges] += p;
    for (int j = 0; j < kMassEdges; ++j) {
      if (x[i] >= edges[j]) above[j] += p;
    }
  }
}

void tempered_probs_scalar(const float* x, int64_t n, float mx, double inv_t, double* p) {
  for (int64_t i = 0; i < n; ++i) p[i] = tempered_p(x[i], mx, inv_t);
}

int64_t collect_range_scalar(const float* x, const int32_t* ids, int64_t n, float lo, float hi,
                             float* out_x, int32_t* out_id) {
  int64_t c = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (x[i] >= lo && !(x[i] >= hi)) {
      out_x[c] = x[i];
      out_id[c] = ids != nullptr ? ids[i] : static_cast<int32_t>(i);
      ++c;
    }
  }
  return c;
}

}  // namespace

float row_max(const float* x, int64_t n) {
  // Eight independent maxima: the compiler vectorises the loop at the build's base ISA.
  float m[8];
  std::fill(m, m + 8, -INFINITY);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int j = 0; j < 8; ++j) m[j] = x[i + j] > m[j] ? x[i + j] : m[j];  // NaN: not greater
  }
  for (; i < n; ++i) m[0] = x[i] > m[0] ? x[i] : m[0];
  return *std::max_element(m, m + 8);
}

bool cpu::tempered_masses_at(IsaLevel level, const float* x, int64_t n, float mx, double inv_t,
                             const float* edges, double* above) {
  if (!isa_available(level)) return false;
#if defined(ARC_KERNELS_X86)
  if (has_avx512(level)) {
    avx512::tempered_masses(x, n, mx, inv_t, edges, above);
    return true;
  }
  if (level == IsaLevel::kAvx2) {
    avx2::tempered_masses(x, n, mx, inv_t, edges, above);
    return true;
  }
#endif
  tempered_masses_scalar(x, n, mx, inv_t, edges, above);
  return true;
}

bool cpu::tempered_probs_at(IsaLevel level, const float* x, int64_t n, float mx, double inv_t,
                            double* p) {
  if (!isa_available(level)) return false;
#if defined(ARC_KERNELS_X86)
  if (has_avx512(level)) {
    avx512::tempered_probs(x, n, mx, inv_t, p);
    return true;
  }
  if (level == IsaLevel::kAvx2) {
    avx2::tempered_probs(x, n, mx, inv_t, p);
    return true;
  }
#endif
  tempered_probs_scalar(x, n, mx, inv_t, p);
  return true;
}

bool cpu::collect_range_at(IsaLevel level, const float* x, const int32_t* ids, int64_t n, float lo,
                           float hi, float* out_x, int32_t* out_id, int64_t* count) {
  if (!isa_available(level)) return false;
#if defined(ARC_KERNELS_X86)
  if (has_avx512(level)) {
    *count = avx512::collect_range(x, ids, n, lo, hi, out_x, out_id);
    return true;
  }
#endif
  *count = collect_range_scalar(x, ids, n, lo, hi, out_x, out_id);
  return true;
}

void tempered_masses(const float* x, int64_t n, float mx, double inv_t, const float* edges,
                     double* above) {
  cpu::tempered_masses_at(cpu::best_isa(), x, n, mx, inv_t, edges, above);
}

void tempered_probs(const float* x, int64_t n, float mx, double inv_t, double* p) {
  cpu::tempered_probs_at(cpu::best_isa(), x, n, mx, inv_t, p);
}

int64_t collect_range(const float* x, const int32_t* ids, int64_t n, float lo, float hi,
                      float* out_x, int32_t* out_id) {
  int64_t c = 0;
  cpu::collect_range_at(cpu::best_isa(), x, ids, n, lo, hi, out_x, out_id, &c);
  return c;
}

double log_sum_exp(const float* x, int64_t n) {
  if (n <= 0) return -INFINITY;
  const float mx = row_max(x, n);
  if (!std::isfinite(mx) || std::isnan(x[0])) {
    // Every value -inf or NaN, or a +inf: the definition term by term.
    const float m = *std::max_element(x, x + n);
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += std::exp(static_cast<double>(x[i] - m));
    return m + std::log(sum);
  }
  double sum = 0.0;
#if defined(ARC_KERNELS_X86)
  const cpu::IsaLevel level = cpu::best_isa();
  if (cpu::has_avx512(level)) {
    sum = cpu::avx512::sum_exp_diff(x, n, mx);
  } else if (level == cpu::IsaLevel::kAvx2) {
    sum = cpu::avx2::sum_exp_diff(x, n, mx);
  } else
#endif
  {
    for (int64_t i = 0; i < n; ++i) sum += cpu::exp_nonpositive(static_cast<double>(x[i] - mx));
  }
  return mx + std::log(sum);
}

}  // namespace arc::kernels
