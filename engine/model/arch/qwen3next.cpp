// qwen3next (Qwen3-Next-80B-A3B; the llama.cpp architecture name): a hybrid of Gated DeltaNet
// layers (linear attention with a recurrent state per sequence, arc/kernels/delta_net.h) and,
// every full_attention_interval-th layer, gated full attention (q/k RMS norms, NeoX RoPE over
// the first rope.dimension_count dims of each head, the output scaled by sigmoid of a per-head
// gate that attn_q yields with q). Every layer's FFN is a softmax top-k MoE with renormalised
// weights plus a shared expert scaled by sigmoid(ffn_gate_inp_shexp . x). The FFN norm is
// post_attention_norm. The converter adds 1 to the zero-centred RMS norm weights (all but
// ssm_norm) and stores ssm_a = -exp(A_log).
#include <string>

#include "model/arch/families.h"
#include "model/arch/tensor_specs.h"

namespace arc::arch {
namespace {

using namespace spec;
constexpr TensorSpec kTensors[] = {
    kTokEmbd,     kOutputNorm,   kOutput,        kAttnNorm,        kAttnQGated,
    kAttnKHybrid, kAttnVHybrid,  kAttnOutHybrid, kAttnQNormHybrid, kAttnKNormHybrid,
    kSsmQkv,      kSsmGate,      kSsmConv,       kSsmDtBias,       kSsmA,
    kSsmBa,       kSsmNorm,      kSsmOut,        kFfnNormPostAttn, kFfnRouter,
    kFfnGateExps, kFfnUpExps,    kFfnDownExps,   kFfnShexpGate,    kFfnGateShexp,
    kFfnUpShexp,  kFfnDownShexp,
};

Status read_config(const gguf::File& f, ModelConfig& cfg) {
  const std::string_view a = "qwen3next";
  if (file_has_tensor(f, "blk.0.ssm_in.weight") && !file_has_tensor(f, "blk.0.attn_qkv.weight")) {
    return unimplemented(
        "this qwen3next file has the fused ssm_in projection of older converters; convert it "
        "again with a current llama.cpp convert_hf_to_gguf.py (it writes attn_qkv and "
        "attn_gate)");
  }
  cfg.ffn = FfnKind::kMoeShared;
  cfg.norm_topk = true;
  cfg.qk_norm = true;
  cfg.attn_out_gate = true;
  cfg.rope_layout = kernels::RopeLayout::kSplitHalf;
  ARC_RETURN_IF_ERROR(read_int(f, a, "expert_count", true, cfg.n_expert));
  ARC_RETURN_IF_ERROR(read_int(f, a, "expert_used_count", true, cfg.n_expert_used));
  ARC_RETURN_IF_ERROR(read_int(f, a, "expert_feed_forward_length", true, cfg.n_ff_exp));
  ARC_RETURN_IF_ERROR(read_int(f, a, "expert_shared_feed_forward_length", true, cfg.n_ff_shexp));
  ARC_RETURN_IF_ERROR(read_gating(f, a, /*fallback=*/false, cfg.router_sigmoid));
  if (cfg.router_sigmoid) return unimplemented("qwen3next with sigmoid expert gating");
  cfg.full_attn_interval = 4;
  ARC_RETURN_IF_ERROR(read_int(f, a, "full_attention_interval", false, cfg.full_attn_interval));
  if (cfg.full_attn_interval < 1) {
    return invalid_argument("qwen3next.full_attention_interval must be at least 1");
  }
  if (file_has_tensor(f,
                      "blk." + std::to_string(cfg.full_attn_interval - 1) + ".attn_qkv.weight")) {
    return unimplemented(
        "this qwen3next file fuses the full-attention q/k/v into attn_qkv; files with separate "
        "attn_q, attn_k and attn_v are supported");
  }
  if (f.find("qwen3next.attention.recurrent_layers") != nullptr) {
    return unimplemented(
        "qwen3next.attention.recurrent_layers (an explicit layer pattern) is not supported; "
        "full_attention_interval is");
  }
  int64_t inner = 0;
  ARC_RETURN_IF_ERROR(read_int(f, a, "ssm.conv_kernel", true, cfg.ssm_conv_kernel));
  ARC_RETURN_IF_ERROR(read_int(f, a, "ssm.inner_size", true, inner));
  ARC_RETURN_IF_ERROR(read_int(f, a, "ssm.state_size", true, cfg.ssm_head_k_dim));
  ARC_RETURN_IF_ERROR(read_int(f, a, "ssm.time_step_rank", true, cfg.ssm_v_heads));
  ARC_RETURN_IF_ERROR(read_int(f, a, "ssm.group_count", true, cfg.ssm_k_heads));
  if (cfg.ssm_v_heads <= 0 || inner % cfg.ssm_v_heads != 0) {
    return invalid_argument("qwen3next.ssm.inner_size must be a multiple of ssm.time_step_rank");
  }
  cfg.ssm_head_v_dim = inner / cfg.ssm_v_heads;
  return ok_status();
}

void layer(LayerContext& c) {
  if (c.cfg().layer_recurrent(c.layer)) {
    delta_net_block(c);
  } else {
    attention_block(c);
  }
  moe_ffn_block(c);
}

}  // namespace

const FamilyDef& qwen3next_family() {
  static const FamilyDef def{{Family::kQwen3Next, "qwen3next", kTensors}, read_config, layer};
  return def;
}

}  // namespace arc::arch
