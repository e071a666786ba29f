// Whole-row helpers of the host sampler (engine/sched/sampler.cpp): the maximum, tempered masses
// above a few thresholds, per-token tempered probabilities, and the compaction of a value range.
// With them the sampler finds the top-p nucleus, the min-p cut and the draw in a descending walk
// over bands of values, sorting only the few tokens of the band where a decision falls, instead
// of sorting the whole vocabulary (152k entries: 10 ms a token).
//
// A token's tempered probability is p = exp((double(x) - mx) * inv_t) in double, 0 for NaN, -inf
// and exponents below -708 (cpu/exp_sum.h's exp, within a few ulp of libm's). Every ISA level
// computes the same p and masses up to rounding (summation order, fused multiply-adds).
#pragma once

#include <cstdint>

namespace arc::kernels {

// Thresholds per tempered_masses call.
inline constexpr int kMassEdges = 8;

// Largest value with NaN as -inf (-inf when every value is -inf or NaN). x: [n]
float row_max(const float* x, int64_t n);

// Masses of a row above each edge. x: [n] values, mx: the row's maximum (every exponent <= 0),
// edges: [kMassEdges] thresholds (any order; +inf for an unused one).
// above: [kMassEdges + 1]: above[j] = sum of p over x >= edges[j]; above[kMassEdges] = sum of p
// over the whole row.
void tempered_masses(const float* x, int64_t n, float mx, double inv_t, const float* edges,
                     double* above);

// p of every value. x: [n], p: [n]
void tempered_probs(const float* x, int64_t n, float mx, double inv_t, double* p);

// The entries with lo <= x < hi (NaN never), in row order: their values and ids (ids[i], or i
// when ids is null). x, ids: [n]; out_x, out_id: room for n + 16 (whole vectors are stored).
// Returns how many.
int64_t collect_range(const float* x, const int32_t* ids, int64_t n, float lo, float hi,
                      float* out_x, int32_t* out_id);

// log(sum exp(x)) of a row as the sampler's logprobs define it: max, differences in float, the
// sum in double (a NaN makes it NaN). x: [n]
double log_sum_exp(const float* x, int64_t n);

namespace cpu {
enum class IsaLevel : int;  // arc/kernels/cpu_dispatch.h
// The same at one instruction-set level (tests); false when the machine lacks it.
bool tempered_masses_at(IsaLevel level, const float* x, int64_t n, float mx, double inv_t,
                        const float* edges, double* above);
bool tempered_probs_at(IsaLevel level, const float* x, int64_t n, float mx, double inv_t,
                       double* p);
bool collect_range_at(IsaLevel level, const float* x, const int32_t* ids, int64_t n, float lo,
                      float hi, float* out_x, int32_t* out_id, int64_t* count);
}  // namespace cpu

}  // namespace arc::kernels
