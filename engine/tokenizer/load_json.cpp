// Loading a Hugging Face tokenizer.json (+ tokenizer_config.json).
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tokenizer_impl.h"

namespace arc {

namespace {

using json = nlohmann::json;

constexpr int64_t kMaxVocab = 16 * 1024 * 1024;
const char* const kSpaceMark = "\xE2\x96\x81";  // ▁

Result<std::string> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return not_found(fmt::format("cannot open '{}'", path));
  std::ostringstream ss;
  ss << f.rdbuf();
  if (f.bad()) return io_error(fmt::format("cannot read '{}'", path));
  return ss.str();
}

std::string type_of(const json& j) {
  if (j.is_object() && j.contains("type") && j["type"].is_string())
    return j["type"].get<std::string>();
  return "";
}

// {"String": "x"} or {"Regex": "x"}; returns false for a regex when only strings are allowed.
bool pattern_of(const json& j, std::string& text, bool& is_regex) {
  if (!j.is_object()) return false;
  if (j.contains("String") && j["String"].is_string()) {
    text = j["String"].get<std::string>();
    is_regex = false;
    return true;
  }
  if (j.contains("Regex") && j["Regex"].is_string()) {
    text = j["Regex"].get<std::string>();
    is_regex = true;
    return true;
  }
  return false;
}

std::string escape_regex(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

Status add_normalizer(const json& j, Tokenizer::Impl& m) {
  if (j.is_null()) return ok_status();
  std::string t = type_of(j);
  if (t == "Sequence") {
    if (!j.contains("normalizers") || !j["normalizers"].is_array()) {
      return data_loss("normalizer Sequence has no 'normalizers' array");
    }
    for (const json& n : j["normalizers"]) ARC_RETURN_IF_ERROR(add_normalizer(n, m));
    return ok_status();
  }
  if (t == "NFC") {
    m.normalizers.push_back({NormalizerStep::Kind::kNfc, "", ""});
    return ok_status();
  }
  if (t == "Prepend") {
    m.normalizers.push_back({NormalizerStep::Kind::kPrepend, j.value("prepend", ""), ""});
    return ok_status();
  }
  if (t == "Replace") {
    std::string pat;
    bool is_regex = false;
    if (!j.contains("pattern") || !pattern_of(j["pattern"], pat, is_regex) || is_regex) {
      return unimplemented("normalizer Replace with a regex pattern is not supported");
    }
    m.normalizers.push_back({NormalizerStep::Kind::kReplace, pat, j.value("content", "")});
    return ok_status();
  }
  return unimplemented(fmt::format(
      "normalizer '{}' is not supported (supported: NFC, Prepend, Replace, Sequence)", t));
}

Status add_pre_tokenizer(const json& j, Tokenizer::Impl& m) {
  if (j.is_null()) return ok_status();
  std::string t = type_of(j);
  if (t == "Sequence") {
    if (!j.contains("pretokenizers") || !j["pretokenizers"].is_array()) {
      return data_loss("pre_tokenizer Sequence has no 'pretokenizers' array");
    }
    for (const json& p : j["pretokenizers"]) ARC_RETURN_IF_ERROR(add_pre_tokenizer(p, m));
    return ok_status();
  }
  if (t == "Split") {
    std::string pat;
    bool is_regex = false;
    if (!j.contains("pattern") || !pattern_of(j["pattern"], pat, is_regex)) {
      return data_loss("pre_tokenizer Split has no 'pattern' with a String or Regex");
    }
    std::string behavior = j.value("behavior", "Isolated");
    if (behavior != "Isolated" || j.value("invert", false)) {
      return unimplemented(
          fmt::format("pre_tokenizer Split with behavior '{}'{} is not supported (only Isolated)",
                      behavior, j.value("invert", false) ? " and invert" : ""));
    }
    return m.pre.add_step(is_regex ? pat : escape_regex(pat));
  }
  if (t == "ByteLevel") {
    if (j.value("add_prefix_space", false)) m.byte_level_prefix_space = true;
    if (j.value("use_regex", true)) {
      return m.pre.add_step(find_known_pre_tokenizer("gpt2")->patterns[0]);
    }
    return ok_status();
  }
  if (t == "Metaspace") {
    // Without splitting, Metaspace is the SentencePiece normalisation: ▁ for spaces and one ▁
    // before the text.
    if (j.value("split", false)) {
      return unimplemented("pre_tokenizer Metaspace with split=true is not supported");
    }
    std::string repl = j.value("replacement", std::string(kSpaceMark));
    m.normalizers.push_back({NormalizerStep::Kind::kReplace, " ", repl});
    std::string scheme =
        j.value("prepend_scheme", j.value("add_prefix_space", true) ? "always" : "never");
    if (scheme != "never") m.normalizers.push_back({NormalizerStep::Kind::kPrepend, repl, ""});
    return ok_status();
  }
  return unimplemented(fmt::format(
      "pre_tokenizer '{}' is not supported (supported: Split, ByteLevel, Metaspace, Sequence)", t));
}

// True when the decoder undoes SentencePiece's leading ▁ (a Strip of one space at the start, or
// Metaspace that prepends).
bool decoder_strips_space(const json& j) {
  std::string t = type_of(j);
  if (t == "Sequence" && j.contains("decoders") && j["decoders"].is_array()) {
    for (const json& d : j["decoders"]) {
      if (decoder_strips_space(d)) return true;
    }
    return false;
  }
  if (t == "Strip") return j.value("content", "") == " " && j.value("start", 0) > 0;
  if (t == "Metaspace")
    return j.value("prepend_scheme", "always") != "never" && j.value("add_prefix_space", true);
  return false;
}

bool decoder_has(const json& j, const std::string& type) {
  if (type_of(j) == type) return true;
  if (type_of(j) == "Sequence" && j.contains("decoders") && j["decoders"].is_array()) {
    for (const json& d : j["decoders"]) {
      if (decoder_has(d, type)) return true;
    }
  }
  return false;
}

std::optional<std::string> token_content(const json& j) {
  if (j.is_string()) return j.get<std::string>();
  if (j.is_object() && j.contains("content") && j["content"].is_string()) {
    return j["content"].get<std::string>();
  }
  return std::nullopt;
}

Status load(const json& tj, const json& cj, Tokenizer::Impl& m) {
  if (!tj.is_object()) return data_loss("tokenizer.json is not a JSON object");
  if (!tj.contains("model") || !tj["model"].is_object()) {
    return data_loss("tokenizer.json has no 'model' object");
  }
  const json& model = tj["model"];
  std::string mtype = type_of(model);
  if (mtype.empty() && model.contains("merges")) mtype = "BPE";
  if (mtype != "BPE") {
    return unimplemented(fmt::format(
        "tokenizer model '{}' is not supported (only BPE: byte-level or SentencePiece-style)",
        mtype.empty() ? "unknown" : mtype));
  }
  if (!model.contains("vocab") || !model["vocab"].is_object()) {
    return data_loss("tokenizer.json model has no 'vocab' object");
  }
  const json& normalizer = tj.contains("normalizer") ? tj["normalizer"] : json();
  const json& pre = tj.contains("pre_tokenizer") ? tj["pre_tokenizer"] : json();
  const json& decoder = tj.contains("decoder") ? tj["decoder"] : json();

  m.byte_fallback = model.value("byte_fallback", false);
  m.ignore_merges = model.value("ignore_merges", false);
  m.fuse_unk = model.value("fuse_unk", false);
  bool spm = m.byte_fallback || decoder_has(decoder, "ByteFallback") ||
             decoder_has(decoder, "Metaspace") || type_of(pre) == "Metaspace";
  bool byte_level = type_of(pre) == "ByteLevel" || decoder_has(decoder, "ByteLevel");
  if (!spm && !byte_level && pre.is_object() && type_of(pre) == "Sequence") {
    for (const json& p : pre["pretokenizers"]) byte_level |= type_of(p) == "ByteLevel";
  }
  if (!spm && !byte_level) {
    return unimplemented(
        "this BPE tokenizer is neither byte-level (ByteLevel pre-tokenizer/decoder) nor "
        "SentencePiece-style (byte_fallback / Metaspace); it is not supported");
  }
  m.model = spm ? TokenizerModel::kSentencePiece : TokenizerModel::kByteLevelBpe;

  // Vocabulary; ids may leave holes (filled later by added tokens or left unused).
  int64_t max_id = -1;
  for (auto it = model["vocab"].begin(); it != model["vocab"].end(); ++it) {
    if (!it.value().is_number_integer()) {
      return data_loss(fmt::format("vocab entry '{}' has a non-integer id", it.key()));
    }
    int64_t id = it.value().get<int64_t>();
    if (id < 0 || id >= kMaxVocab) {
      return data_loss(
          fmt::format("vocab entry '{}' has id {} outside 0..{}", it.key(), id, kMaxVocab - 1));
    }
    max_id = std::max(max_id, id);
  }
  std::vector<AddedToken> added;
  if (tj.contains("added_tokens")) {
    if (!tj["added_tokens"].is_array()) return data_loss("'added_tokens' is not an array");
    for (const json& a : tj["added_tokens"]) {
      if (!a.is_object() || !a.contains("id") || !a["id"].is_number_integer() ||
          !a.contains("content") || !a["content"].is_string()) {
        return data_loss("an added_tokens entry lacks an integer 'id' or a string 'content'");
      }
      AddedToken t;
      t.id = a["id"].get<TokenId>();
      if (t.id < 0 || t.id >= kMaxVocab) {
        return data_loss(fmt::format("added token '{}' has id {} out of range",
                                     a["content"].get<std::string>(), t.id));
      }
      t.content = a["content"].get<std::string>();
      t.special = a.value("special", false);
      t.lstrip = a.value("lstrip", false);
      t.rstrip = a.value("rstrip", false);
      max_id = std::max<int64_t>(max_id, t.id);
      added.push_back(std::move(t));
    }
  }
  if (max_id < 0) return data_loss("tokenizer.json has an empty vocabulary");
  m.pieces.assign(size_t(max_id + 1), std::string());
  m.types.assign(size_t(max_id + 1), TokenType::kUndefined);
  for (auto it = model["vocab"].begin(); it != model["vocab"].end(); ++it) {
    size_t id = size_t(it.value().get<int64_t>());
    m.pieces[id] = it.key();
    m.types[id] = TokenType::kNormal;
    if (spm && m.byte_fallback && it.key().size() == 6 && it.key().rfind("<0x", 0) == 0) {
      m.types[id] = TokenType::kByte;
    }
  }
  for (const AddedToken& a : added) {
    m.pieces[size_t(a.id)] = a.content;
    m.types[size_t(a.id)] = a.special ? TokenType::kControl : TokenType::kUserDefined;
  }
  m.added = std::move(added);
  if (model.contains("unk_token") && model["unk_token"].is_string()) {
    std::string unk = model["unk_token"].get<std::string>();
    for (size_t i = 0; i < m.pieces.size(); ++i) {
      if (m.pieces[i] == unk) {
        m.unk_id = TokenId(i);
        m.types[i] = TokenType::kUnknown;
        break;
      }
    }
  }

  ARC_RETURN_IF_ERROR(add_normalizer(normalizer, m));
  ARC_RETURN_IF_ERROR(add_pre_tokenizer(pre, m));
  m.strip_leading_space = spm && decoder_strips_space(decoder);
  m.pre_name = spm ? "" : m.pre.gguf_name();
  ARC_RETURN_IF_ERROR(m.finish());

  // Merges: "a b" strings or ["a", "b"] pairs, ranked by position.
  if (model.contains("merges")) {
    const json& merges = model["merges"];
    if (!merges.is_array()) return data_loss("model 'merges' is not an array");
    m.merges.reserve(merges.size());
    uint32_t rank = 0;
    std::string joined;
    for (const json& e : merges) {
      std::string a, b;
      if (e.is_string()) {
        const std::string& s = e.get_ref<const std::string&>();
        size_t sp = s.find(' ', 1);
        if (sp == std::string::npos) {
          return data_loss(
              fmt::format("merge #{} '{}' is not two pieces separated by a space", rank, s));
        }
        a = s.substr(0, sp);
        b = s.substr(sp + 1);
      } else if (e.is_array() && e.size() == 2 && e[0].is_string() && e[1].is_string()) {
        a = e[0].get<std::string>();
        b = e[1].get<std::string>();
      } else {
        return data_loss(fmt::format("merge #{} is neither \"a b\" nor [\"a\", \"b\"]", rank));
      }
      joined = a + b;
      auto ia = m.piece_to_id.find(a), ib = m.piece_to_id.find(b), ij = m.piece_to_id.find(joined);
      if (ia == m.piece_to_id.end() || ib == m.piece_to_id.end() || ij == m.piece_to_id.end()) {
        return data_loss(fmt::format("merge #{} '{} {}' uses a piece that is not in the vocabulary",
                                     rank, a, b));
      }
      m.merges.add(ia->second, ib->second, rank++, ij->second);
    }
  }

  // BOS/EOS from tokenizer_config.json.
  auto find_id = [&](const json& j) -> std::optional<TokenId> {
    auto c = token_content(j);
    if (!c) return std::nullopt;
    for (const AddedToken& a : m.added) {
      if (a.content == *c) return a.id;
    }
    auto it = m.piece_to_id.find(*c);
    if (it != m.piece_to_id.end()) return it->second;
    return std::nullopt;
  };
  if (cj.is_object()) {
    if (cj.contains("bos_token")) m.bos_id = find_id(cj["bos_token"]);
    if (cj.contains("eos_token")) m.eos_id = find_id(cj["eos_token"]);
    if (cj.contains("add_bos_token") && cj["add_bos_token"].is_boolean())
      m.add_bos = cj["add_bos_token"].get<bool>();
    if (cj.contains("add_eos_token") && cj["add_eos_token"].is_boolean())
      m.add_eos = cj["add_eos_token"].get<bool>();
  }
  // A post-processor template that starts with the BOS token means the model expects it.
  if (tj.contains("post_processor") && type_of(tj["post_processor"]) == "TemplateProcessing" &&
      !(cj.is_object() && cj.contains("add_bos_token"))) {
    const json& single = tj["post_processor"]["single"];
    if (single.is_array() && !single.empty() && single[0].contains("SpecialToken")) {
      auto id = find_id(single[0]["SpecialToken"]["id"]);
      if (id) {
        m.bos_id = m.bos_id ? m.bos_id : id;
        m.add_bos = true;
      }
    }
  }
  return ok_status();
}

}  // namespace

Result<Tokenizer> Tokenizer::from_json(std::string_view tokenizer_json,
                                       std::string_view tokenizer_config_json) {
  json tj = json::parse(tokenizer_json, nullptr, /*allow_exceptions=*/false);
  if (tj.is_discarded()) return data_loss("tokenizer.json is not valid JSON");
  json cj;
  if (!tokenizer_config_json.empty()) {
    cj = json::parse(tokenizer_config_json, nullptr, false);
    if (cj.is_discarded()) return data_loss("tokenizer_config.json is not valid JSON");
  }
  auto impl = std::make_shared<Impl>();
  try {
    ARC_RETURN_IF_ERROR(load(tj, cj, *impl));
  } catch (const std::exception& e) {
    // A field of the wrong JSON type deep inside (nlohmann reports it by exception).
    return data_loss(fmt::format("tokenizer.json has a field of the wrong type: {}", e.what()));
  }
  return Tokenizer(std::move(impl));
}

Result<Tokenizer> Tokenizer::from_json_file(const std::string& tokenizer_json_path,
                                            const std::string& tokenizer_config_path) {
  ARC_ASSIGN_OR_RETURN(std::string tj, read_file(tokenizer_json_path));
  std::string cj;
  if (!tokenizer_config_path.empty()) {
    ARC_ASSIGN_OR_RETURN(cj, read_file(tokenizer_config_path));
  } else {
    auto beside =
        std::filesystem::path(tokenizer_json_path).parent_path() / "tokenizer_config.json";
    std::error_code ec;
    if (std::filesystem::exists(beside, ec)) {
      ARC_ASSIGN_OR_RETURN(cj, read_file(beside.string()));
    }
  }
  auto r = from_json(tj, cj);
  if (!r.ok()) return r.status().with_context(tokenizer_json_path);
  return r;
}

}  // namespace arc
