// Test-model generator (see test_model.h).
#include "model/test_model.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "arc/gguf.h"
#include "arc/kernels/quant.h"
#include "arc/model_arch.h"

namespace arc {
namespace {

// splitmix64: every tensor gets its own stream from (seed, name), so tensors do not depend on
// the order they are generated in.
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform with standard deviation 1.
  float unit() {
    const double u = static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0);
    return static_cast<float>((u * 2.0 - 1.0) * 1.7320508075688772);
  }
};

uint64_t hash_name(uint64_t seed, const std::string& name) {
  uint64_t h = 1469598103934665603ull ^ seed;
  for (unsigned char ch : name) h = (h ^ ch) * 1099511628211ull;
  return h;
}

// Weight type of one tensor under the requested type or mix.
DType pick_type(const TestModelOptions& o, const TensorRef& ref, const ModelConfig& cfg) {
  if (ref.spec->n_dims == 1) return DType::F32;
  const TensorRole role = ref.spec->role;
  if (role == TensorRole::kFfnRouter) return DType::F32;  // llama.cpp keeps routers F32
  if (role == TensorRole::kSsmConv) return DType::F32;    // and the short convolutions
  if (role == TensorRole::kFfnGateExpsBias || role == TensorRole::kFfnUpExpsBias ||
      role == TensorRole::kFfnDownExpsBias) {
    return DType::F32;
  }
  const bool expert = role == TensorRole::kFfnGateExps || role == TensorRole::kFfnUpExps ||
                      role == TensorRole::kFfnDownExps;
  DType want = DType::F32;
  if (expert && !o.experts_type.empty()) {
    if (auto t = dtype_from_name(o.experts_type)) want = *t;
  } else if (o.type == "Q4_K_M" || o.type == "Q5_K_M") {
    want = o.type == "Q4_K_M" ? DType::Q4_K : DType::Q5_K;
    // llama.cpp's "use more bits" layers: the first and last eighth, and every third between.
    const int64_t l = ref.layer, n = cfg.n_layer;
    const bool more = l >= 0 && (l < n / 8 || l >= 7 * n / 8 || (l - n / 8) % 3 == 2);
    const bool down = role == TensorRole::kFfnDown || role == TensorRole::kFfnDownExps ||
                      role == TensorRole::kFfnDownShexp;
    if (role == TensorRole::kOutput || ((role == TensorRole::kAttnV || down) && more)) {
      want = DType::Q6_K;
    }
  } else if (auto t = dtype_from_name(o.type)) {
    want = *t;
  }
  // Rows that do not fit the block size fall back to Q8_0, then F32 (as llama.cpp does).
  for (DType t : {want, DType::Q8_0, DType::F32}) {
    if (t == DType::F32 ||
        (kernels::can_quantize(t) && dtype_row_bytes(t, static_cast<uint64_t>(ref.shape[0])))) {
      return t;
    }
  }
  return DType::F32;
}

// Standard deviation (or, for norms, spread around 1) of a tensor's random values.
float weight_scale(const TensorRef& ref, const ModelConfig& cfg) {
  const float n_in = static_cast<float>(ref.shape[0]);
  switch (ref.spec->role) {
    case TensorRole::kTokEmbd:
    case TensorRole::kOutput:
      return 4.0f / std::sqrt(static_cast<float>(cfg.n_embd));
    case TensorRole::kFfnRouter:
      return 3.0f / std::sqrt(n_in);
    case TensorRole::kAttnQBias:
    case TensorRole::kAttnKBias:
    case TensorRole::kAttnVBias:
      return 0.2f;
    case TensorRole::kFfnShexpGate:
      return 1.0f / std::sqrt(n_in);
    case TensorRole::kAttnKB:  // stored transposed: k_nope sums over the latent (shape[1])
      return 1.0f / std::sqrt(static_cast<float>(ref.shape[1]));
    case TensorRole::kFfnExpProbsB:
      return 0.1f;  // of the order of the sigmoid scores' gaps: changes some selections
    case TensorRole::kSsmDtBias:
    case TensorRole::kAttnSinks:
    case TensorRole::kFfnRouterBias:
      return 1.0f;
    case TensorRole::kAttnOutBias:
    case TensorRole::kFfnDownExpsBias:
      return 0.2f;
    case TensorRole::kFfnGateExpsBias:
    case TensorRole::kFfnUpExpsBias:
      return 0.5f;
    default:
      return 1.0f / std::sqrt(n_in);
  }
}

