// llama: Llama 2/3 dense, and Mixtral-style MoE when llama.expert_count > 0 (merged
// ffn_*_exps tensors; feed_forward_length is then the per-expert size). Interleaved RoPE (the
// GGUF converter permutes q/k for it), optional Llama 3 rope_freqs and q/k/v biases.
#include "model/arch/families.h"
#include "model/arch/tensor_specs.h"

namespace arc::arch {
namespace {

using namespace spec;
constexpr TensorSpec kTensors[] = {
    kTokEmbd, kOutputNorm, kOutput,    kRopeFreqs,   kAttnNorm,  kAttnQ,       kAttnK,
    kAttnV,   kAttnOut,    kAttnQBias, kAttnKBias,   kAttnVBias, kFfnNorm,     kFfnGate,
    kFfnUp,   kFfnDown,    kFfnRouter, kFfnGateExps, kFfnUpExps, kFfnDownExps,
};

Status read_config(const gguf::File& f, ModelConfig& cfg) {
  const std::string_view a = "llama";
  cfg.rope_layout = kernels::RopeLayout::kInterleaved;
  cfg.norm_topk = true;  // Mixtral: softmax over the selected experts' logits
  cfg.qkv_bias = file_has_tensor(f, "blk.0.attn_q.bias");
  int64_t n_ff = 0;
  ARC_RETURN_IF_ERROR(read_int(f, a, "feed_forward_length", true, n_ff));
  ARC_RETURN_IF_ERROR(read_int(f, a, "expert_count", false, cfg.n_expert));
  if (cfg.n_expert > 0) {
    cfg.ffn = FfnKind::kMoe;
    cfg.n_ff_exp = n_ff;
    ARC_RETURN_IF_ERROR(read_int(f, a, "expert_used_count", true, cfg.n_expert_used));
  } else {
    cfg.ffn = FfnKind::kDense;
    cfg.n_ff = n_ff;
  }
  return ok_status();
}

void layer(LayerContext& c) {
  attention_block(c);
  if (c.cfg().is_moe()) {
    moe_ffn_block(c);
  } else {
    dense_ffn_block(c);
  }
}

}  // namespace

const FamilyDef& llama_family() {
  static const FamilyDef def{{Family::kLlama, "llama", kTensors}, read_config, layer};
  return def;
}

}  // namespace arc::arch
