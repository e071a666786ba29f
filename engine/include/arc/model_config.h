// Model hyperparameters read from GGUF metadata, and the families the engine runs.
//
// Configuration is data: a family is an enum with explicit values; the per-family tables of
// metadata keys and tensors live in arc/model_arch.h and engine/model/arch/.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "arc/kernels/ops.h"
#include "arc/status.h"

namespace arc {

namespace gguf {
class File;
}

// Serialized in logs and tests by name; values never reused.
enum class Family : int {
  kLlama = 0,       // dense Llama, or Mixtral-style experts (ffn_*_exps) when expert_count > 0
  kQwen3 = 1,       // dense Qwen3 with per-head q/k RMS norms
  kQwen2Moe = 2,    // Qwen1.5/Qwen2 MoE: q/k/v biases, a shared expert with a sigmoid gate
  kQwen3Moe = 3,    // Qwen3 MoE: q/k norms, routed experts only
  kQwen3VlMoe = 4,  // Qwen3-VL MoE: qwen3moe with interleaved multi-axis RoPE and deepstack inputs
  kGlm4Moe = 5,     // GLM-4.5/4.6/4.7: leading dense layers, sigmoid routing, a shared expert
  kMiniMaxM2 = 6,   // MiniMax-M2: sigmoid routing, q/k RMS norms over the whole q and k vectors
  kGptOss = 7,      // gpt-oss: attention sinks, alternating sliding-window layers, biases, YaRN
  kDeepSeek2 = 8,   // DeepSeek-V2/V3/V3.1/V3.2, Kimi-K2: multi-head latent attention, group routing
  kQwen3Next = 9,   // Qwen3-Next: Gated DeltaNet layers between gated full-attention layers
};

std::string_view family_name(Family f);  // the GGUF general.architecture string
std::optional<Family> family_from_name(std::string_view arch);

// What the feed-forward part of every layer is.
enum class FfnKind : int {
  kDense = 0,      // ffn_gate / ffn_up / ffn_down
  kMoe = 1,        // router + routed experts
  kMoeShared = 2,  // router + routed experts + a shared expert (scaled by sigmoid(gate_shexp . x)
                   // when the family has ffn_gate_inp_shexp: qwen2moe; plainly added: glm4moe)
};

struct ModelConfig {
  Family family = Family::kLlama;
  FfnKind ffn = FfnKind::kDense;

  int64_t n_layer = 0;
  int64_t n_embd = 0;  // hidden size
  int64_t n_vocab = 0;
  int64_t n_head = 0;
  int64_t n_kv_head = 0;
  int64_t head_dim = 0;  // key/value length per head
  int64_t n_ff = 0;      // dense FFN intermediate size (0 for MoE models)
  int64_t n_expert = 0;
  int64_t n_expert_used = 0;
  int64_t n_ff_exp = 0;    // per-expert intermediate size
  int64_t n_ff_shexp = 0;  // shared-expert intermediate size (qwen2moe)
  int64_t n_ctx_train = 0;
  int64_t rot_dim = 0;  // leading dims of each head that RoPE rotates

  float rms_eps = 1e-6f;
  float rope_theta = 10000.0f;
  float rope_freq_scale = 1.0f;
  kernels::RopeLayout rope_layout = kernels::RopeLayout::kSplitHalf;

  bool qk_norm = false;          // per-head RMS norm of q and k before RoPE
  bool qkv_bias = false;         // biases on q, k, v projections
  bool tied_embeddings = false;  // no output.weight: logits use token_embd
  bool rope_freqs = false;       // rope_freqs.weight present (Llama 3 frequency factors)
  bool norm_topk = true;         // renormalise the k routing weights to sum to 1

  // Routing beyond softmax top-k (glm4moe, minimax-m2): sigmoid expert scores, the top k chosen
  // by score + exp_probs_b (the score-correction bias, selection only), weights = the chosen
  // scores (renormalised when norm_topk) times expert_weights_scale.
  bool router_sigmoid = false;
  float expert_weights_scale = 1.0f;
  // Layers [0, n_dense_lead) have a dense FFN (ffn_gate/up/down of n_ff), the rest MoE (glm4moe).
  int64_t n_dense_lead = 0;
  // Multi-token-prediction layers stored after the n_layer forward layers (glm4moe's nextn,
  // blk.n_layer .. blk.n_layer + n_nextn - 1): validated, not part of the forward; the first one
  // drafts with --spec mtp (Model::load_mtp).
  int64_t n_nextn = 0;
  // q/k RMS norm over the whole q [q_dim] and k [kv_dim] vectors instead of per head
  // (minimax-m2); under tensor parallelism the sum of squares spans the ranks.
  bool qk_norm_full = false;
  // Under tensor parallelism (set by the shard plan): the widths the full-width q/k norm divides
  // the ranks' summed squares by, the model's q_dim and its kv_dim times how often each KV head
  // is held (zero heads padded in add no squares). 0: the local width times the ranks.
  int64_t tp_norm_q_width = 0;
  int64_t tp_norm_k_width = 0;
  // Expert parallelism (set by the shard plan): this rank holds the routed experts
  // [ep_expert_begin, ep_expert_begin + ep_n_expert) whole, the others contribute nothing here;
  // n_expert stays the model's (the router scores all). 0: every expert (no EP).
  int64_t ep_expert_begin = 0;
  int64_t ep_n_expert = 0;
  // YaRN (rope.scaling.type "yarn"): rope_freq_scale is 1 / factor; the ramp between the
  // extrapolated and interpolated frequencies runs over the pairs given by beta_fast/slow and the
  // original context; the kernels scale cos/sin by attn_factor * (1 + 0.1 ln factor).
  float rope_ext_factor = 0.0f;  // 0: no YaRN
  float rope_attn_factor = 1.0f;
  float yarn_beta_fast = 32.0f;
  float yarn_beta_slow = 1.0f;
  int64_t rope_n_ctx_orig = 0;  // original training context (rope.scaling.original_context_length)

