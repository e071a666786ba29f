// Model config from GGUF metadata: the keys every family shares, then the family's own.
#include "arc/model_config.h"

#include <cmath>
#include <string>

#include "arc/gguf.h"
#include "model/arch/families.h"

namespace arc {

std::string_view family_name(Family f) {
  switch (f) {
    case Family::kLlama:
      return "llama";
    case Family::kQwen3:
      return "qwen3";
    case Family::kQwen2Moe:
      return "qwen2moe";
    case Family::kQwen3Moe:
      return "qwen3moe";
    case Family::kQwen3VlMoe:
      return "qwen3vlmoe";
    case Family::kGlm4Moe:
      return "glm4moe";
    case Family::kMiniMaxM2:
      return "minimax-m2";
    case Family::kGptOss:
      return "gpt-oss";
    case Family::kDeepSeek2:
      return "deepseek2";
    case Family::kQwen3Next:
      return "qwen3next";
  }
  return "unknown";
}

std::optional<Family> family_from_name(std::string_view arch) {
  for (Family f : {Family::kLlama, Family::kQwen3, Family::kQwen2Moe, Family::kQwen3Moe,
                   Family::kQwen3VlMoe, Family::kGlm4Moe, Family::kMiniMaxM2, Family::kGptOss,
                   Family::kDeepSeek2, Family::kQwen3Next}) {
    if (family_name(f) == arch) return f;
  }
  return std::nullopt;
}

Status ModelConfig::validate() const {
  auto bad = [](const std::string& m) { return invalid_argument("model config: " + m); };
  if (n_layer <= 0 || n_layer > 4096) return bad("block_count must be in [1, 4096]");
  if (n_embd <= 0) return bad("embedding_length must be positive");
  if (n_vocab <= 0) return bad("vocabulary size must be positive");
  if (n_head <= 0 || n_kv_head <= 0) return bad("head counts must be positive");
  if (n_head % n_kv_head != 0) {
    return bad("head_count " + std::to_string(n_head) + " is not a multiple of head_count_kv " +
               std::to_string(n_kv_head));
  }
  if (head_dim <= 0 || head_dim % 2 != 0) return bad("key_length must be positive and even");
  if (rot_dim <= 0 || rot_dim > head_dim || rot_dim % 2 != 0) {
    return bad("rope.dimension_count must be even and at most the head dim");
  }
  if (ffn == FfnKind::kDense && n_ff <= 0) return bad("feed_forward_length must be positive");
  if (is_moe()) {
    if (n_expert <= 0 || n_expert_used <= 0 || n_expert_used > n_expert) {
      return bad("expert_used_count must be in [1, expert_count]");
    }
    if (n_ff_exp <= 0) return bad("expert feed_forward_length must be positive");
  }
  if (n_dense_lead < 0 || n_dense_lead > n_layer) {
    return bad("leading_dense_block_count must be in [0, block_count]");
  }
  if (n_dense_lead > 0 && n_ff <= 0) {
    return bad("feed_forward_length must be positive for the leading dense layers");
  }
  if (n_nextn < 0) return bad("nextn_predict_layers must not be negative");
  if (!(expert_weights_scale > 0.0f) || !std::isfinite(expert_weights_scale)) {
    return bad("expert_weights_scale must be positive");
  }
  if (ffn == FfnKind::kMoeShared && n_ff_shexp <= 0) {
    return bad("expert_shared_feed_forward_length must be positive");
  }
  if (!(rms_eps > 0.0f) || !std::isfinite(rms_eps)) return bad("rms epsilon must be positive");
  if (!(rope_theta > 0.0f) || !std::isfinite(rope_theta)) return bad("rope.freq_base invalid");
  if (mrope()) {
    int64_t sum = 0;
    for (int32_t s : rope_sections) {
      if (s < 0) return bad("rope.dimension_sections must not be negative");
      sum += s;
    }
    if (sum > rot_dim / 2) {
      return bad("rope.dimension_sections add up to " + std::to_string(sum) +
                 " pairs, more than the " + std::to_string(rot_dim / 2) + " rotated pairs");
    }
  }
  if (sliding_window < 0 || swa_period < 0) return bad("sliding window settings must be >= 0");
  if (!(swiglu_alpha > 0.0f) || !(swiglu_limit > 0.0f)) {
    return bad("clamped SwiGLU alpha and limit must be positive");
  }
  if (hybrid()) {
    if (ssm_conv_kernel < 1 || ssm_conv_kernel > 16 || ssm_k_heads <= 0 || ssm_v_heads <= 0 ||
        ssm_v_heads % ssm_k_heads != 0 || ssm_head_k_dim <= 0 || ssm_head_v_dim <= 0) {
      return bad(
          "linear attention needs ssm.conv_kernel in [1, 16], positive ssm.group_count, "
          "ssm.state_size and ssm.inner_size, and ssm.time_step_rank a multiple of "
          "ssm.group_count");
    }
  }
  if (mla()) {
    if (q_lora_rank < 0 || v_head_dim <= 0 || rot_dim >= head_dim || n_kv_head != 1) {
      return bad("MLA needs value_length_mla > 0 and a rope part smaller than key_length_mla");
    }
  }
  if (n_expert_group > 1) {
    if (n_expert % n_expert_group != 0 || n_expert_group_used < 1 ||
        n_expert_group_used > n_expert_group) {
      return bad(
          "expert_group_count must divide expert_count, and expert_group_used_count be "
          "in [1, expert_group_count]");
    }
    if (n_expert_used > n_expert_group_used * (n_expert / n_expert_group)) {
      return bad("expert_used_count exceeds the experts of expert_group_used_count groups");
    }
  }
  if (n_deepstack < 0 || n_deepstack > n_layer) {
    return bad("n_deepstack_layers must be in [0, block_count]");
  }
  return ok_status();
}

namespace arch {

Status read_int(const gguf::File& f, std::string_view arch, std::string_view suffix, bool required,
                int64_t& out) {
  std::string key = std::string(arch) + "." + std::string(suffix);
  const gguf::Value* v = f.find(key);
  if (v == nullptr) {
    if (required) return invalid_argument("missing metadata key '" + key + "'");
    return ok_status();
  }
  auto i = v->as_int();
  if (!i || *i < 0)
    return invalid_argument("metadata key '" + key + "' must be a non-negative integer");
  out = *i;
  return ok_status();
}

bool file_has_tensor(const gguf::File& f, std::string_view name) {
  return f.find_tensor(name) != nullptr;
}

Status read_float(const gguf::File& f, std::string_view arch, std::string_view suffix, float& out) {
  const std::string key = std::string(arch) + "." + std::string(suffix);
  const gguf::Value* v = f.find(key);
  if (v == nullptr) return ok_status();
  auto x = v->as_float();
  if (!x || !std::isfinite(*x))
    return invalid_argument("metadata key '" + key + "' must be a number");
  out = static_cast<float>(*x);
  return ok_status();
}

Status read_bool(const gguf::File& f, std::string_view arch, std::string_view suffix, bool& out) {
  const std::string key = std::string(arch) + "." + std::string(suffix);
  const gguf::Value* v = f.find(key);
  if (v == nullptr) return ok_status();
  auto b = v->as_bool();
  if (!b) return invalid_argument("metadata key '" + key + "' must be a bool");
  out = *b;
  return ok_status();
}

Status read_gating(const gguf::File& f, std::string_view arch, bool fallback, bool& sigmoid) {
  int64_t func = 0;  // llama.cpp's llama_expert_gating_func_type: 0 none, 1 softmax, 2 sigmoid
  ARC_RETURN_IF_ERROR(read_int(f, arch, "expert_gating_func", false, func));
  if (func == 0) {
    sigmoid = fallback;
  } else if (func == 1 || func == 2) {
    sigmoid = func == 2;
  } else {
    return unimplemented(std::string(arch) + ".expert_gating_func " + std::to_string(func) +
                         " is not supported (1 softmax, 2 sigmoid)");
  }
  return ok_status();
}

}  // namespace arch

namespace {

Status read_float(const gguf::File& f, const std::string& key, float& out) {
  const gguf::Value* v = f.find(key);
  if (v == nullptr) return ok_status();
  auto x = v->as_float();
  if (!x) return invalid_argument("metadata key '" + key + "' must be a number");
  out = static_cast<float>(*x);
  return ok_status();
}

// YaRN as llama.cpp reads it: freq_scale = 1 / factor, the ramp on (ext_factor 1 unless the file
// says), beta_fast / beta_slow, the original context (default: the training context), and the
// magnitude attn_factor * (1 + 0.1 ln factor) applied by the kernels.
Status read_yarn(const gguf::File& f, const std::string& arch, ModelConfig& cfg) {
  float factor = 0.0f;
  ARC_RETURN_IF_ERROR(read_float(f, arch + ".rope.scaling.factor", factor));
  if (!(factor >= 1.0f)) {
    return invalid_argument("metadata key '" + arch +
                            ".rope.scaling.factor' must be at least 1 for YaRN");
  }
  float log_mul = 0.0f;
  ARC_RETURN_IF_ERROR(read_float(f, arch + ".rope.scaling.yarn_log_multiplier", log_mul));
  cfg.yarn_log_mul = log_mul;
  if (log_mul != 0.0f && cfg.family != Family::kDeepSeek2) {
    return unimplemented(
        "YaRN with rope.scaling.yarn_log_multiplier (DeepSeek-style mscale) is "
        "not supported");
  }
  cfg.rope_freq_scale = 1.0f / factor;
  cfg.rope_ext_factor = 1.0f;
  ARC_RETURN_IF_ERROR(read_float(f, arch + ".rope.scaling.yarn_ext_factor", cfg.rope_ext_factor));
  ARC_RETURN_IF_ERROR(read_float(f, arch + ".rope.scaling.attn_factor", cfg.rope_attn_factor));
  ARC_RETURN_IF_ERROR(read_float(f, arch + ".rope.scaling.yarn_beta_fast", cfg.yarn_beta_fast));
  ARC_RETURN_IF_ERROR(read_float(f, arch + ".rope.scaling.yarn_beta_slow", cfg.yarn_beta_slow));
  cfg.rope_n_ctx_orig = cfg.n_ctx_train;
  ARC_RETURN_IF_ERROR(
      arch::read_int(f, arch, "rope.scaling.original_context_length", false, cfg.rope_n_ctx_orig));
  if (cfg.rope_n_ctx_orig <= 0) {
    return invalid_argument("YaRN needs " + arch +
                            ".rope.scaling.original_context_length (or context_length)");
  }
  return ok_status();
}

}  // namespace

Result<ModelConfig> config_from_gguf(const gguf::File& file) {
  const std::string arch = file.architecture();
  if (arch.empty()) return invalid_argument("model file has no general.architecture");
  std::optional<Family> fam = family_from_name(arch);
  if (!fam) {
    return unimplemented("unsupported model architecture '" + arch +
                         "' (supported: llama, qwen3, qwen2moe, qwen3moe, qwen3vlmoe, glm4moe, "
                         "minimax-m2, gpt-oss, deepseek2, qwen3next)");
  }
  ModelConfig cfg;
  cfg.family = *fam;
  using arch::read_int;
  ARC_RETURN_IF_ERROR(read_int(file, arch, "block_count", true, cfg.n_layer));
  ARC_RETURN_IF_ERROR(read_int(file, arch, "embedding_length", true, cfg.n_embd));
  ARC_RETURN_IF_ERROR(read_int(file, arch, "attention.head_count", true, cfg.n_head));
  cfg.n_kv_head = cfg.n_head;
  ARC_RETURN_IF_ERROR(read_int(file, arch, "attention.head_count_kv", false, cfg.n_kv_head));
  cfg.head_dim = cfg.n_head > 0 ? cfg.n_embd / cfg.n_head : 0;
  ARC_RETURN_IF_ERROR(read_int(file, arch, "attention.key_length", false, cfg.head_dim));
  int64_t v_len = cfg.head_dim;
  ARC_RETURN_IF_ERROR(read_int(file, arch, "attention.value_length", false, v_len));
  if (v_len != cfg.head_dim && *fam != Family::kDeepSeek2) {  // MLA reads its own lengths
    return unimplemented("attention.value_length " + std::to_string(v_len) +
                         " differs from key_length " + std::to_string(cfg.head_dim));
  }
  ARC_RETURN_IF_ERROR(read_int(file, arch, "context_length", false, cfg.n_ctx_train));
  cfg.rot_dim = cfg.head_dim;
  ARC_RETURN_IF_ERROR(read_int(file, arch, "rope.dimension_count", false, cfg.rot_dim));
  ARC_RETURN_IF_ERROR(read_float(file, arch + ".attention.layer_norm_rms_epsilon", cfg.rms_eps));
  ARC_RETURN_IF_ERROR(read_float(file, arch + ".rope.freq_base", cfg.rope_theta));
  if (auto t = file.get_string(arch + ".rope.scaling.type"); t && *t == "linear") {
    float factor = 1.0f;
    ARC_RETURN_IF_ERROR(read_float(file, arch + ".rope.scaling.factor", factor));
    if (factor > 0.0f) cfg.rope_freq_scale = 1.0f / factor;
  } else if (t && *t == "yarn") {
    ARC_RETURN_IF_ERROR(read_yarn(file, arch, cfg));
  }
  // The vocabulary size is the embedding's row count (vocab_size is optional in GGUF).
  if (const gguf::TensorInfo* t = file.find_tensor("token_embd.weight");
      t != nullptr && t->shape.size() == 2) {
    cfg.n_vocab = t->shape[1];
  } else {
    return invalid_argument("model file has no 2-D tensor 'token_embd.weight'");
  }
  cfg.tied_embeddings = file.find_tensor("output.weight") == nullptr;
  cfg.rope_freqs = file.find_tensor("rope_freqs.weight") != nullptr;

  const arch::FamilyDef& def = arch::family_def(*fam);
  ARC_RETURN_IF_ERROR(def.read_config(file, cfg));
  Status s = cfg.validate();
  if (!s.ok()) return s.with_context(file.path());
  return cfg;
}

}  // namespace arc
