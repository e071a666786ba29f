// gpt-oss (gpt-oss-20b, gpt-oss-120b): GQA attention with q/k/v/o biases, NeoX RoPE with YaRN,
// per-head attention sinks, sliding-window (attention.sliding_window, 128) and full-attention
// layers alternating (the even layers slide, as llama.cpp's set_swa_pattern(2) and transformers'
// layer_types); the FFN norm is post_attention_norm; every FFN is a top-k MoE routed by softmax
// over the selected logits (router with a bias), experts with biases and the clamped SwiGLU
// (alpha 1.702, limit 7). Experts usually come in MXFP4.
#include "model/arch/families.h"
#include "model/arch/tensor_specs.h"

namespace arc::arch {
namespace {

using namespace spec;
constexpr TensorSpec kTensors[] = {
    kTokEmbd,     kOutputNorm,      kOutput,        kAttnNorm,        kAttnQ,       kAttnK,
    kAttnV,       kAttnOut,         kAttnQBias,     kAttnKBias,       kAttnVBias,   kAttnOutBias,
    kAttnSinks,   kPostAttnNorm,    kFfnRouter,     kFfnRouterBias,   kFfnGateExps, kFfnUpExps,
    kFfnDownExps, kFfnGateExpsBias, kFfnUpExpsBias, kFfnDownExpsBias,
};

Status read_config(const gguf::File& f, ModelConfig& cfg) {
  const std::string_view a = "gpt-oss";
  cfg.ffn = FfnKind::kMoe;
  cfg.qkv_bias = true;
  cfg.attn_out_bias = true;
  cfg.attn_sinks = true;
  cfg.router_bias = true;
  cfg.expert_bias = true;
  cfg.swiglu_oai = true;
  // Softmax over the k selected logits equals softmax over all, then renormalised.
  cfg.norm_topk = true;
  cfg.rope_layout = kernels::RopeLayout::kSplitHalf;
  ARC_RETURN_IF_ERROR(read_int(f, a, "expert_count", true, cfg.n_expert));
  ARC_RETURN_IF_ERROR(read_int(f, a, "expert_used_count", true, cfg.n_expert_used));
  ARC_RETURN_IF_ERROR(read_int(f, a, "expert_feed_forward_length", true, cfg.n_ff_exp));
  ARC_RETURN_IF_ERROR(read_int(f, a, "attention.sliding_window", true, cfg.sliding_window));
  cfg.swa_period = 2;
  ARC_RETURN_IF_ERROR(read_int(f, a, "attention.sliding_window_pattern", false, cfg.swa_period));
  // llama.cpp lets the sliding layers have their own RoPE base; the published models do not.
  if (const gguf::Value* v = f.find(std::string(a) + ".rope.freq_base_swa"); v != nullptr) {
    auto base = v->as_float();
    if (!base || static_cast<float>(*base) != cfg.rope_theta) {
      return unimplemented("gpt-oss with a rope.freq_base_swa other than rope.freq_base");
    }
  }
  return ok_status();
}

void layer(LayerContext& c) {
  attention_block(c);
  moe_ffn_block(c);
}

}  // namespace

const FamilyDef& gpt_oss_family() {
  static const FamilyDef def{{Family::kGptOss, "gpt-oss", kTensors}, read_config, layer};
  return def;
}

}  // namespace arc::arch
