// ModelSpec from a GGUF file (see arc/fit_gguf.h for the keys read).
#include "arc/fit_gguf.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include <fmt/format.h>

namespace arc::fit {

namespace {

// An integer key, or the largest element when the key is a per-layer array.
std::optional<int64_t> int_or_max(const gguf::File& f, const std::string& key) {
  const gguf::Value* v = f.find(key);
  if (v == nullptr) return std::nullopt;
  if (const gguf::Array* a = v->as_array()) {
    std::optional<int64_t> best;
    for (const gguf::Value& item : a->items) {
      std::optional<int64_t> x = item.as_int();
      if (x && (!best || *x > *best)) best = x;
    }
    return best;
  }
  return v->as_int();
}

int64_t positive_or_zero(std::optional<int64_t> v) {
  return v && *v > 0 ? *v : 0;
}

Architecture read_architecture(const gguf::File& f, const std::string& arch,
                               std::vector<std::string>* notes) {
  const std::string p = arch + ".";
  Architecture a;
  a.layers = positive_or_zero(f.get_int(p + "block_count"));
  // glm4moe's converter counts its multi-token-prediction layers in block_count: the engine
  // neither loads nor runs them, so they hold no KV.
  if (const int64_t mtp = positive_or_zero(f.get_int(p + "nextn_predict_layers"));
      mtp > 0 && mtp < a.layers) {
    a.layers -= mtp;
    notes->push_back(fmt::format("{} multi-token-prediction layer{} not loaded (not counted)", mtp,
                                 mtp == 1 ? "" : "s"));
  }
  a.hidden = positive_or_zero(f.get_int(p + "embedding_length"));
  a.max_context = positive_or_zero(f.get_int(p + "context_length"));
  if (const gguf::Value* tokens = f.find("tokenizer.ggml.tokens")) {
    if (const gguf::Array* arr = tokens->as_array())
      a.vocab = static_cast<int64_t>(arr->items.size());
  }
  if (a.vocab == 0) a.vocab = positive_or_zero(f.get_int(p + "vocab_size"));

  const int64_t heads = positive_or_zero(int_or_max(f, p + "attention.head_count"));
  const int64_t kv_heads = positive_or_zero(int_or_max(f, p + "attention.head_count_kv"));
  const int64_t kv_lora = positive_or_zero(f.get_int(p + "attention.kv_lora_rank"));
  if (kv_lora > 0) {
    a.attention = AttentionKind::kMla;
    a.kv_lora_rank = kv_lora;
    a.rope_dim = positive_or_zero(f.get_int(p + "rope.dimension_count"));
  } else if (a.layers > 0 && (kv_heads > 0 || heads > 0)) {
    a.attention = AttentionKind::kGqa;
    a.kv_heads = kv_heads > 0 ? kv_heads : heads;  // absent head_count_kv means MHA
    const int64_t fallback = heads > 0 && a.hidden > 0 ? a.hidden / heads : 0;
    a.key_length = positive_or_zero(f.get_int(p + "attention.key_length"));
    a.value_length = positive_or_zero(f.get_int(p + "attention.value_length"));
    if (a.key_length == 0) a.key_length = fallback;
    if (a.value_length == 0) a.value_length = a.key_length;
    if (a.key_length == 0) a.attention = AttentionKind::kUnknown;
    if (const gguf::Value* v = f.find(p + "attention.head_count_kv"); v && v->as_array()) {
      notes->push_back("KV heads vary by layer; the largest count is used for every layer");
    }
  }

  a.sliding_window = positive_or_zero(f.get_int(p + "attention.sliding_window"));
  if (a.sliding_window > 0 && a.layers > 0) {
    if (auto pattern = f.get_int(p + "attention.sliding_window_pattern"); pattern && *pattern > 0) {
      a.sliding_layers = a.layers - a.layers / *pattern;  // every Nth layer is full attention
    } else if (arch == "gpt-oss") {
      a.sliding_layers = a.layers - a.layers / 2;  // alternating: the even layers slide
    } else {
      a.sliding_layers = a.layers;
    }
  }

  // qwen3next: every `full_attention_interval`-th layer is full attention, the rest Gated DeltaNet
  // with an f32 state of inner_size x state_size and a conv state of (inner + 2 x groups x
  // state_size) x (conv_kernel - 1).
  if (auto interval = f.get_int(p + "full_attention_interval");
      interval && *interval > 0 && a.layers > 0) {
    const int64_t inner = positive_or_zero(f.get_int(p + "ssm.inner_size"));
    const int64_t state = positive_or_zero(f.get_int(p + "ssm.state_size"));
    const int64_t groups = positive_or_zero(f.get_int(p + "ssm.group_count"));
    const int64_t kernel = positive_or_zero(f.get_int(p + "ssm.conv_kernel"));
    a.linear_layers = a.layers - a.layers / *interval;
    a.linear_state_bytes_per_layer = static_cast<uint64_t>(
        inner * state * 4 + (inner + 2 * groups * state) * std::max<int64_t>(0, kernel - 1) * 4);
    if (a.linear_state_bytes_per_layer == 0) {
      notes->push_back("linear-attention layers found but their state size keys are missing");
    }
  }
  return a;
}

}  // namespace

Result<ModelSpec> model_spec_from_gguf(const gguf::File& f) {
  ModelSpec s;
  const std::string arch = f.architecture();
  s.name =
      f.get_string("general.name").value_or(std::filesystem::path(f.path()).filename().string());
  s.arch = read_architecture(f, arch, &s.notes);
  if (arch.empty()) s.notes.push_back("general.architecture missing: KV layout unknown");

  const int64_t n_expert = positive_or_zero(f.get_int(arch + ".expert_count"));
  const int64_t n_used = positive_or_zero(f.get_int(arch + ".expert_used_count"));
  const bool moe = n_expert > 0 && n_used > 0 && n_used <= n_expert;
  const bool tied_output = f.find_tensor("output.weight") == nullptr;

  // Tensors of the MTP layers (blk.N with N >= the forward layers) are not loaded.
  const int64_t n_mtp =
      positive_or_zero(f.get_int(arch + ".block_count")) - s.arch.layers;  // 0 without MTP
  auto in_mtp = [&](const std::string& name) {
    if (n_mtp <= 0 || name.rfind("blk.", 0) != 0) return false;
    return std::strtoll(name.c_str() + 4, nullptr, 10) >= s.arch.layers;
  };
  uint64_t total = 0;
  size_t counted = 0;
  long double active = 0;
  for (const gguf::TensorInfo& t : f.tensors()) {
    if (in_mtp(t.name)) continue;
    ++counted;
    total += t.n_bytes;
    if (t.name.find("_exps") != std::string::npos) {
      // All experts stacked in one tensor; a token reads used/total of them.
      active += moe ? static_cast<long double>(t.n_bytes) * n_used / n_expert
                    : static_cast<long double>(t.n_bytes);
    } else if (t.name == "token_embd.weight" && !tied_output) {
      const int64_t rows = std::max<int64_t>(1, t.n_rows());
      active += static_cast<long double>(t.n_bytes) / rows;  // one row per token
    } else {
      active += t.n_bytes;
    }
  }
  if (total == 0) return invalid_argument("'" + f.path() + "' holds no tensor data");
  s.weights_bytes = total;
  s.active_bytes_per_token = static_cast<uint64_t>(active + 0.5L);
  s.weights_basis = fmt::format("exact tensor bytes of {} tensors in {}", counted,
                                std::filesystem::path(f.path()).filename().string());
  if (!moe && n_expert == 0)
    s.notes.push_back("no experts in the file: every weight is read per token");
  return s;
}

Result<ModelSpec> model_spec_from_gguf_file(const std::string& path) {
  auto f = gguf::File::open(path);
  if (!f.ok()) return f.status();
  return model_spec_from_gguf(*f);
}

}  // namespace arc::fit
