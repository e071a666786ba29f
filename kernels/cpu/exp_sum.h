// Sums of exp over a logit row in double, for the sampling candidates' log-sum-exp and tempered
// mass (kernels/cpu/candidates.cpp). Each ISA's version evaluates the same range reduction and
// polynomial (within a few ulp of libm's exp) into its own number of partial sums, so results
// differ across ISAs by rounding only. Only candidates.cpp picks among them.
#pragma once

#include <bit>
#include <cstdint>

namespace arc::kernels::cpu {

// Constants of exp(x) = 2^n * exp(r), x = n ln2 + r, |r| <= ln2 / 2 (Cody-Waite: n * kLn2Hi is
// exact), exp(r) by its Taylor series to r^13 (truncation under 2e-16 on that range).
inline constexpr double kExpLog2e = 1.4426950408889634;
inline constexpr double kExpLn2Hi = 6.93147180369123816490e-01;
inline constexpr double kExpLn2Lo = 1.90821492927058770002e-10;
inline constexpr double kExpShifter = 6755399441055744.0;  // 1.5 * 2^52: adding it rounds
// Below this the result (< 3e-308, a denormal for libm) is taken as 0: invisible in a sum that
// holds exp(0) = 1.
inline constexpr double kExpFloor = -708.0;
// 1/13!, 1/12!, ..., 1/2!, 1, 1: Horner's order.
inline constexpr double kExpPoly[14] = {1.0 / 6227020800.0,
                                        1.0 / 479001600.0,
                                        1.0 / 39916800.0,
                                        1.0 / 3628800.0,
                                        1.0 / 362880.0,
                                        1.0 / 40320.0,
                                        1.0 / 5040.0,
                                        1.0 / 720.0,
                                        1.0 / 120.0,
                                        1.0 / 24.0,
                                        1.0 / 6.0,
                                        0.5,
                                        1.0,
                                        1.0};

// exp(x) for x <= 0 (or NaN, kept): the arithmetic of the vector versions one value at a time,
// for machines without them (rounding differs where they fuse multiply-adds).
inline double exp_nonpositive(double x) {
  const double xc = x < kExpFloor ? kExpFloor : x;
  const double t = xc * kExpLog2e + kExpShifter;
  const double n = t - kExpShifter;
  const double r = (xc - n * kExpLn2Hi) - n * kExpLn2Lo;
  double p = kExpPoly[0];
  for (int i = 1; i < 14; ++i) p = p * r + kExpPoly[i];
  const uint64_t nb = std::bit_cast<uint64_t>(t) - std::bit_cast<uint64_t>(kExpShifter);
  return x < kExpFloor ? 0.0 : p * std::bit_cast<double>((nb + 1023) << 52);
}

// sum_i exp(double(l[i] - mx)): the log-sum-exp's sum (difference in float, as the reference).
// sum_i exp((double(l[i]) - mx) / temperature): the tempered mass.
// Every exponent must be <= 0 or NaN (mx is the row's maximum); a NaN makes the sum NaN.
#if defined(ARC_KERNELS_X86)
// tempered_masses / tempered_probs / collect_range: arc/kernels/sampling.h.
namespace avx2 {
double sum_exp_diff(const float* l, int64_t n, float mx);
double sum_exp_tempered(const float* l, int64_t n, double mx, double temperature);
void tempered_masses(const float* l, int64_t n, float mx, double inv_t, const float* edges,
                     double* above);
void tempered_probs(const float* l, int64_t n, float mx, double inv_t, double* p);
}  // namespace avx2
namespace avx512 {
double sum_exp_diff(const float* l, int64_t n, float mx);
double sum_exp_tempered(const float* l, int64_t n, double mx, double temperature);
void tempered_masses(const float* l, int64_t n, float mx, double inv_t, const float* edges,
                     double* above);
void tempered_probs(const float* l, int64_t n, float mx, double inv_t, double* p);
int64_t collect_range(const float* x, const int32_t* ids, int64_t n, float lo, float hi,
                      float* out_x, int32_t* out_id);
}  // namespace avx512
#endif

}  // namespace arc::kernels::cpu
