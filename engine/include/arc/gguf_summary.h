// What `arclight-engine inspect` reports about a GGUF model, computed once from File's metadata
// and tensor table so the fit calculator and the app reuse the same figures.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "arc/gguf.h"

namespace arc::gguf {

struct SpecialToken {
  int64_t id = -1;
  std::optional<std::string> text;  // the vocabulary entry, when the id is inside it
};

struct TokenizerSummary {
  std::string model;  // tokenizer.ggml.model ("gpt2", "llama", ...); "" when absent
  std::string pre;    // tokenizer.ggml.pre
  uint64_t vocab_size = 0;
  std::optional<SpecialToken> bos, eos, pad;
  bool has_chat_template = false;
};

struct Hyperparameters {
  std::optional<int64_t> block_count;       // layers
  std::optional<int64_t> embedding_length;  // hidden size
  std::optional<int64_t> head_count;        // query heads (max over layers if per-layer)
  std::optional<int64_t> head_count_kv;
  std::optional<int64_t> key_length, value_length;  // head dims as stored
  std::optional<int64_t> head_dim;                  // key_length, or embedding_length / head_count
  std::optional<int64_t> expert_count, expert_used_count, expert_feed_forward_length;
  std::optional<int64_t> feed_forward_length;
  std::optional<int64_t> context_length;
  std::optional<double> rope_freq_base;
  std::optional<std::string> rope_scaling_type;
  std::optional<double> rope_scaling_factor;
  std::optional<int64_t> rope_scaling_original_context_length;
  std::optional<int64_t> rope_dimension_count;  // rotated dims per head (partial rotary)
  // MoE routing and layout beyond the basics (glm4moe, minimax-m2, deepseek2).
  std::optional<int64_t> leading_dense_block_count, expert_shared_count, expert_gating_func;
  std::optional<double> expert_weights_scale;
  std::optional<bool> expert_weights_norm;
  std::optional<int64_t> nextn_predict_layers;    // MTP layers counted in block_count
  std::optional<int64_t> sliding_window;          // attention.sliding_window (gpt-oss: 128)
  std::optional<int64_t> sliding_window_pattern;  // every Nth layer full attention
  bool attention_sinks = false;                   // blk.0.attn_sinks.weight present
  // Multi-head latent attention (deepseek2): LoRA ranks, the heads' q/k and v sizes, the KV
  // cache's bytes per token at F16 (latent + rope key per layer), group-limited routing, YaRN's
  // softmax-scale multiplier.
  std::optional<int64_t> q_lora_rank, kv_lora_rank, key_length_mla, value_length_mla;
  std::optional<int64_t> mla_kv_bytes_per_token_f16;
  std::optional<int64_t> expert_group_count, expert_group_used_count;
  std::optional<double> rope_scaling_yarn_log_multiplier;
  // Hybrid linear attention (qwen3next): every Nth layer full attention, the others Gated
  // DeltaNet (k heads = ssm.group_count, v heads = ssm.time_step_rank, k head = ssm.state_size,
  // value width = ssm.inner_size, conv kernel), and their f32 state per sequence.
  std::optional<int64_t> full_attention_interval, ssm_group_count, ssm_time_step_rank;
  std::optional<int64_t> ssm_state_size, ssm_inner_size, ssm_conv_kernel;
  std::optional<int64_t> recurrent_state_bytes_per_seq;
};

struct ModelSummary {
  std::string path;
  uint32_t version = 0;
  size_t n_files = 1;
  uint64_t file_bytes = 0;
  std::string architecture;         // "" when general.architecture is absent
  bool known_architecture = false;  // one of the families Arclight plans to run
  std::string name;                 // general.name
  Hyperparameters hp;
  TokenizerSummary tokenizer;

  uint64_t n_tensors = 0;
  uint64_t tensor_bytes = 0;                      // sum of all tensors' data
  std::map<std::string, uint64_t> bytes_by_type;  // "Q4_K" -> bytes
  std::map<int64_t, uint64_t> bytes_by_layer;     // blk.N.* -> bytes
  uint64_t non_layer_bytes = 0;                   // embeddings, output head, final norm
  uint64_t expert_bytes = 0;                      // routed experts: tensors named *_exps*
  uint64_t mtp_bytes = 0;  // multi-token-prediction layers (the last nextn_predict_layers)
  // MoE only: weights read per token = non-expert bytes + expert bytes * used / total (the MTP
  // layers' bytes are not read by a plain decode step and are left out).
  std::optional<uint64_t> active_bytes_per_token;
  // Parameters (tensor elements), and for MoE the ones a token uses (same rule as the bytes).
  uint64_t n_params = 0;
  std::optional<uint64_t> n_active_params;
};

ModelSummary summarize(const File& file);
nlohmann::json to_json(const ModelSummary& s);

}  // namespace arc::gguf
