// The tokenizer.ggml.* metadata of GGUF files: reading (as llama.cpp's converter writes it) and
// writing (for the test-model generator and tools).
#include <algorithm>

#include <fmt/format.h>

#include "arc/gguf.h"
#include "tokenizer_impl.h"

namespace arc {

namespace {

const char* const kSpaceMark = "\xE2\x96\x81";  // ▁

// What a GGUF file cannot say but the families need: Qwen2 vocabularies NFC-normalise, and the
// tiktoken-derived ones (Llama 3, o200k) take a word that is in the vocabulary whole. When the
// file has no tokenizer.ggml.add_bos_token, the reference implementation (llama.cpp) decides by
// pre-tokenizer: the Llama 3 family starts every prompt with BOS, the others (GLM-4, whose
// templates write "[gMASK]<sop>" themselves, o200k, Qwen) do not; the key, when present, wins.
struct PreDefaults {
  bool nfc = false;
  bool ignore_merges = false;
  bool add_bos = false;
};
PreDefaults defaults_for(std::string_view pre_name) {
  PreDefaults d;
  d.nfc = pre_name == "qwen2";
  d.ignore_merges = pre_name == "llama-bpe" || pre_name == "gpt-4o";
  d.add_bos = pre_name == "llama-bpe";
  return d;
}

Status wrong_type(std::string_view key, std::string_view want) {
  return data_loss(fmt::format("GGUF metadata '{}' is not {}", key, want));
}

std::optional<TokenId> id_key(const gguf::File& f, std::string_view key, size_t n, Status& err) {
  const gguf::Value* v = f.find(key);
  if (v == nullptr) return std::nullopt;
  auto x = v->as_int();
  if (!x) {
    err = wrong_type(key, "an integer");
    return std::nullopt;
  }
  if (*x < 0 || uint64_t(*x) >= n) {
    // llama.cpp writes -1 / out-of-range ids for "none"; treat them as absent.
    return std::nullopt;
  }
  return TokenId(*x);
}

}  // namespace

Result<Tokenizer> Tokenizer::from_gguf(const gguf::File& f) {
  auto impl = std::make_shared<Impl>();
  Impl& m = *impl;
  const gguf::Value* model_v = f.find("tokenizer.ggml.model");
  if (model_v == nullptr) {
    return not_found(
        fmt::format("'{}' has no tokenizer (no tokenizer.ggml.model metadata)", f.path()));
  }
  if (model_v->as_string() == nullptr) return wrong_type("tokenizer.ggml.model", "a string");
  const std::string model = *model_v->as_string();
  if (model == "gpt2") {
    m.model = TokenizerModel::kByteLevelBpe;
  } else if (model == "llama") {
    m.model = TokenizerModel::kSentencePiece;
  } else {
    return unimplemented(fmt::format(
        "tokenizer.ggml.model '{}' is not supported (supported: gpt2 = byte-level BPE, llama = "
        "SentencePiece BPE)",
        model));
  }

  if (f.find("tokenizer.ggml.tokens") == nullptr) {
    return data_loss("GGUF metadata has no tokenizer.ggml.tokens");
  }
  auto tokens = f.get_string_array("tokenizer.ggml.tokens");
  if (!tokens) return wrong_type("tokenizer.ggml.tokens", "an array of strings");
  if (tokens->empty()) return data_loss("tokenizer.ggml.tokens is empty");
  const size_t n = tokens->size();
  m.pieces = std::move(*tokens);
  m.types.assign(n, TokenType::kNormal);
  if (f.find("tokenizer.ggml.token_type") != nullptr) {
    auto types = f.get_int_array("tokenizer.ggml.token_type");
    if (!types) return wrong_type("tokenizer.ggml.token_type", "an array of integers");
    if (types->size() != n) {
      return data_loss(
          fmt::format("tokenizer.ggml.token_type has {} entries for {} tokens", types->size(), n));
    }
    for (size_t i = 0; i < n; ++i) {
      int64_t t = (*types)[i];
      if (t < 0 || t > int64_t(TokenType::kByte)) {
        return data_loss(
            fmt::format("tokenizer.ggml.token_type[{}] = {} is not a token type (0-6)", i, t));
      }
      m.types[i] = TokenType(t);
    }
  }
  if (f.find("tokenizer.ggml.scores") != nullptr) {
    auto scores = f.get_float_array("tokenizer.ggml.scores");
    if (!scores || scores->size() != n) {
      return data_loss(fmt::format("tokenizer.ggml.scores is not an array of {} numbers", n));
    }
    m.scores.assign(scores->begin(), scores->end());
  }

  // Control, user-defined and unknown tokens are matched inside text (as llama.cpp does).
  for (size_t i = 0; i < n; ++i) {
    TokenType t = m.types[i];
    if (t == TokenType::kControl || t == TokenType::kUserDefined || t == TokenType::kUnknown) {
      AddedToken a;
      a.content = m.pieces[i];
      a.id = TokenId(i);
      a.special = t != TokenType::kUserDefined;
      m.added.push_back(std::move(a));
    }
    if (t == TokenType::kUnknown && !m.unk_id) m.unk_id = TokenId(i);
  }

  Status err;
  m.bos_id = id_key(f, "tokenizer.ggml.bos_token_id", n, err);
  m.eos_id = id_key(f, "tokenizer.ggml.eos_token_id", n, err);
  if (auto unk = id_key(f, "tokenizer.ggml.unknown_token_id", n, err)) m.unk_id = unk;
  ARC_RETURN_IF_ERROR(err);
  auto bool_key = [&](std::string_view key, bool fallback) -> Result<bool> {
    const gguf::Value* v = f.find(key);
    if (v == nullptr) return fallback;
    auto b = v->as_bool();
    if (!b) return wrong_type(key, "a boolean");
    return *b;
  };
  const bool spm = m.model == TokenizerModel::kSentencePiece;
  ARC_ASSIGN_OR_RETURN(m.add_eos, bool_key("tokenizer.ggml.add_eos_token", false));

  if (spm) {
    ARC_ASSIGN_OR_RETURN(bool prefix, bool_key("tokenizer.ggml.add_space_prefix", true));
    if (prefix) m.normalizers.push_back({NormalizerStep::Kind::kPrepend, kSpaceMark, ""});
    m.normalizers.push_back({NormalizerStep::Kind::kReplace, " ", kSpaceMark});
    m.strip_leading_space = prefix;
    for (TokenType t : m.types) m.byte_fallback |= t == TokenType::kByte;
  } else {
    std::string pre = "default";
    if (const gguf::Value* v = f.find("tokenizer.ggml.pre")) {
      if (v->as_string() == nullptr) return wrong_type("tokenizer.ggml.pre", "a string");
      pre = *v->as_string();
    }
    const KnownPreTokenizer* known = find_known_pre_tokenizer(pre);
    if (known == nullptr) {
      std::string names;
      for (const auto& k : known_pre_tokenizers())
        names += std::string(names.empty() ? "" : ", ") + k.gguf_name;
      return unimplemented(fmt::format(
          "tokenizer.ggml.pre '{}' is not a pre-tokenizer Arclight knows (known: {})", pre, names));
    }
    for (const std::string& p : known->patterns) ARC_RETURN_IF_ERROR(m.pre.add_step(p));
    m.pre_name = known->gguf_name;
    PreDefaults d = defaults_for(m.pre_name);
    if (d.nfc) m.normalizers.push_back({NormalizerStep::Kind::kNfc, "", ""});
    m.ignore_merges = d.ignore_merges;
  }
  {
    bool fallback = spm;
    if (!spm) fallback = defaults_for(m.pre_name).add_bos;
    ARC_ASSIGN_OR_RETURN(m.add_bos, bool_key("tokenizer.ggml.add_bos_token", fallback));
  }
  ARC_RETURN_IF_ERROR(m.finish());

  if (f.find("tokenizer.ggml.merges") != nullptr) {
    auto merges = f.get_string_array("tokenizer.ggml.merges");
    if (!merges) return wrong_type("tokenizer.ggml.merges", "an array of strings");
    m.merges.reserve(merges->size());
    uint32_t rank = 0;
    for (const std::string& s : *merges) {
      size_t sp = s.find(' ', 1);
      if (sp == std::string::npos) {
        return data_loss(fmt::format(
            "tokenizer.ggml.merges[{}] '{}' is not two pieces separated by a space", rank, s));
      }
      std::string_view a = std::string_view(s).substr(0, sp),
                       b = std::string_view(s).substr(sp + 1);
      auto ia = m.piece_to_id.find(a), ib = m.piece_to_id.find(b);
      auto ij = m.piece_to_id.find(std::string(a) + std::string(b));
      if (ia == m.piece_to_id.end() || ib == m.piece_to_id.end() || ij == m.piece_to_id.end()) {
        return data_loss(fmt::format(
            "tokenizer.ggml.merges[{}] '{}' uses a piece that is not in tokenizer.ggml.tokens",
            rank, s));
      }
      m.merges.add(ia->second, ib->second, rank++, ij->second);
    }
  } else if (spm) {
    if (m.scores.empty()) {
      return data_loss("a llama (SentencePiece) tokenizer needs tokenizer.ggml.scores or .merges");
    }
    m.merges_from_scores();
  } else {
    return data_loss("a gpt2 (byte-level BPE) tokenizer needs tokenizer.ggml.merges");
  }
  return Tokenizer(std::move(impl));
}

Status Tokenizer::write_gguf_metadata(gguf::Writer& w) const {
  const Impl& m = *impl_;
  const bool spm = m.model == TokenizerModel::kSentencePiece;
  if (!spm) {
    if (m.pre_name == "custom") {
      return unimplemented(
          "this tokenizer's pre-tokenizer regexes match no tokenizer.ggml.pre name; it cannot be "
          "written to GGUF");
    }
    PreDefaults d = defaults_for(m.pre_name);
    bool nfc = false;
    for (const NormalizerStep& s : m.normalizers) {
      if (s.kind != NormalizerStep::Kind::kNfc) {
        return unimplemented(
            "a byte-level tokenizer with Prepend/Replace normalizers cannot be written to GGUF");
      }
      nfc = true;
    }
    if (nfc != d.nfc || m.ignore_merges != d.ignore_merges || m.byte_level_prefix_space) {
      return unimplemented(fmt::format(
          "this tokenizer's normalizer or merge rule differs from what GGUF readers assume for "
          "pre-tokenizer '{}'",
          m.pre_name));
    }
  }
  const size_t n = m.pieces.size();
  gguf::Array tokens{gguf::ValueType::kString, {}}, types{gguf::ValueType::kInt32, {}};
  tokens.items.reserve(n);
  types.items.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    TokenType t = m.types[i];
    std::string piece = m.pieces[i];
    if (t == TokenType::kUndefined) {  // a hole in the id space
      piece = fmt::format("[PAD{}]", i);
      t = TokenType::kUnused;
    }
    tokens.items.push_back(gguf::Value::str(std::move(piece)));
    types.items.push_back(gguf::Value::i32(int32_t(t)));
  }
  // Merges in rank order.
  std::vector<std::pair<uint32_t, std::string>> merges;
  merges.reserve(m.merges.size());
  std::vector<float> scores(spm ? n : 0, 0.f);
  m.merges.for_each([&](TokenId l, TokenId r, uint32_t rank, TokenId result) {
    merges.emplace_back(rank, m.pieces[size_t(l)] + " " + m.pieces[size_t(r)]);
    // SentencePiece scores: earlier merges score higher (used when a reader ignores merges).
    if (spm && (scores[size_t(result)] == 0.f || -float(rank) - 1.f > scores[size_t(result)])) {
      scores[size_t(result)] = -float(rank) - 1.f;
    }
  });
  std::sort(merges.begin(), merges.end());
  gguf::Array merge_arr{gguf::ValueType::kString, {}};
  merge_arr.items.reserve(merges.size());
  for (auto& rs : merges) merge_arr.items.push_back(gguf::Value::str(std::move(rs.second)));

