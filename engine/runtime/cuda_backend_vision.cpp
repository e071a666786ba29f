// The CUDA backend's vision encoder ops: each enqueues one kernel of kernels/cuda (vision_ops.cu,
// dense_attention.cu) on the backend's stream through the common prologue and epilogue. None of
// them uses scratch.
#include <string>

#include "runtime/cuda_backend.h"

namespace arc {

namespace kc = kernels::cuda;

void CudaBackend::layer_norm(const float* x, const float* w, const float* b, float* y,
                             int64_t n_rows, int64_t d, float eps) {
  if (!prepare({}, n_rows * d)) return;
  finish("layer_norm", kc::layer_norm(ctx(), x, w, b, y, n_rows, d, eps),
         std::to_string(n_rows) + " rows of " + std::to_string(d));
}

void CudaBackend::gelu(const float* x, float* y, int64_t n) {
  if (!prepare({}, n)) return;
  finish("gelu", kc::gelu(ctx(), x, y, n), std::to_string(n) + " values");
}

void CudaBackend::gelu_erf(const float* x, float* y, int64_t n) {
  if (!prepare({}, n)) return;
  finish("gelu_erf", kc::gelu_erf(ctx(), x, y, n), std::to_string(n) + " values");
}

void CudaBackend::rope_table(const kernels::RopeTableArgs& a) {
  if (!prepare({}, a.n_tokens * a.n_heads)) return;
  finish("rope_table", kc::rope_table(ctx(), a),
         "head_dim " + std::to_string(a.head_dim) + ", " + std::to_string(a.n_heads) + " heads");
}

void CudaBackend::dense_attention(const kernels::DenseAttentionArgs& a) {
  if (!prepare({}, a.n_tokens * a.n_head)) return;
  finish("dense_attention", kc::dense_attention(ctx(), a),
         "head_dim " + std::to_string(a.head_dim) + " (at most 256), " + std::to_string(a.n_head) +
             " heads, " + std::to_string(a.n_tokens) + " tokens");
}

}  // namespace arc