bool is_norm(TensorRole r) {
  return r == TensorRole::kOutputNorm || r == TensorRole::kAttnNorm || r == TensorRole::kFfnNorm ||
         r == TensorRole::kAttnQNorm || r == TensorRole::kAttnKNorm ||
         r == TensorRole::kNextnEnorm || r == TensorRole::kNextnHnorm ||
         r == TensorRole::kNextnSharedHeadNorm || r == TensorRole::kAttnQANorm ||
         r == TensorRole::kAttnKvANorm || r == TensorRole::kSsmNorm;
}

// The first layer's tensors by role, for TestModelOptions::repeat_weights.
using LayerCache = std::map<int, std::pair<DType, std::vector<uint8_t>>>;

Status make_tensor(gguf::Writer& w, const TestModelOptions& o, const ModelConfig& cfg,
                   const TensorRef& ref, LayerCache& cache) {
  const int role = static_cast<int>(ref.spec->role);
  if (o.repeat_weights && ref.layer >= 0 && cache.count(role)) {
    const auto& [t, bytes] = cache[role];
    return w.add_tensor(ref.name, t, ref.shape, bytes);
  }
  Rng rng{hash_name(o.seed, ref.name)};
  const DType type = pick_type(o, ref, cfg);
  const int64_t row = ref.shape[0];
  int64_t n_rows = 1;
  for (size_t i = 1; i < ref.shape.size(); ++i) n_rows *= ref.shape[i];
  const size_t row_bytes = *dtype_row_bytes(type, static_cast<uint64_t>(row));
  std::vector<uint8_t> data(row_bytes * static_cast<size_t>(n_rows));
  const int64_t n_copies = o.repeat_weights && ref.shape.size() == 3 ? ref.shape[2] : 1;
  n_rows /= n_copies;  // generate expert 0, copy it below
  std::vector<float> vals(static_cast<size_t>(row));
  const float s = weight_scale(ref, cfg);
  const bool norm = is_norm(ref.spec->role);
  for (int64_t r = 0; r < n_rows; ++r) {
    for (float& v : vals) v = norm ? 1.0f + 0.1f * rng.unit() : s * rng.unit();
    if (ref.spec->role == TensorRole::kSsmA) {  // -exp(A_log), A in [1, 16] as Qwen3-Next's init
      for (float& v : vals) v = -std::exp(std::log(4.0f) + 0.8f * v);
    }
    uint8_t* dst = data.data() + static_cast<size_t>(r) * row_bytes;
    if (type == DType::F32) {
      std::memcpy(dst, vals.data(), row_bytes);
    } else if (!kernels::quantize_row(type, vals.data(), dst, row)) {
      return unimplemented("cannot quantize to " + std::string(dtype_name(type)));
    }
  }
  const size_t slice = row_bytes * static_cast<size_t>(n_rows);
  for (int64_t e = 1; e < n_copies; ++e) {
    std::memcpy(data.data() + static_cast<size_t>(e) * slice, data.data(), slice);
  }
  if (o.repeat_weights && ref.layer >= 0) cache[role] = {type, data};
  return w.add_tensor(ref.name, type, ref.shape, data);
}

// GPT-2 byte-level alphabet: byte b as the unicode character the BPE vocabularies use.
std::string byte_token(int b) {
  int cp = b;
  if (!((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255))) {
    int n = 0;
    for (int x = 0; x < b; ++x) {
      if (!((x >= 33 && x <= 126) || (x >= 161 && x <= 172) || (x >= 174 && x <= 255))) ++n;
    }
    cp = 256 + n;
  }
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return s;
}

constexpr const char* kChatMl =
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + "
    "message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|im_start|>assistant\\n' }}{% endif %}";

// Qwen-VL style: list content renders text parts and one placeholder per image part.
constexpr const char* kChatMlVision =
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' }}"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for part in message['content'] %}{% if part['type'] == 'image_url' or "
    "part['type'] == 'image' %}{{ '<|vision_start|><|image_pad|><|vision_end|>' }}"
    "{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}{% endfor %}{% endif %}"
    "{{ '<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|im_start|>assistant\\n' }}{% endif %}";

