// The CUDA backend's multi-head latent attention ops (deepseek2): each enqueues one kernel of
// kernels/cuda/mla.cu on the backend's stream through the common prologue and epilogue. Neither
// uses scratch.
#include <string>

#include "runtime/cuda_backend.h"

namespace arc {

namespace kc = kernels::cuda;

void CudaBackend::mla_kv_store(const kernels::MlaKvStoreArgs& a) {
  if (!prepare({}, a.n_tokens)) return;
  finish("mla_kv_store", kc::mla_kv_store(ctx(), a),
         std::string(dtype_name(a.kv_type)) + " latent cache (F16 or F32)");
}

void CudaBackend::mla_attention(const kernels::MlaAttentionArgs& a) {
  if (!prepare({}, a.n_tokens * a.n_head)) return;
  finish("mla_attention", kc::mla_attention(ctx(), a),
         std::string(dtype_name(a.kv_type)) + " latent cache, rank " +
             std::to_string(a.kv_lora_rank) + " (at most 512), rope " + std::to_string(a.rope_dim) +
             " (at most 64)");
}

void CudaBackend::mla_plain_attention(const kernels::MlaPlainAttentionArgs& a) {
  if (!prepare({}, a.n_tokens * a.n_head)) return;
  finish("mla_plain_attention", kc::mla_plain_attention(ctx(), a),
         "no-rope key " + std::to_string(a.nope_dim) + " and value " + std::to_string(a.v_dim) +
             " (at most 256), rope " + std::to_string(a.rope_dim) + " (at most 64), " +
             std::to_string(a.n_tokens) + " tokens (at most 65535)");
}

}  // namespace arc
