// deepseek2 (DeepSeek-V3, V3.1, V3.2 run densely, Kimi-K2; the llama.cpp architecture name):
// multi-head latent attention (q through a LoRA q_a -> norm -> q_b, or attn_q without one; keys
// and values from a normalised per-token latent, decoupled interleaved RoPE on a shared rope key,
// YaRN with DeepSeek's mscale folded into the softmax scale), then the first n_dense_lead layers
// a dense SwiGLU FFN, the rest a sigmoid-routed MoE (score + exp_probs_b selection, optionally
// group-limited; weights renormalised when expert_weights_norm, times expert_weights_scale) plus
// the shared experts added without a gate. The converter writes the MLA geometry twice:
// key_length/value_length as the cache sees it (576/512) and key_length_mla/value_length_mla as
// the heads do (192/128); older files have only the head sizes in key_length/value_length.
#include <cmath>

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
    kAttnQA,
    kAttnQANorm,
    kAttnQB,
    kAttnQNoLora,
    kAttnKvAMqa,
    kAttnKvANorm,
    kAttnKB,
    kAttnVB,
    kAttnOutMla,
    kFfnNorm,
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
  const std::string_view a = "deepseek2";
  if (file_has_tensor(f, "blk.0.attn_kv_b.weight") &&
      !file_has_tensor(f, "blk.0.attn_k_b.weight")) {
    return unimplemented(
        "this deepseek2 file has the single attn_kv_b projection of older converters; convert it "
        "again with a current llama.cpp convert_hf_to_gguf.py (it writes attn_k_b and attn_v_b)");
  }
  cfg.ffn = FfnKind::kMoeShared;
  cfg.rope_layout = kernels::RopeLayout::kInterleaved;
  ARC_RETURN_IF_ERROR(read_int(f, a, "attention.q_lora_rank", false, cfg.q_lora_rank));
  ARC_RETURN_IF_ERROR(read_int(f, a, "attention.kv_lora_rank", true, cfg.kv_lora_rank));
  if (cfg.kv_lora_rank <= 0)
    return invalid_argument("deepseek2.attention.kv_lora_rank must be > 0");
  int64_t k_mla = 0, v_len = 0;
  ARC_RETURN_IF_ERROR(read_int(f, a, "attention.key_length_mla", false, k_mla));
  ARC_RETURN_IF_ERROR(read_int(f, a, "attention.value_length_mla", false, v_len));
  if (k_mla > 0) {
    cfg.head_dim = k_mla;
  }
  if (v_len == 0) {  // older files: value_length is the head's
    v_len = cfg.head_dim;
    ARC_RETURN_IF_ERROR(read_int(f, a, "attention.value_length", false, v_len));
  }
  cfg.v_head_dim = v_len;
  cfg.n_kv_head = 1;  // one latent (and rope key) per token, shared by every head
  ARC_RETURN_IF_ERROR(read_int(f, a, "expert_count", true, cfg.n_expert));
  ARC_RETURN_IF_ERROR(read_int(f, a, "expert_used_count", true, cfg.n_expert_used));
  ARC_RETURN_IF_ERROR(read_int(f, a, "expert_feed_forward_length", true, cfg.n_ff_exp));
  int64_t n_shared = 0;
  ARC_RETURN_IF_ERROR(read_int(f, a, "expert_shared_count", true, n_shared));
  if (n_shared < 1) return unimplemented("deepseek2 without a shared expert is not supported");
  cfg.n_ff_shexp = cfg.n_ff_exp * n_shared;  // the shared experts run as one wider FFN
  ARC_RETURN_IF_ERROR(read_int(f, a, "leading_dense_block_count", false, cfg.n_dense_lead));
  if (cfg.n_dense_lead > 0) {
    ARC_RETURN_IF_ERROR(read_int(f, a, "feed_forward_length", true, cfg.n_ff));
  }
  // llama.cpp defaults to softmax for the DeepSeek-V2 files that predate the key.
  ARC_RETURN_IF_ERROR(read_gating(f, a, /*fallback=*/false, cfg.router_sigmoid));
  if (!cfg.router_sigmoid) {
    return unimplemented(
        "deepseek2 with softmax expert gating (DeepSeek-V2/V2.5) is not supported; V3, V3.1, "
        "V3.2 and Kimi-K2 (sigmoid gating) are");
  }
  cfg.norm_topk = false;
  ARC_RETURN_IF_ERROR(read_bool(f, a, "expert_weights_norm", cfg.norm_topk));
  ARC_RETURN_IF_ERROR(read_float(f, a, "expert_weights_scale", cfg.expert_weights_scale));
  if (cfg.expert_weights_scale == 0.0f) cfg.expert_weights_scale = 1.0f;
  ARC_RETURN_IF_ERROR(read_int(f, a, "expert_group_count", false, cfg.n_expert_group));
  ARC_RETURN_IF_ERROR(read_int(f, a, "expert_group_used_count", false, cfg.n_expert_group_used));
  ARC_RETURN_IF_ERROR(read_int(f, a, "nextn_predict_layers", false, cfg.n_nextn));
  if (cfg.n_nextn >= cfg.n_layer) {
    return invalid_argument("deepseek2.nextn_predict_layers must be below block_count");
  }
  cfg.n_layer -= cfg.n_nextn;
  // YaRN as DeepSeek defines it (transformers' DeepseekV3 yarn): the rotation keeps magnitude 1
  // (mscale / mscale_all_dim, equal in the published configs) and the softmax scale takes
  // mscale^2 with mscale = 1 + yarn_log_multiplier * ln(factor), yarn_log_multiplier being
  // 0.1 * mscale_all_dim. The kernels scale the rotation by attn_factor * (1 + 0.1 ln factor):
  // attn_factor cancels that.
  double scale = 1.0 / std::sqrt(static_cast<double>(cfg.head_dim));
  if (cfg.rope_ext_factor > 0.0f) {
    if (cfg.rope_attn_factor != 1.0f) {
      return unimplemented("deepseek2 with a rope.scaling.attn_factor other than 1");
    }
    const double ln_factor = std::log(1.0 / static_cast<double>(cfg.rope_freq_scale));
    const double mscale = 1.0 + static_cast<double>(cfg.yarn_log_mul) * ln_factor;
    scale *= mscale * mscale;
    cfg.rope_attn_factor = static_cast<float>(1.0 / (1.0 + 0.1 * ln_factor));
  }
  cfg.attn_scale = static_cast<float>(scale);
  return ok_status();
}

void layer(LayerContext& c) {
  mla_attention_block(c);
  if (c.cfg().dense_layer(c.layer)) {
    dense_ffn_block(c);
  } else {
    moe_ffn_block(c);
  }
}

}  // namespace

const FamilyDef& deepseek2_family() {
  static const FamilyDef def{{Family::kDeepSeek2, "deepseek2", kTensors}, read_config, layer};
  return def;
}

}  // namespace arc::arch
