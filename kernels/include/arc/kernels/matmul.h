// Matrix products with weights in any supported format and F32 activations:
//   y[t, o] (+)= sum_i w[o, i] * x[t, i]
// n_tokens == 1 is the decode (matrix-vector) case; larger n_tokens is prefill (matrix-matrix).
#pragma once

#include <cstddef>
#include <cstdint>
#if __cplusplus >= 202002L
#include <span>
#endif

#include "arc/kernels/dtype.h"
#include "arc/kernels/parallel.h"
#include "arc/kernels/workspace.h"

namespace arc::kernels {

struct MatmulArgs {
  const void* w = nullptr;  // [n_out, n_in] in w_type; row o starts at w + o * w_row_bytes
  DType w_type = DType::F32;
  int64_t n_out = 0;
  int64_t n_in = 0;          // multiple of w_type's block size
  size_t w_row_bytes = 0;    // 0: dtype_row_bytes(w_type, n_in)
  const float* x = nullptr;  // [n_tokens, n_in], row stride x_stride floats
  int64_t n_tokens = 1;
  int64_t x_stride = 0;     // 0: n_in
  float* y = nullptr;       // [n_tokens, n_out], row stride y_stride floats
  int64_t y_stride = 0;     // 0: n_out
  bool accumulate = false;  // y += product instead of y = product
};

// Best path for this CPU (runtime dispatch). Returns false for an unsupported w_type.
bool matmul(const MatmulArgs& args, Parallel* pool);
// The same with scratch memory kept in `ws` between calls (no allocation per call).
bool matmul(const MatmulArgs& args, Parallel* pool, Workspace* ws);
// Several products of the same activations (same x, n_in, n_tokens, x_stride), e.g. attention's
// Q, K and V: one activation quantization and, for a few tokens (decode), one parallel loop over
// all products' rows. Other inputs run as separate matmul() calls. Results equal matmul()'s.
// (C++20 only: the CUDA sources, compiled as C++17, include this header for MatmulArgs.)
#if __cplusplus >= 202002L
bool matmul_multi(std::span<const MatmulArgs> args, Parallel* pool, Workspace* ws);
// Independent products, each of its own activations (MLA's per-head k_b / v_b products): for a
// few tokens (decode) one parallel loop over all products' rows; more tokens run as separate
// matmul() calls. Results equal matmul()'s and do not depend on the thread count.
bool matmul_batch(std::span<const MatmulArgs> args, Parallel* pool, Workspace* ws);
#endif

namespace ref {
// Scalar oracle: dequantizes each weight row and accumulates in double.
bool matmul(const MatmulArgs& args);
}  // namespace ref

}  // namespace arc::kernels