gguf::Value str_array(const std::vector<std::string>& v) {
  gguf::Array a;
  a.elem_type = gguf::ValueType::kString;
  for (const auto& s : v) a.items.push_back(gguf::Value::str(s));
  return gguf::Value::array(std::move(a));
}
gguf::Value int_array(const std::vector<int32_t>& v) {
  gguf::Array a;
  a.elem_type = gguf::ValueType::kInt32;
  for (int32_t x : v) a.items.push_back(gguf::Value::i32(x));
  return gguf::Value::array(std::move(a));
}

// Synthetic vocabulary: 256 byte tokens, then <|endoftext|>, <|im_start|>, <|im_end|>, and for
// vision families <|vision_start|>, <|vision_end|>, <|image_pad|>.
int64_t add_synthetic_vocab(gguf::Writer& w, int64_t n_vocab, bool vision) {
  if (n_vocab < 262) n_vocab = vision ? 262 : std::max<int64_t>(n_vocab, 259);
  std::vector<std::string> tokens;
  std::vector<int32_t> types;
  for (int b = 0; b < 256; ++b) {
    tokens.push_back(byte_token(b));
    types.push_back(1);
  }
  for (const char* s : {"<|endoftext|>", "<|im_start|>", "<|im_end|>"}) {
    tokens.emplace_back(s);
    types.push_back(3);
  }
  if (vision) {
    for (const char* s : {"<|vision_start|>", "<|vision_end|>", "<|image_pad|>"}) {
      tokens.emplace_back(s);
      types.push_back(3);
    }
  }
  while (static_cast<int64_t>(tokens.size()) < n_vocab) {
    tokens.push_back("[PAD" + std::to_string(tokens.size()) + "]");
    types.push_back(5);
  }
  w.set("tokenizer.ggml.model", gguf::Value::str("gpt2"));
  w.set("tokenizer.ggml.pre", gguf::Value::str("default"));
  w.set("tokenizer.ggml.tokens", str_array(tokens));
  w.set("tokenizer.ggml.token_type", int_array(types));
  w.set("tokenizer.ggml.merges", str_array({}));
  w.set("tokenizer.ggml.bos_token_id", gguf::Value::u32(256));
  w.set("tokenizer.ggml.eos_token_id", gguf::Value::u32(258));
  w.set("tokenizer.ggml.add_bos_token", gguf::Value::boolean(false));
  w.set("tokenizer.chat_template", gguf::Value::str(vision ? kChatMlVision : kChatMl));
  return n_vocab;
}

Result<nlohmann::json> read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) return not_found("cannot open " + path);
  nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return invalid_argument(path + " is not valid JSON");
  return j;
}