  // gpt-oss. Sliding-window layers attend to the last sliding_window positions; layer l is one
  // when l % swa_period < swa_period - 1 (llama.cpp's set_swa_pattern: period 2, the even
  // layers).
  int64_t sliding_window = 0;  // 0: every layer full attention
  int64_t swa_period = 0;
  bool attn_sinks = false;     // attn_sinks.weight: per-head logits in the softmax denominator
  bool attn_out_bias = false;  // attn_output.bias
  bool router_bias = false;    // ffn_gate_inp.bias added to the router logits
  bool expert_bias = false;    // ffn_{gate,up,down}_exps.bias
  bool swiglu_oai = false;     // experts' clamped SwiGLU (alpha, limit) instead of silu(g) * u
  float swiglu_alpha = 1.702f;
  float swiglu_limit = 7.0f;
  bool layer_is_swa(int64_t l) const {
    return sliding_window > 0 && swa_period > 0 && l % swa_period < swa_period - 1;
  }

  // Multi-axis rotary (qwen3vlmoe): rotated pairs per axis t, h, w (and an unused 4th), e.g.
  // {24, 20, 20, 0} for head dim 128. Interleaved: pair i rotates by the h position when
  // i % 3 == 1 and i < 3 * sections[1], by w when i % 3 == 2 and i < 3 * sections[2], else by t.
  // All zero: plain RoPE.
  int32_t rope_sections[4] = {0, 0, 0, 0};
  // Deepstack (qwen3vlmoe): image features added to the hidden states after each of the first
  // n_deepstack layers.
  int64_t n_deepstack = 0;
  bool mrope() const { return rope_sections[0] + rope_sections[1] + rope_sections[2] > 0; }

  // Multi-head latent attention (deepseek2). head_dim is the query/key head (no-rope part plus
  // the rot_dim rope part, 192 for DeepSeek-V3); keys and values come from a per-token latent of
  // kv_lora_rank values (attn_kv_a_mqa), the query from a q_lora_rank one (0: attn_q directly,
  // V2-Lite); the value head is v_head_dim. The cache holds the latent and the rope key only:
  // n_kv_head is 1. attn_scale is the softmax scale (YaRN's mscale^2 / sqrt(head_dim)); 0 means
  // 1 / sqrt(head_dim).
  int64_t q_lora_rank = 0;
  int64_t kv_lora_rank = 0;
  int64_t v_head_dim = 0;
  float attn_scale = 0.0f;
  float yarn_log_mul = 0.0f;  // rope.scaling.yarn_log_multiplier (0.1 * mscale_all_dim)
  // Group-limited expert selection (expert_group_count / expert_group_used_count); 0 or 1: none.
  int64_t n_expert_group = 0;
  int64_t n_expert_group_used = 0;
  bool mla() const { return kv_lora_rank > 0; }

