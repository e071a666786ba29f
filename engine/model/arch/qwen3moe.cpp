// qwen3moe (Qwen3-30B-A3B, Qwen3-235B-A22B): GQA attention with per-head q/k RMS norms and NeoX
// RoPE; every layer's FFN is a softmax-routed top-k MoE with renormalised weights, no shared
// expert.
#include "model/arch/families.h"
#include "model/arch/tensor_specs.h"

namespace arc::arch {
namespace {

using namespace spec;
constexpr TensorSpec kTensors[] = {
    kTokEmbd,   kOutputNorm, kOutput,  kAttnNorm,  kAttnQ,       kAttnK,     kAttnV,       kAttnOut,
    kAttnQNorm, kAttnKNorm,  kFfnNorm, kFfnRouter, kFfnGateExps, kFfnUpExps, kFfnDownExps,
};

Status read_config(const gguf::File& f, ModelConfig& cfg) {
  const std::string_view a = "qwen3moe";
  cfg.ffn = FfnKind::kMoe;
  cfg.qk_norm = true;
  cfg.norm_topk = true;
  cfg.rope_layout = kernels::RopeLayout::kSplitHalf;
  ARC_RETURN_IF_ERROR(read_int(f, a, "expert_count", true, cfg.n_expert));
  ARC_RETURN_IF_ERROR(read_int(f, a, "expert_used_count", true, cfg.n_expert_used));
  ARC_RETURN_IF_ERROR(read_int(f, a, "expert_feed_forward_length", true, cfg.n_ff_exp));
  return ok_status();
}

void layer(LayerContext& c) {
  attention_block(c);
  moe_ffn_block(c);
}

}  // namespace

const FamilyDef& qwen3moe_family() {
  static const FamilyDef def{{Family::kQwen3Moe, "qwen3moe", kTensors}, read_config, layer};
  return def;
}

}  // namespace arc::arch