// A real vocabulary from tokenizers/<name>/tokenizer.json (+ tokenizer_config.json).
Result<int64_t> add_fixture_vocab(gguf::Writer& w, const TestModelOptions& o) {
  static const std::map<std::string, std::string> kPre = {{"qwen3", "qwen2"},
                                                          {"llama3", "llama-bpe"},
                                                          {"deepseek_v3", "deepseek-v3"},
                                                          {"gptoss", "gpt-4o"}};
  auto pre = kPre.find(o.tokenizer_fixture);
  if (pre == kPre.end()) {
    return unimplemented("tokenizer fixture '" + o.tokenizer_fixture +
                         "' is not supported (qwen3, llama3, deepseek_v3, gptoss)");
  }
  const std::string dir = o.fixtures_dir + "/tokenizers/" + o.tokenizer_fixture;
  ARC_ASSIGN_OR_RETURN(nlohmann::json tok, read_json(dir + "/tokenizer.json"));
  ARC_ASSIGN_OR_RETURN(nlohmann::json conf, read_json(dir + "/tokenizer_config.json"));
  const auto& vocab = tok["model"]["vocab"];
  if (!vocab.is_object()) return invalid_argument(dir + "/tokenizer.json has no model.vocab");
  std::vector<std::pair<int64_t, std::string>> entries;
  std::map<int64_t, bool> special;
  for (auto it = vocab.begin(); it != vocab.end(); ++it) {
    entries.emplace_back(it.value().get<int64_t>(), it.key());
  }
  for (const auto& a : tok["added_tokens"]) {
    entries.emplace_back(a["id"].get<int64_t>(), a["content"].get<std::string>());
    special[a["id"].get<int64_t>()] = a.value("special", false);
  }
  int64_t n = 0;
  for (const auto& e : entries) n = std::max(n, e.first + 1);
  std::vector<std::string> tokens(static_cast<size_t>(n));
  std::vector<int32_t> types(static_cast<size_t>(n), 5);
  for (const auto& e : entries) {
    tokens[e.first] = e.second;
    auto sp = special.find(e.first);
    types[e.first] = sp == special.end() ? 1 : (sp->second ? 3 : 4);
  }
  for (int64_t i = 0; i < n; ++i) {
    if (tokens[i].empty()) tokens[i] = "[PAD" + std::to_string(i) + "]";
  }
  std::vector<std::string> merges;
  for (const auto& m : tok["model"]["merges"]) {
    merges.push_back(m.is_string() ? m.get<std::string>()
                                   : m[0].get<std::string>() + " " + m[1].get<std::string>());
  }
  auto token_id = [&](const nlohmann::json& v) -> int64_t {
    std::string s =
        v.is_object() ? v.value("content", "") : (v.is_string() ? v.get<std::string>() : "");
    for (const auto& e : entries) {
      if (!s.empty() && e.second == s) return e.first;
    }
    return -1;
  };
  w.set("tokenizer.ggml.model", gguf::Value::str("gpt2"));
  w.set("tokenizer.ggml.pre", gguf::Value::str(pre->second));
  w.set("tokenizer.ggml.tokens", str_array(tokens));
  w.set("tokenizer.ggml.token_type", int_array(types));
  w.set("tokenizer.ggml.merges", str_array(merges));
  if (int64_t b = conf.contains("bos_token") ? token_id(conf["bos_token"]) : -1; b >= 0) {
    w.set("tokenizer.ggml.bos_token_id", gguf::Value::u32(static_cast<uint32_t>(b)));
  }
  if (int64_t e = conf.contains("eos_token") ? token_id(conf["eos_token"]) : -1; e >= 0) {
    w.set("tokenizer.ggml.eos_token_id", gguf::Value::u32(static_cast<uint32_t>(e)));
  }
  w.set("tokenizer.ggml.add_bos_token", gguf::Value::boolean(conf.value("add_bos_token", false)));
  if (conf.contains("chat_template") && conf["chat_template"].is_string()) {
    w.set("tokenizer.chat_template", gguf::Value::str(conf["chat_template"].get<std::string>()));
  }
  return n;
}