  // Hybrid linear attention (qwen3next). Layer l is a Gated DeltaNet layer (arc/kernels/
  // delta_net.h) unless (l + 1) % full_attn_interval == 0; those are full-attention layers whose
  // q projection also yields a per-head output gate (attn_out_gate: attn_q has 2 * q_dim rows,
  // rearranged at load to [q | gate]). 0: no linear-attention layers.
  int64_t full_attn_interval = 0;
  bool attn_out_gate = false;
  int64_t ssm_conv_kernel = 0;  // ssm.conv_kernel (4)
  int64_t ssm_k_heads = 0;      // ssm.group_count (16)
  int64_t ssm_v_heads = 0;      // ssm.time_step_rank (32)
  int64_t ssm_head_k_dim = 0;   // ssm.state_size (128)
  int64_t ssm_head_v_dim = 0;   // ssm.inner_size / ssm.time_step_rank (128)
  bool hybrid() const { return full_attn_interval > 0; }
  bool layer_recurrent(int64_t l) const {
    return full_attn_interval > 0 && (l + 1) % full_attn_interval != 0;
  }
  int64_t n_recurrent_layers() const {
    int64_t n = 0;
    for (int64_t l = 0; l < n_layer; ++l) n += layer_recurrent(l) ? 1 : 0;
    return n;
  }
  int64_t ssm_inner() const { return ssm_v_heads * ssm_head_v_dim; }  // value dim
  // Conv channels: q | k | v.
  int64_t ssm_conv_channels() const { return 2 * ssm_k_heads * ssm_head_k_dim + ssm_inner(); }
  // Floats of one sequence's recurrent state in one layer: the conv tail and the delta state.
  int64_t ssm_conv_state_floats() const { return (ssm_conv_kernel - 1) * ssm_conv_channels(); }
  int64_t ssm_delta_state_floats() const { return ssm_v_heads * ssm_head_k_dim * ssm_head_v_dim; }
  int64_t recurrent_state_bytes() const {
    return 4 * n_recurrent_layers() * (ssm_conv_state_floats() + ssm_delta_state_floats());
  }
  int64_t qk_nope_dim() const { return head_dim - rot_dim; }
  // Values one token adds to the KV cache over all layers: K and V per kv head, or for MLA the
  // latent and the rope key.
  int64_t kv_values_per_token() const {
    if (mla()) return n_layer * (kv_lora_rank + rot_dim);
    return 2 * (n_layer - n_recurrent_layers()) * n_kv_head * head_dim;  // hybrid: attention only
  }

  bool is_moe() const { return ffn != FfnKind::kDense; }
  int64_t q_dim() const { return n_head * head_dim; }
  int64_t kv_dim() const { return n_kv_head * head_dim; }

  // Lists every field once (name, reference) for printing, JSON and tests.
  template <typename V>
  void visit(V&& v) {
    v("n_layer", n_layer), v("n_embd", n_embd), v("n_vocab", n_vocab), v("n_head", n_head);
    v("n_kv_head", n_kv_head), v("head_dim", head_dim), v("n_ff", n_ff);
    v("n_expert", n_expert), v("n_expert_used", n_expert_used), v("n_ff_exp", n_ff_exp);
    v("n_ff_shexp", n_ff_shexp), v("n_ctx_train", n_ctx_train), v("rot_dim", rot_dim);
    v("rms_eps", rms_eps), v("rope_theta", rope_theta), v("rope_freq_scale", rope_freq_scale);
    v("qk_norm", qk_norm), v("qkv_bias", qkv_bias), v("tied_embeddings", tied_embeddings);
    v("rope_freqs", rope_freqs), v("norm_topk", norm_topk), v("n_deepstack", n_deepstack);
    v("router_sigmoid", router_sigmoid), v("expert_weights_scale", expert_weights_scale);
    v("n_dense_lead", n_dense_lead), v("n_nextn", n_nextn), v("qk_norm_full", qk_norm_full);
    v("rope_ext_factor", rope_ext_factor), v("rope_attn_factor", rope_attn_factor);
    v("yarn_beta_fast", yarn_beta_fast), v("yarn_beta_slow", yarn_beta_slow);
    v("rope_n_ctx_orig", rope_n_ctx_orig), v("sliding_window", sliding_window);
    v("swa_period", swa_period), v("attn_sinks", attn_sinks), v("attn_out_bias", attn_out_bias);
    v("router_bias", router_bias), v("expert_bias", expert_bias), v("swiglu_oai", swiglu_oai);
    v("swiglu_alpha", swiglu_alpha), v("swiglu_limit", swiglu_limit);
    v("q_lora_rank", q_lora_rank), v("kv_lora_rank", kv_lora_rank), v("v_head_dim", v_head_dim);
    v("attn_scale", attn_scale), v("yarn_log_mul", yarn_log_mul);
    v("n_expert_group", n_expert_group), v("n_expert_group_used", n_expert_group_used);
    v("full_attn_interval", full_attn_interval), v("attn_out_gate", attn_out_gate);
    v("ssm_conv_kernel", ssm_conv_kernel), v("ssm_k_heads", ssm_k_heads);
    v("ssm_v_heads", ssm_v_heads), v("ssm_head_k_dim", ssm_head_k_dim);
    v("ssm_head_v_dim", ssm_head_v_dim);
  }
  // Whether layer l's FFN is dense (all layers of a dense model, the leading ones of glm4moe).
  bool dense_layer(int64_t l) const { return ffn == FfnKind::kDense || l < n_dense_lead; }

  // Checks ranges and consistency (heads divide, experts used <= experts, ...).
  Status validate() const;
};

// Reads general.architecture and the family's metadata keys; tensor presence decides tied
// embeddings and rope frequency factors. Errors name the missing or invalid key.
Result<ModelConfig> config_from_gguf(const gguf::File& file);

}  // namespace arc
