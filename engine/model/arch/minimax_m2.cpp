// minimax-m2 (MiniMax-M2): GQA attention whose q and k are RMS-normed over the whole projected
// vector (all heads at once: attn_q_norm [q_dim], attn_k_norm [kv_dim]) before NeoX RoPE over
// the first rot_dim of each head; every layer's FFN is a sigmoid-routed MoE (top-k by score +
// exp_probs_b, weights renormalised), no shared expert.
#include "model/arch/families.h"
#include "model/arch/tensor_specs.h"

namespace arc::arch {
namespace {

using namespace spec;
constexpr TensorSpec kTensors[] = {
    kTokEmbd,      kOutputNorm,  kOutput,        kAttnNorm,      kAttnQ,   kAttnK,
    kAttnV,        kAttnOut,     kAttnQNormFull, kAttnKNormFull, kFfnNorm, kFfnRouter,
    kFfnExpProbsB, kFfnGateExps, kFfnUpExps,     kFfnDownExps,
};

Status read_config(const gguf::File& f, ModelConfig& cfg) {
  const std::string_view a = "minimax-m2";
  cfg.ffn = FfnKind::kMoe;
  cfg.qk_norm = true;
  cfg.qk_norm_full = true;
  cfg.norm_topk = true;  // llama.cpp and transformers always renormalise the top k
  cfg.rope_layout = kernels::RopeLayout::kSplitHalf;
  ARC_RETURN_IF_ERROR(read_int(f, a, "expert_count", true, cfg.n_expert));
  ARC_RETURN_IF_ERROR(read_int(f, a, "expert_used_count", true, cfg.n_expert_used));
  ARC_RETURN_IF_ERROR(read_int(f, a, "expert_feed_forward_length", true, cfg.n_ff_exp));
  // The converter writes sigmoid (config scoring_func); transformers' router is sigmoid only.
  ARC_RETURN_IF_ERROR(read_gating(f, a, /*fallback=*/true, cfg.router_sigmoid));
  if (!cfg.router_sigmoid) {
    return unimplemented("minimax-m2 with softmax expert gating is not supported");
  }
  // No routed scaling: llama.cpp does not read expert_weights_scale for this family.
  return ok_status();
}

void layer(LayerContext& c) {
  attention_block(c);
  moe_ffn_block(c);
}

}  // namespace

const FamilyDef& minimax_m2_family() {
  static const FamilyDef def{{Family::kMiniMaxM2, "minimax-m2", kTensors}, read_config, layer};
  return def;
}

}  // namespace arc::arch