Result<gguf::Writer> make_writer(const TestModelOptions& o) {
  ModelConfig cfg;
  cfg.family = o.family;
  cfg.n_layer = o.n_layer;
  cfg.n_embd = o.n_embd;
  cfg.n_head = o.n_head;
  cfg.n_kv_head = o.n_kv_head;
  cfg.head_dim = o.head_dim;
  cfg.rot_dim = o.head_dim;
  cfg.n_ctx_train = o.n_ctx;
  cfg.tied_embeddings = o.tied_embeddings;
  const bool moe_family = o.family == Family::kQwen3Moe || o.family == Family::kQwen2Moe ||
                          o.family == Family::kQwen3VlMoe || o.family == Family::kGlm4Moe ||
                          o.family == Family::kMiniMaxM2 || o.family == Family::kGptOss ||
                          o.family == Family::kDeepSeek2 || o.family == Family::kQwen3Next;
  if (!o.experts_type.empty()) {
    auto t = dtype_from_name(o.experts_type);
    if (!t || !kernels::can_quantize(*t)) {
      return invalid_argument("experts type '" + o.experts_type + "' cannot be written");
    }
  }
  const int64_t n_expert = o.n_expert > 0 ? o.n_expert : (moe_family ? 8 : 0);
  if (moe_family && o.n_expert < 0) return invalid_argument("expert count must be positive");
  switch (o.family) {
    case Family::kLlama:
      cfg.ffn = n_expert > 0 ? FfnKind::kMoe : FfnKind::kDense;
      break;
    case Family::kQwen3:
      cfg.ffn = FfnKind::kDense;
      cfg.qk_norm = true;
      break;
    case Family::kQwen2Moe:
      cfg.ffn = FfnKind::kMoeShared;
      cfg.qkv_bias = true;
      break;
    case Family::kQwen3Moe:
    case Family::kQwen3VlMoe:
      cfg.ffn = FfnKind::kMoe;
      cfg.qk_norm = true;
      break;
    case Family::kGlm4Moe:  // GLM-4.5's shape: one shared expert of the routed experts' width
      cfg.ffn = FfnKind::kMoeShared;
      cfg.qkv_bias = true;
      cfg.qk_norm = o.qk_norm;
      cfg.n_dense_lead = std::clamp<int64_t>(o.n_dense_lead, 0, o.n_layer);
      cfg.n_nextn = o.n_nextn < 0 ? 1 : o.n_nextn;
      cfg.router_sigmoid = true;
      cfg.expert_weights_scale = 2.5f;  // GLM-4.5's routed_scaling_factor
      cfg.rot_dim = o.head_dim / 2;
      break;
    case Family::kMiniMaxM2:
      cfg.ffn = FfnKind::kMoe;
      cfg.qk_norm = cfg.qk_norm_full = true;
      cfg.router_sigmoid = true;
      cfg.rot_dim = o.head_dim / 2;
      break;
    case Family::kDeepSeek2:  // DeepSeek-V3's shape, scaled down
      cfg.ffn = FfnKind::kMoeShared;
      cfg.n_kv_head = 1;
      cfg.rot_dim = std::max<int64_t>(2, o.head_dim / 3 / 2 * 2);
      cfg.q_lora_rank = std::max<int64_t>(o.q_lora_rank, 0);
      cfg.kv_lora_rank = o.kv_lora_rank;
      cfg.v_head_dim = o.v_head_dim;
      cfg.n_dense_lead = std::clamp<int64_t>(o.n_dense_lead, 0, o.n_layer);
      // The MTP layer as llama.cpp's DeepSeek-V3.2 converter writes it: blk.<n_layer> holds an
      // MLA + MoE layer and the nextn tensors, block_count counts it.
      cfg.n_nextn = std::max<int64_t>(o.n_nextn, 0);
      cfg.router_sigmoid = true;
      cfg.expert_weights_scale = 2.5f;  // DeepSeek-V3's routed_scaling_factor
      if (n_expert % 4 == 0 && o.n_expert_used <= 2 * (n_expert / 4)) {
        cfg.n_expert_group = 4;
        cfg.n_expert_group_used = 2;
      }
      break;
    case Family::kQwen3Next:  // Qwen3-Next's shape, scaled down
      cfg.ffn = FfnKind::kMoeShared;
      cfg.qk_norm = true;
      cfg.attn_out_gate = true;
      cfg.rot_dim = std::max<int64_t>(2, o.head_dim / 4 / 2 * 2);
      cfg.full_attn_interval = std::max<int64_t>(o.full_attn_interval, 1);
      cfg.ssm_conv_kernel = o.ssm_conv_kernel;
      cfg.ssm_k_heads = o.ssm_k_heads;
      cfg.ssm_v_heads = o.ssm_v_heads;
      cfg.ssm_head_k_dim = o.ssm_head_dim;
      cfg.ssm_head_v_dim = o.ssm_head_dim;
      break;
    case Family::kGptOss:  // the rest of its tensors are always present (family table)
      cfg.ffn = FfnKind::kMoe;
      cfg.qkv_bias = true;
      cfg.tied_embeddings = false;  // gpt-oss always has output.weight
      break;
  }
  if (o.rot_dim > 0) cfg.rot_dim = o.rot_dim;
  if (cfg.is_moe()) {
    cfg.n_expert = n_expert;
    cfg.n_expert_used = o.n_expert_used;
    cfg.n_ff_exp = o.n_ff_exp;
    if (cfg.ffn == FfnKind::kMoeShared) {
      const bool one_shared = o.family == Family::kGlm4Moe || o.family == Family::kDeepSeek2;
      cfg.n_ff_shexp = one_shared ? o.n_ff_exp : o.n_ff_shexp;
    }
    if (cfg.n_dense_lead > 0) cfg.n_ff = o.n_ff;
  } else {
    cfg.n_ff = o.n_ff;
  }

  gguf::Writer w;
  const std::string a(family_name(o.family));
  w.set("general.architecture", gguf::Value::str(a));
  w.set("general.name", gguf::Value::str("arclight test " + a));
  int64_t n_vocab = 0;
  if (!o.tokenizer_fixture.empty()) {
    ARC_ASSIGN_OR_RETURN(n_vocab, add_fixture_vocab(w, o));
  } else {
    n_vocab = add_synthetic_vocab(w, o.n_vocab, o.family == Family::kQwen3VlMoe);
  }
  cfg.n_vocab = n_vocab;
  if (Status s = cfg.validate(); !s.ok()) return s;
  if (!o.chat_template.empty()) {
    w.set("tokenizer.chat_template", gguf::Value::str(o.chat_template));
  }

  auto u32 = [](int64_t x) { return gguf::Value::u32(static_cast<uint32_t>(x)); };
  w.set(a + ".block_count", u32(cfg.n_layer + cfg.n_nextn));
  w.set(a + ".context_length", u32(o.n_ctx));
  w.set(a + ".embedding_length", u32(cfg.n_embd));
  w.set(a + ".attention.head_count", u32(cfg.n_head));
  w.set(a + ".attention.head_count_kv", u32(cfg.n_kv_head));
  w.set(a + ".attention.key_length", u32(cfg.head_dim));
  w.set(a + ".attention.value_length", u32(cfg.head_dim));
  w.set(a + ".attention.layer_norm_rms_epsilon", gguf::Value::f32(1e-6f));
  w.set(a + ".rope.freq_base", gguf::Value::f32(o.family == Family::kLlama    ? 500000.0f
                                                : o.family == Family::kGptOss ? 150000.0f
                                                                              : 1e6f));
  if (o.family == Family::kGptOss) {
    // As the converter writes gpt-oss: YaRN x32 over an original 4096 context, a window of 128.
    w.set(a + ".rope.scaling.type", gguf::Value::str("yarn"));
    w.set(a + ".rope.scaling.factor", gguf::Value::f32(32.0f));
    w.set(a + ".rope.scaling.original_context_length", u32(4096));
    w.set(a + ".rope.scaling.yarn_beta_fast", gguf::Value::f32(32.0f));
    w.set(a + ".rope.scaling.yarn_beta_slow", gguf::Value::f32(1.0f));
    w.set(a + ".attention.sliding_window", u32(o.sliding_window > 0 ? o.sliding_window : 128));
  }
  if (o.family == Family::kQwen3VlMoe) {
    // Qwen3-VL's split of the rotated pairs ({24, 20, 20} of 64), scaled to this head size.
    const int32_t half = static_cast<int32_t>(cfg.head_dim / 2), hw = half * 5 / 16;
    gguf::Array sec;
    sec.elem_type = gguf::ValueType::kInt32;
    for (int32_t x : {half - 2 * hw, hw, hw, 0}) sec.items.push_back(gguf::Value::i32(x));
    w.set(a + ".rope.dimension_sections", gguf::Value::array(std::move(sec)));
    w.set(a + ".n_deepstack_layers", u32(std::min(o.n_deepstack, cfg.n_layer)));
  }
  if (cfg.is_moe()) {
    w.set(a + ".expert_count", u32(cfg.n_expert));
    w.set(a + ".expert_used_count", u32(cfg.n_expert_used));
  }
  if (cfg.rot_dim != cfg.head_dim) w.set(a + ".rope.dimension_count", u32(cfg.rot_dim));
  if (o.family == Family::kLlama) {
    w.set(a + ".feed_forward_length", u32(cfg.is_moe() ? cfg.n_ff_exp : cfg.n_ff));
  } else if (o.family == Family::kGlm4Moe) {  // the keys llama.cpp's converter writes
    w.set(a + ".feed_forward_length", u32(cfg.n_ff > 0 ? cfg.n_ff : o.n_ff));
    w.set(a + ".expert_feed_forward_length", u32(cfg.n_ff_exp));
    w.set(a + ".expert_shared_count", u32(1));
    w.set(a + ".leading_dense_block_count", u32(cfg.n_dense_lead));
    w.set(a + ".expert_gating_func", u32(2));  // sigmoid
    w.set(a + ".expert_weights_scale", gguf::Value::f32(cfg.expert_weights_scale));
    w.set(a + ".expert_weights_norm", gguf::Value::boolean(true));
    w.set(a + ".nextn_predict_layers", u32(cfg.n_nextn));
  } else if (o.family == Family::kDeepSeek2) {  // the keys of llama.cpp's current converter
    w.set(a + ".feed_forward_length", u32(o.n_ff));
    w.set(a + ".expert_feed_forward_length", u32(cfg.n_ff_exp));
    w.set(a + ".expert_shared_count", u32(1));
    w.set(a + ".leading_dense_block_count", u32(cfg.n_dense_lead));
    w.set(a + ".expert_gating_func", u32(2));  // sigmoid
    w.set(a + ".expert_weights_scale", gguf::Value::f32(cfg.expert_weights_scale));
    w.set(a + ".expert_weights_norm", gguf::Value::boolean(true));
    if (cfg.n_expert_group > 1) {
      w.set(a + ".expert_group_count", u32(cfg.n_expert_group));
      w.set(a + ".expert_group_used_count", u32(cfg.n_expert_group_used));
    }
    if (cfg.n_nextn > 0) w.set(a + ".nextn_predict_layers", u32(cfg.n_nextn));
    if (cfg.q_lora_rank > 0) w.set(a + ".attention.q_lora_rank", u32(cfg.q_lora_rank));
    w.set(a + ".attention.kv_lora_rank", u32(cfg.kv_lora_rank));
    // MLA as MQA: the cache's key (latent + rope key) and value (latent) lengths, then the heads'.
    w.set(a + ".attention.key_length", u32(cfg.kv_lora_rank + cfg.rot_dim));
    w.set(a + ".attention.value_length", u32(cfg.kv_lora_rank));
    w.set(a + ".attention.key_length_mla", u32(cfg.head_dim));
    w.set(a + ".attention.value_length_mla", u32(cfg.v_head_dim));
    w.set(a + ".rope.scaling.type", gguf::Value::str("yarn"));
    w.set(a + ".rope.scaling.factor", gguf::Value::f32(40.0f));
    w.set(a + ".rope.scaling.original_context_length", u32(4096));
    w.set(a + ".rope.scaling.yarn_log_multiplier", gguf::Value::f32(0.1f));
    w.set(a + ".rope.freq_base", gguf::Value::f32(10000.0f));
  } else if (o.family == Family::kQwen3Next) {  // the keys of llama.cpp's converter
    w.set(a + ".expert_feed_forward_length", u32(cfg.n_ff_exp));
    w.set(a + ".expert_shared_feed_forward_length", u32(cfg.n_ff_shexp));
    w.set(a + ".full_attention_interval", u32(cfg.full_attn_interval));
    w.set(a + ".ssm.conv_kernel", u32(cfg.ssm_conv_kernel));
    w.set(a + ".ssm.inner_size", u32(cfg.ssm_inner()));
    w.set(a + ".ssm.state_size", u32(cfg.ssm_head_k_dim));
    w.set(a + ".ssm.time_step_rank", u32(cfg.ssm_v_heads));
    w.set(a + ".ssm.group_count", u32(cfg.ssm_k_heads));
  } else if (o.family == Family::kMiniMaxM2) {  // the converter writes intermediate_size twice
    w.set(a + ".feed_forward_length", u32(cfg.n_ff_exp));  // llama.cpp sizes experts by it
    w.set(a + ".expert_feed_forward_length", u32(cfg.n_ff_exp));
    w.set(a + ".expert_gating_func", u32(2));  // sigmoid
  } else if (cfg.is_moe()) {
    w.set(a + ".expert_feed_forward_length", u32(cfg.n_ff_exp));
    if (cfg.ffn == FfnKind::kMoeShared) {
      w.set(a + ".expert_shared_feed_forward_length", u32(cfg.n_ff_shexp));
    }
  } else {
    w.set(a + ".feed_forward_length", u32(cfg.n_ff));
  }

  Status first;
  LayerCache cache;
  for_each_tensor(cfg, [&](const TensorRef& ref) {
    if (first.ok()) first = make_tensor(w, o, cfg, ref, cache);
  });
  for_each_mtp_tensor(cfg,
                      [&](const TensorRef& ref) {  // nextn layers (glm4moe, deepseek2), all tensors
                        if (first.ok()) first = make_tensor(w, o, cfg, ref, cache);
                      });
  if (!first.ok()) return first;
  return w;
}

}  // namespace

Status write_test_model(const TestModelOptions& opt, const std::string& path) {
  ARC_ASSIGN_OR_RETURN(gguf::Writer w, make_writer(opt));
  return w.write(path);
}

Result<std::vector<uint8_t>> build_test_model(const TestModelOptions& opt) {
  ARC_ASSIGN_OR_RETURN(gguf::Writer w, make_writer(opt));
  return w.to_bytes();
}

}  // namespace arc