  w.set("tokenizer.ggml.model", gguf::Value::str(spm ? "llama" : "gpt2"));
  if (!spm) w.set("tokenizer.ggml.pre", gguf::Value::str(m.pre_name));
  w.set("tokenizer.ggml.tokens", gguf::Value::array(std::move(tokens)));
  w.set("tokenizer.ggml.token_type", gguf::Value::array(std::move(types)));
  if (spm) {
    gguf::Array sc{gguf::ValueType::kFloat32, {}};
    sc.items.reserve(n);
    for (float s : scores) sc.items.push_back(gguf::Value::f32(s));
    w.set("tokenizer.ggml.scores", gguf::Value::array(std::move(sc)));
    w.set("tokenizer.ggml.add_space_prefix", gguf::Value::boolean(m.strip_leading_space));
  }
  w.set("tokenizer.ggml.merges", gguf::Value::array(std::move(merge_arr)));
  if (m.bos_id) w.set("tokenizer.ggml.bos_token_id", gguf::Value::u32(uint32_t(*m.bos_id)));
  if (m.eos_id) w.set("tokenizer.ggml.eos_token_id", gguf::Value::u32(uint32_t(*m.eos_id)));
  if (m.unk_id) w.set("tokenizer.ggml.unknown_token_id", gguf::Value::u32(uint32_t(*m.unk_id)));
  w.set("tokenizer.ggml.add_bos_token", gguf::Value::boolean(m.add_bos));
  w.set("tokenizer.ggml.add_eos_token", gguf::Value::boolean(m.add_eos));
  return ok_status();
}

}  // namespace arc
