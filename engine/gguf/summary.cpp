// summarize(): the figures of `inspect`, from `<arch>.*` and `tokenizer.*` metadata and the
// tensor table.
#include <algorithm>
#include <array>
#include <charconv>

#include "arc/gguf_summary.h"

namespace arc::gguf {

namespace {

// The families of DESIGN.md; anything else is reported, not rejected.
constexpr std::array<std::string_view, 10> kKnownArchitectures = {
    "llama",   "qwen2",   "qwen3",     "qwen2moe",   "qwen3moe",
    "gpt-oss", "glm4moe", "deepseek2", "minimax-m2", "qwen3next"};

// An integer key, or the largest element when the key is a per-layer array.
std::optional<int64_t> int_or_max(const File& f, const std::string& key) {
  const Value* v = f.find(key);
  if (v == nullptr) return std::nullopt;
  if (const Array* a = v->as_array()) {
    std::optional<int64_t> best;
    for (const Value& item : a->items) {
      std::optional<int64_t> x = item.as_int();
      if (x && (!best || *x > *best)) best = x;
    }
    return best;
  }
  return v->as_int();
}

std::optional<SpecialToken> special(const File& f, const char* key, const Array* vocab) {
  std::optional<int64_t> id = f.get_int(key);
  if (!id) return std::nullopt;
  SpecialToken t;
  t.id = *id;
  if (vocab && *id >= 0 && static_cast<uint64_t>(*id) < vocab->items.size()) {
    if (const std::string* s = vocab->items[static_cast<size_t>(*id)].as_string()) t.text = *s;
  }
  return t;
}

// "blk.12.ffn_up.weight" -> 12; nullopt for tensors outside the repeated layers.
std::optional<int64_t> layer_of(std::string_view name) {
  constexpr std::string_view kPrefix = "blk.";
  if (name.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  name.remove_prefix(kPrefix.size());
  int64_t n = 0;
  auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), n);
  if (ec != std::errc() || end == name.data() || end == name.data() + name.size() || *end != '.') {
    return std::nullopt;
  }
  return n;
}

Hyperparameters read_hyperparameters(const File& f, const std::string& arch) {
  Hyperparameters hp;
  const std::string p = arch + ".";
  hp.block_count = f.get_int(p + "block_count");
  hp.embedding_length = f.get_int(p + "embedding_length");
  hp.head_count = int_or_max(f, p + "attention.head_count");
  hp.head_count_kv = int_or_max(f, p + "attention.head_count_kv");
  hp.key_length = f.get_int(p + "attention.key_length");
  hp.value_length = f.get_int(p + "attention.value_length");
  if (hp.key_length) {
    hp.head_dim = hp.key_length;
  } else if (hp.embedding_length && hp.head_count && *hp.head_count > 0) {
    hp.head_dim = *hp.embedding_length / *hp.head_count;
  }
  hp.expert_count = f.get_int(p + "expert_count");
  hp.expert_used_count = f.get_int(p + "expert_used_count");
  hp.expert_feed_forward_length = f.get_int(p + "expert_feed_forward_length");
  hp.feed_forward_length = int_or_max(f, p + "feed_forward_length");
  hp.context_length = f.get_int(p + "context_length");
  hp.rope_freq_base = f.get_float(p + "rope.freq_base");
  hp.rope_scaling_type = f.get_string(p + "rope.scaling.type");
  hp.rope_scaling_factor = f.get_float(p + "rope.scaling.factor");
  hp.rope_scaling_original_context_length = f.get_int(p + "rope.scaling.original_context_length");
  hp.rope_dimension_count = f.get_int(p + "rope.dimension_count");
  hp.leading_dense_block_count = f.get_int(p + "leading_dense_block_count");
  hp.expert_shared_count = f.get_int(p + "expert_shared_count");
  hp.expert_gating_func = f.get_int(p + "expert_gating_func");
  hp.expert_weights_scale = f.get_float(p + "expert_weights_scale");
  hp.expert_weights_norm = f.get_bool(p + "expert_weights_norm");
  hp.nextn_predict_layers = f.get_int(p + "nextn_predict_layers");
  hp.sliding_window = f.get_int(p + "attention.sliding_window");
  hp.sliding_window_pattern = f.get_int(p + "attention.sliding_window_pattern");
  hp.attention_sinks = f.find_tensor("blk.0.attn_sinks.weight") != nullptr;
  hp.q_lora_rank = f.get_int(p + "attention.q_lora_rank");
  hp.kv_lora_rank = f.get_int(p + "attention.kv_lora_rank");
  hp.key_length_mla = f.get_int(p + "attention.key_length_mla");
  hp.value_length_mla = f.get_int(p + "attention.value_length_mla");
  hp.expert_group_count = f.get_int(p + "expert_group_count");
  hp.expert_group_used_count = f.get_int(p + "expert_group_used_count");
  hp.rope_scaling_yarn_log_multiplier = f.get_float(p + "rope.scaling.yarn_log_multiplier");
  hp.full_attention_interval = f.get_int(p + "full_attention_interval");
  hp.ssm_group_count = f.get_int(p + "ssm.group_count");
  hp.ssm_time_step_rank = f.get_int(p + "ssm.time_step_rank");
  hp.ssm_state_size = f.get_int(p + "ssm.state_size");
  hp.ssm_inner_size = f.get_int(p + "ssm.inner_size");
  hp.ssm_conv_kernel = f.get_int(p + "ssm.conv_kernel");
  if (hp.full_attention_interval && *hp.full_attention_interval > 0 && hp.block_count &&
      hp.ssm_group_count && hp.ssm_state_size && hp.ssm_inner_size && hp.ssm_conv_kernel) {
    // Per DeltaNet layer: the delta state (v heads x k head x v head = inner x state_size) and
    // the conv tail ((conv_kernel - 1) x channels), f32.
    const int64_t linear = *hp.block_count - *hp.block_count / *hp.full_attention_interval;
    const int64_t channels = 2 * *hp.ssm_group_count * *hp.ssm_state_size + *hp.ssm_inner_size;
    hp.recurrent_state_bytes_per_seq =
        linear * 4 *
        (*hp.ssm_inner_size * *hp.ssm_state_size + (*hp.ssm_conv_kernel - 1) * channels);
  }
  if (hp.kv_lora_rank && hp.rope_dimension_count && hp.block_count) {
    // One latent row and one rope key per token and forward layer (MTP layers are not run).
    const int64_t layers = *hp.block_count - hp.nextn_predict_layers.value_or(0);
    hp.mla_kv_bytes_per_token_f16 = layers * (*hp.kv_lora_rank + *hp.rope_dimension_count) * 2;
  }
  return hp;
}

TokenizerSummary read_tokenizer(const File& f) {
  TokenizerSummary t;
  t.model = f.get_string("tokenizer.ggml.model").value_or("");
  t.pre = f.get_string("tokenizer.ggml.pre").value_or("");
  const Value* tokens = f.find("tokenizer.ggml.tokens");
  const Array* vocab = tokens ? tokens->as_array() : nullptr;
  if (vocab && vocab->elem_type != ValueType::kString) vocab = nullptr;
  t.vocab_size = vocab ? vocab->items.size() : 0;
  t.bos = special(f, "tokenizer.ggml.bos_token_id", vocab);
  t.eos = special(f, "tokenizer.ggml.eos_token_id", vocab);
  t.pad = special(f, "tokenizer.ggml.padding_token_id", vocab);
  t.has_chat_template = f.get_string("tokenizer.chat_template").has_value();
  return t;
}

// Metadata strings are not guaranteed UTF-8, and nlohmann's dump() throws on invalid UTF-8:
// replace every invalid sequence with U+FFFD so the JSON always serializes.
std::string valid_utf8(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  size_t i = 0;
  while (i < in.size()) {
    const auto c = static_cast<uint8_t>(in[i]);
    size_t len = c < 0x80           ? 1
                 : (c >> 5) == 0x6  ? 2
                 : (c >> 4) == 0xE  ? 3
                 : (c >> 3) == 0x1E ? 4
                                    : 0;
    bool ok = len != 0 && i + len <= in.size();
    uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
    for (size_t k = 1; ok && k < len; ++k) {
      const auto cc = static_cast<uint8_t>(in[i + k]);
      ok = (cc & 0xC0) == 0x80;
      cp = (cp << 6) | (cc & 0x3F);
    }
    // Reject overlong forms, surrogates and values past U+10FFFF.
    if (ok && ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
               (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)) {
      ok = false;
    }
    if (ok) {
      out.append(in.substr(i, len));
      i += len;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
}

template <typename T>
nlohmann::json opt(const std::optional<T>& v) {
  if constexpr (std::is_same_v<T, std::string>) {
    return v ? nlohmann::json(valid_utf8(*v)) : nlohmann::json(nullptr);
  } else {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  }
}

nlohmann::json special_json(const std::optional<SpecialToken>& t) {
  if (!t) return nullptr;
  return {{"id", t->id}, {"text", opt(t->text)}};
}

}  // namespace

ModelSummary summarize(const File& f) {
  ModelSummary s;
  s.path = f.path();
  s.version = f.version();
  s.n_files = f.n_files();
  s.file_bytes = f.file_bytes();
  s.architecture = f.architecture();
  s.known_architecture = std::find(kKnownArchitectures.begin(), kKnownArchitectures.end(),
                                   s.architecture) != kKnownArchitectures.end();
  s.name = f.get_string("general.name").value_or("");
  if (!s.architecture.empty()) s.hp = read_hyperparameters(f, s.architecture);
  s.tokenizer = read_tokenizer(f);

  s.n_tensors = f.tensors().size();
  // The MTP layers are the last nextn_predict_layers of block_count.
  const int64_t first_mtp = s.hp.block_count && s.hp.nextn_predict_layers
                                ? *s.hp.block_count - *s.hp.nextn_predict_layers
                                : INT64_MAX;
  uint64_t mtp_expert_bytes = 0;
  uint64_t expert_params = 0, mtp_params = 0, mtp_expert_params = 0;
  for (const TensorInfo& t : f.tensors()) {
    const auto elements = static_cast<uint64_t>(t.n_elements());
    s.n_params += elements;
    s.tensor_bytes += t.n_bytes;
    s.bytes_by_type[std::string(dtype_name(t.type))] += t.n_bytes;
    const bool expert = t.name.find("_exps") != std::string::npos;
    if (std::optional<int64_t> layer = layer_of(t.name)) {
      s.bytes_by_layer[*layer] += t.n_bytes;
      if (*layer >= first_mtp) {
        s.mtp_bytes += t.n_bytes;
        mtp_params += elements;
        if (expert) {
          mtp_expert_bytes += t.n_bytes;
          mtp_expert_params += elements;
        }
      }
    } else {
      s.non_layer_bytes += t.n_bytes;
    }
    if (expert) {
      s.expert_bytes += t.n_bytes;
      expert_params += elements;
    }
  }
  const auto& hp = s.hp;
  if (hp.expert_count && hp.expert_used_count && *hp.expert_count > 0 &&
      *hp.expert_used_count >= 0 && *hp.expert_used_count <= *hp.expert_count) {
    // Expert tensors hold all experts stacked; a token reads used/total of them.
    const long double share = static_cast<long double>(*hp.expert_used_count) /
                              static_cast<long double>(*hp.expert_count);
    const uint64_t experts = s.expert_bytes - mtp_expert_bytes;
    s.active_bytes_per_token =
        (s.tensor_bytes - s.mtp_bytes - experts) +
        static_cast<uint64_t>(static_cast<long double>(experts) * share + 0.5L);
    const uint64_t expert_elements = expert_params - mtp_expert_params;
    s.n_active_params =
        (s.n_params - mtp_params - expert_elements) +
        static_cast<uint64_t>(static_cast<long double>(expert_elements) * share + 0.5L);
  }
  return s;
}

nlohmann::json to_json(const ModelSummary& s) {
  const Hyperparameters& hp = s.hp;
  nlohmann::json layers = nlohmann::json::array();
  for (const auto& [layer, bytes] : s.bytes_by_layer) {
    layers.push_back({{"layer", layer}, {"bytes", bytes}});
  }
  nlohmann::json by_type = nlohmann::json::object();
  for (const auto& [type, bytes] : s.bytes_by_type) by_type[type] = bytes;
  return {
      {"path", valid_utf8(s.path)},
      {"gguf_version", s.version},
      {"files", s.n_files},
      {"file_bytes", s.file_bytes},
      {"architecture", valid_utf8(s.architecture)},
      {"known_architecture", s.known_architecture},
      {"name", valid_utf8(s.name)},
      {"hyperparameters",
       {{"block_count", opt(hp.block_count)},
        {"embedding_length", opt(hp.embedding_length)},
        {"head_count", opt(hp.head_count)},
        {"head_count_kv", opt(hp.head_count_kv)},
        {"key_length", opt(hp.key_length)},
        {"value_length", opt(hp.value_length)},
        {"head_dim", opt(hp.head_dim)},
        {"expert_count", opt(hp.expert_count)},
        {"expert_used_count", opt(hp.expert_used_count)},
        {"expert_feed_forward_length", opt(hp.expert_feed_forward_length)},
        {"feed_forward_length", opt(hp.feed_forward_length)},
        {"context_length", opt(hp.context_length)},
        {"rope_freq_base", opt(hp.rope_freq_base)},
        {"rope_scaling_type", opt(hp.rope_scaling_type)},
        {"rope_scaling_factor", opt(hp.rope_scaling_factor)},
        {"rope_scaling_original_context_length", opt(hp.rope_scaling_original_context_length)},
        {"rope_dimension_count", opt(hp.rope_dimension_count)},
        {"leading_dense_block_count", opt(hp.leading_dense_block_count)},
        {"expert_shared_count", opt(hp.expert_shared_count)},
        {"expert_gating_func", opt(hp.expert_gating_func)},
        {"expert_weights_scale", opt(hp.expert_weights_scale)},
        {"expert_weights_norm", opt(hp.expert_weights_norm)},
        {"nextn_predict_layers", opt(hp.nextn_predict_layers)},
        {"sliding_window", opt(hp.sliding_window)},
        {"sliding_window_pattern", opt(hp.sliding_window_pattern)},
        {"attention_sinks", hp.attention_sinks},
        {"q_lora_rank", opt(hp.q_lora_rank)},
        {"kv_lora_rank", opt(hp.kv_lora_rank)},
        {"key_length_mla", opt(hp.key_length_mla)},
        {"value_length_mla", opt(hp.value_length_mla)},
        {"mla_kv_bytes_per_token_f16", opt(hp.mla_kv_bytes_per_token_f16)},
        {"expert_group_count", opt(hp.expert_group_count)},
        {"expert_group_used_count", opt(hp.expert_group_used_count)},
        {"rope_scaling_yarn_log_multiplier", opt(hp.rope_scaling_yarn_log_multiplier)},
        {"full_attention_interval", opt(hp.full_attention_interval)},
        {"ssm_group_count", opt(hp.ssm_group_count)},
        {"ssm_time_step_rank", opt(hp.ssm_time_step_rank)},
        {"ssm_state_size", opt(hp.ssm_state_size)},
        {"ssm_inner_size", opt(hp.ssm_inner_size)},
        {"ssm_conv_kernel", opt(hp.ssm_conv_kernel)},
        {"recurrent_state_bytes_per_seq", opt(hp.recurrent_state_bytes_per_seq)}}},
      {"tokenizer",
       {{"model", valid_utf8(s.tokenizer.model)},
        {"pre", valid_utf8(s.tokenizer.pre)},
        {"vocab_size", s.tokenizer.vocab_size},
        {"bos", special_json(s.tokenizer.bos)},
        {"eos", special_json(s.tokenizer.eos)},
        {"pad", special_json(s.tokenizer.pad)},
        {"chat_template", s.tokenizer.has_chat_template}}},
      {"tensor_count", s.n_tensors},
      {"tensor_bytes", s.tensor_bytes},
      {"bytes_by_type", by_type},
      {"bytes_by_layer", layers},
      {"non_layer_bytes", s.non_layer_bytes},
      {"expert_bytes", s.expert_bytes},
      {"mtp_bytes", s.mtp_bytes},
      {"active_bytes_per_token", opt(s.active_bytes_per_token)},
      {"n_params", s.n_params},
      {"n_active_params", opt(s.n_active_params)},
  };
}

}  // namespace arc::gguf
