// Test-model generator: a GGUF of any supported family with chosen sizes, fixed-seed random
// weights and weight formats, and either a real vocabulary (from the shared tokenizer fixtures)
// or a tiny synthetic byte-level one.
//
// Weights are scaled so greedy decoding has clear top-1 margins (plain N(0, 0.02) weights give
// nearly flat logits): projections keep unit variance (std 1/sqrt(n_in)), embeddings and the
// output head give logits of std ~4, and the router gives expert scores of std ~3.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "arc/model_config.h"
#include "arc/status.h"

namespace arc {

struct TestModelOptions {
  Family family = Family::kQwen3Moe;
  int64_t n_layer = 2;
  int64_t n_embd = 64;
  int64_t n_head = 4;
  int64_t n_kv_head = 2;
  int64_t head_dim = 16;
  int64_t n_ff = 128;    // dense FFN (llama dense, qwen3)
  int64_t n_expert = 0;  // 0: the family's default (8 for MoE families, 0 for dense)
  int64_t n_expert_used = 2;
  int64_t n_ff_exp = 32;
  int64_t n_ff_shexp = 64;  // qwen2moe shared expert
  int64_t n_vocab = 0;      // synthetic vocab only: 0 picks 256 bytes + 3 specials
  int64_t n_ctx = 4096;
  int64_t n_deepstack = 2;  // qwen3vlmoe: layers that take deepstack features (<= n_layer)
  // glm4moe: leading dense layers (of n_ff), per-head q/k norms (GLM-4.5 355B has them, Air not).
  // glm4moe, deepseek2: MTP (nextn) layers appended after the n_layer forward layers
  // (block_count = n_layer + n_nextn); -1: the family's default, 1 for glm4moe (its converter
  // keeps them) and 0 for deepseek2 (llama.cpp writes DeepSeek-V3.2's, skips V3's).
  int64_t n_dense_lead = 1;
  bool qk_norm = false;
  int64_t n_nextn = -1;
  // Rotated dims per head; 0: the family's (half the head for glm4moe and minimax-m2, as theirs).
  int64_t rot_dim = 0;
  // F32, F16, Q8_0, Q4_K, Q6_K ... (any type the quantizers support), or the mixes Q4_K_M /
  // Q5_K_M (Q6_K for output, attn_v and ffn_down on some layers, like llama.cpp's).
  std::string type = "F32";
  // The routed experts' matrices in their own type (gpt-oss ships MXFP4 experts); empty: `type`.
  std::string experts_type;
  int64_t sliding_window = 0;  // gpt-oss: tokens a sliding-window layer sees (0: 128)
  // deepseek2 (MLA): head_dim is the q/k head (no-rope + rope parts), rot_dim its rope part
  // (0: a third, as DeepSeek's 64 of 192); q_lora_rank 0 writes attn_q (V2-Lite style).
  // Experts form 4 groups of which 2 compete (DeepSeek-V3's 8 and 4, scaled) when the counts
  // allow. YaRN as DeepSeek-V3's: factor 40 over 4096, yarn_log_multiplier 0.1.
  int64_t q_lora_rank = 48;
  int64_t kv_lora_rank = 32;
  int64_t v_head_dim = 16;
  // qwen3next: Gated DeltaNet layers (k heads, v heads, head dim for both, conv kernel) and a
  // full-attention layer every full_attn_interval layers; attention rotates a quarter of each
  // head (rot_dim 0) as Qwen3-Next's partial_rotary_factor 0.25.
  int64_t ssm_k_heads = 2;
  int64_t ssm_v_heads = 4;
  int64_t ssm_head_dim = 16;
  int64_t ssm_conv_kernel = 4;
  int64_t full_attn_interval = 4;
  bool tied_embeddings = true;
  std::string tokenizer_fixture;  // qwen3, llama3, deepseek_v3, gptoss: real vocabulary
  std::string fixtures_dir;       // folder holding tokenizers/<name>/tokenizer.json
  std::string chat_template;      // non-empty: tokenizer.chat_template (a real family's template)
  uint64_t seed = 1;
  // Speed-test models of several GB in seconds: every layer's tensors are copies of layer 0's,
  // and every expert of a 3-D expert tensor a copy of expert 0. Bytes read per token are those of
  // a real model of the same shape; the values are just not independent.
  bool repeat_weights = false;
};

// Writes the model to `path`.
Status write_test_model(const TestModelOptions& opt, const std::string& path);
// The same file in memory.
Result<std::vector<uint8_t>> build_test_model(const TestModelOptions& opt);

}  // namespace arc
