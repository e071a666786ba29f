// glm4moe (GLM-4.5, GLM-4.5-Air, GLM-4.6, GLM-4.7): GQA attention with q/k/v biases, per-head
// q/k norms only where the file has them (GLM-4.5 355B), NeoX RoPE over the first half of each
// head; the first n_dense_lead layers have a dense SwiGLU FFN, the rest a sigmoid-routed MoE
// (top-k by score + exp_probs_b, weights renormalised and scaled by routed_scaling_factor) plus
// a shared expert added without a gate. The FFN norm is post_attention_norm. The converter
// appends nextn_predict_layers MTP layers to block_count: validated here, skipped in the forward.
#include "model/arch/families.h"
#include "model/arch/tensor_specs.h"

namespace arc::arch {
namespace {

using namespace spec;
constexpr TensorSpec kTensors[] = {
    kTokEmbd,
    kOutputNorm,
    kOutput,
    kAttnNorm,
    kAttnQ,
    kAttnK,
    kAttnV,
    kAttnOut,
    kAttnQBias,
    kAttnKBias,
    kAttnVBias,
    kAttnQNorm,
    kAttnKNorm,
    kFfnNormPostAttn,
    kFfnGate,
    kFfnUp,
    kFfnDown,
    kFfnRouter,
    kFfnExpProbsB,
    kFfnGateExps,
    kFfnUpExps,
    kFfnDownExps,
    kFfnGateShexp,
    kFfnUpShexp,
    kFfnDownShexp,
    kNextnEhProj,
    kNextnEnorm,
    kNextnHnorm,
    kNextnEmbedTokens,
    kNextnSharedHeadHead,
    kNextnSharedHeadNorm,
};

Status read_config(const gguf::File& f, ModelConfig& cfg) {
  const std::string_view a = "glm4moe";
  if (f.find("glm4moe.rope.dimension_sections") != nullptr) {
    return unimplemented(
        "glm4moe with multi-axis RoPE (rope.dimension_sections: the vision "
        "GLM models) is not supported");
  }
  cfg.ffn = FfnKind::kMoeShared;
  cfg.qkv_bias = true;
  cfg.qk_norm = file_has_tensor(f, "blk.0.attn_q_norm.weight");
  cfg.rope_layout = kernels::RopeLayout::kSplitHalf;
  ARC_RETURN_IF_ERROR(read_int(f, a, "expert_count", true, cfg.n_expert));
  ARC_RETURN_IF_ERROR(read_int(f, a, "expert_used_count", true, cfg.n_expert_used));
  ARC_RETURN_IF_ERROR(read_int(f, a, "expert_feed_forward_length", true, cfg.n_ff_exp));
  int64_t n_shared = 0;
  ARC_RETURN_IF_ERROR(read_int(f, a, "expert_shared_count", true, n_shared));
  if (n_shared < 1) return unimplemented("glm4moe without a shared expert is not supported");
  cfg.n_ff_shexp = cfg.n_ff_exp * n_shared;  // the shared experts run as one wider FFN
  ARC_RETURN_IF_ERROR(read_int(f, a, "leading_dense_block_count", false, cfg.n_dense_lead));
  if (cfg.n_dense_lead > 0) {
    ARC_RETURN_IF_ERROR(read_int(f, a, "feed_forward_length", true, cfg.n_ff));
  }
  // The converter always writes sigmoid; llama.cpp also defaults to it.
  ARC_RETURN_IF_ERROR(read_gating(f, a, /*fallback=*/true, cfg.router_sigmoid));
  cfg.norm_topk = false;  // llama.cpp's default when expert_weights_norm is absent
  ARC_RETURN_IF_ERROR(read_bool(f, a, "expert_weights_norm", cfg.norm_topk));
  ARC_RETURN_IF_ERROR(read_float(f, a, "expert_weights_scale", cfg.expert_weights_scale));
  if (cfg.expert_weights_scale == 0.0f) cfg.expert_weights_scale = 1.0f;  // llama.cpp: 0 = none
  ARC_RETURN_IF_ERROR(read_int(f, a, "nextn_predict_layers", false, cfg.n_nextn));
  if (cfg.n_nextn >= cfg.n_layer) {
    return invalid_argument("glm4moe.nextn_predict_layers (" + std::to_string(cfg.n_nextn) +
                            ") must be below block_count (" + std::to_string(cfg.n_layer) + ")");
  }
  cfg.n_layer -= cfg.n_nextn;  // block_count counts the MTP layers too
  return ok_status();
}

void layer(LayerContext& c) {
  attention_block(c);
  if (c.cfg().dense_layer(c.layer)) {
    dense_ffn_block(c);
  } else {
    moe_ffn_block(c);
  }
}

}  // namespace

const FamilyDef& glm4moe_family() {
  static const FamilyDef def{{Family::kGlm4Moe, "glm4moe", kTensors}, read_config, layer};
  return def;
}

}  // namespace arc::arch
