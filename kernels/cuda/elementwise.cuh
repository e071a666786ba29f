// Row-wise and elementwise F32 ops: rms_norm (and its two-pass form sum_squares + rms_norm_sumsq),
// add, add_bias, swiglu, add_sigmoid_gated, gather.
// Plus two helpers used by moe.cu. All pointers are device memory; shapes as in cuda_ops.h.
#pragma once

#include "cuda/common.cuh"

namespace arc::kernels::cuda::detail {

// y[i] = silu(gate[i]) * up[i] on rows: gate, up, y: [n_rows, d] (y may alias gate).
void launch_swiglu(Stream s, const float* gate, const float* up, float* y, int64_t n);

// The expert activation with biases (gpt-oss) on the rows of n_pairs (token, expert) pairs:
// g[row] = act(g[row] + gate_bias[e], u[row] + up_bias[e]), e = ids[p], row = inv[p] or p
// (pairs with an out-of-range id or row -1 are skipped). g, u: [*, n_ff].
struct ExpertActArgs {
  float* g = nullptr;
  const float* u = nullptr;
  const int32_t* ids = nullptr;  // [n_pairs]
  const int32_t* inv = nullptr;  // [n_pairs] or null
  int64_t n_pairs = 0;
  int64_t n_ff = 0;
  int64_t n_expert = 0;
  const float* gate_bias = nullptr;  // [n_expert, n_ff] or null
  const float* up_bias = nullptr;    // [n_expert, n_ff] or null
  bool oai = false;                  // clamped SwiGLU (MoeActivation::kSwiGluOai), else SwiGLU
  float alpha = 1.702f;
  float limit = 7.0f;
};
void launch_expert_act(Stream s, const ExpertActArgs& a);

// y[t, :] (+)= sum_j weights[t, j] * (src[row(t, j), :] + down_bias[e]); row(t, j) =
// inv[t * k + j] or t * k + j; down_bias: [n_expert, d] or null.
// src: [*, d]; y: [n_tokens, d]; weights: [n_tokens, k].
struct CombineArgs {
  const float* src = nullptr;
  const int32_t* inv = nullptr;
  const float* weights = nullptr;
  const int32_t* ids = nullptr;  // [n_tokens, k]: pairs with an out-of-range id are skipped
  int64_t n_expert = 0;
  int64_t n_tokens = 0;
  int64_t k = 0;
  int64_t d = 0;
  const float* down_bias = nullptr;
  float* y = nullptr;
  bool accumulate = false;
};
void launch_combine(Stream s, const CombineArgs& a);

}  // namespace arc::kernels::cuda::detail
