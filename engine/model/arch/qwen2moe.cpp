// qwen2moe (Qwen1.5-MoE, Qwen2-57B-A14B): attention with q/k/v biases and NeoX RoPE; the FFN is
// a softmax top-k MoE whose weights are NOT renormalised, plus a shared expert scaled by
// sigmoid(ffn_gate_inp_shexp . x).
#include "model/arch/families.h"
#include "model/arch/tensor_specs.h"

namespace arc::arch {
namespace {

using namespace spec;
constexpr TensorSpec kTensors[] = {
    kTokEmbd,     kOutputNorm,   kOutput,       kAttnNorm,    kAttnQ,
    kAttnK,       kAttnV,        kAttnOut,      kAttnQBias,   kAttnKBias,
    kAttnVBias,   kFfnNorm,      kFfnRouter,    kFfnGateExps, kFfnUpExps,
    kFfnDownExps, kFfnShexpGate, kFfnGateShexp, kFfnUpShexp,  kFfnDownShexp,
};

Status read_config(const gguf::File& f, ModelConfig& cfg) {
  const std::string_view a = "qwen2moe";
  cfg.ffn = FfnKind::kMoeShared;
  cfg.qkv_bias = true;
  cfg.norm_topk = false;
  cfg.rope_layout = kernels::RopeLayout::kSplitHalf;
  ARC_RETURN_IF_ERROR(read_int(f, a, "expert_count", true, cfg.n_expert));
  ARC_RETURN_IF_ERROR(read_int(f, a, "expert_used_count", true, cfg.n_expert_used));
  ARC_RETURN_IF_ERROR(read_int(f, a, "expert_feed_forward_length", true, cfg.n_ff_exp));
  ARC_RETURN_IF_ERROR(read_int(f, a, "expert_shared_feed_forward_length", true, cfg.n_ff_shexp));
  return ok_status();
}

void layer(LayerContext& c) {
  attention_block(c);
  moe_ffn_block(c);
}

}  // namespace

const FamilyDef& qwen2moe_family() {
  static const FamilyDef def{{Family::kQwen2Moe, "qwen2moe", kTensors}, read_config, layer};
  return def;
}

}  // namespace arc::arch
