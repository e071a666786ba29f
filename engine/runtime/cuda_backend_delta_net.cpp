// The CUDA backend's Gated DeltaNet ops (qwen3next's linear-attention layers): each enqueues one
// kernel of kernels/cuda/delta_net.cu on the backend's stream through the common prologue and
// epilogue. None uses scratch.
#include <string>

#include "runtime/cuda_backend.h"

namespace arc {

namespace kc = kernels::cuda;

void CudaBackend::delta_net_conv(const kernels::DeltaConvArgs& a) {
  if (!prepare({}, a.n_tokens * a.channels)) return;
  finish("delta_net_conv", kc::delta_net_conv(ctx(), a),
         "conv kernel " + std::to_string(a.kernel) + " (at most 8) over " +
             std::to_string(a.channels) + " channels");
}

void CudaBackend::gated_delta_rule(const kernels::GatedDeltaRuleArgs& a) {
  if (!prepare({}, a.n_tokens * a.n_v_heads)) return;
  finish("gated_delta_rule", kc::gated_delta_rule(ctx(), a),
         "head_k_dim " + std::to_string(a.head_k_dim) + " (at most 128), head_v_dim " +
             std::to_string(a.head_v_dim) + " (at most 256), " + std::to_string(a.n_k_heads) +
             " k heads, " + std::to_string(a.n_v_heads) + " v heads");
}

void CudaBackend::gated_rms_norm(const kernels::GatedRmsNormArgs& a) {
  if (!prepare({}, a.n_rows * a.d)) return;
  finish("gated_rms_norm", kc::gated_rms_norm(ctx(), a),
         std::to_string(a.n_rows) + " rows of " + std::to_string(a.d));
}

void CudaBackend::delta_state_copy(const kernels::DeltaStateCopyArgs& a) {
  if (!prepare({}, a.n)) return;
  finish("delta_state_copy", kc::delta_state_copy(ctx(), a),
         std::to_string(a.n) + " state slots (at most 65535 per call)");
}

void CudaBackend::sigmoid_mul(const kernels::SigmoidMulArgs& a) {
  if (!prepare({}, a.n_rows * a.d)) return;
  finish("sigmoid_mul", kc::sigmoid_mul(ctx(), a),
         std::to_string(a.n_rows) + " rows of " + std::to_string(a.d));
}

}  // namespace arc
