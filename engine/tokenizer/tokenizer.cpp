// Encoding and decoding: added tokens, normalization, pre-tokenization, per-word BPE.
#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "tokenizer_impl.h"

namespace arc {

namespace {

constexpr size_t kMaxCachedWord = 64;  // longer words are rare and would bloat the cache

bool is_space_ascii(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

std::string_view trim_start(std::string_view s) {
  while (!s.empty() && is_space_ascii(s.front())) s.remove_prefix(1);
  return s;
}
std::string_view trim_end(std::string_view s) {
  while (!s.empty() && is_space_ascii(s.back())) s.remove_suffix(1);
  return s;
}

// The byte of a "<0xNN>" piece, or -1.
int byte_piece_value(std::string_view p) {
  if (p.size() != 6 || p.substr(0, 3) != "<0x" || p[5] != '>') return -1;
  auto hex = [](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  int hi = hex(p[3]), lo = hex(p[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  if (from.empty()) return;
  std::string out;
  out.reserve(s.size());
  size_t pos = 0;
  while (true) {
    size_t hit = s.find(from, pos);
    if (hit == std::string::npos) break;
    out.append(s, pos, hit - pos);
    out.append(to);
    pos = hit + from.size();
  }
  out.append(s, pos);
  s = std::move(out);
}

}  // namespace

bool WordCache::get(std::string_view word, std::vector<TokenId>& out) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = map_.find(word);
  if (it == map_.end()) return false;
  out.insert(out.end(), it->second.begin(), it->second.end());
  return true;
}

void WordCache::put(std::string_view word, const std::vector<TokenId>& ids) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (map_.size() >= kMaxEntries) map_.clear();  // bounded memory; hot words come back quickly
  map_.emplace(std::string(word), ids);
}

Status Tokenizer::Impl::finish() {
  const size_t n = pieces.size();
  if (types.size() != n) types.resize(n, TokenType::kNormal);
  piece_to_id.clear();
  piece_to_id.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (types[i] == TokenType::kUndefined || types[i] == TokenType::kUnused) continue;
    piece_to_id.emplace(pieces[i], TokenId(i));  // first id wins for duplicates
  }

  added_index.clear();
  added_lengths.clear();
  std::fill(std::begin(added_first_byte), std::end(added_first_byte), false);
  for (size_t i = 0; i < added.size(); ++i) {
    const AddedToken& a = added[i];
    if (a.content.empty()) continue;
    if (a.id < 0 || size_t(a.id) >= n) {
      return data_loss(fmt::format("added token '{}' has id {} outside the vocabulary of {}",
                                   a.content, a.id, n));
    }
    added_index.emplace(a.content, TokenId(i));
    added_lengths.push_back(a.content.size());
    added_first_byte[uint8_t(a.content[0])] = true;
  }
  std::sort(added_lengths.begin(), added_lengths.end(), std::greater<>());
  added_lengths.erase(std::unique(added_lengths.begin(), added_lengths.end()), added_lengths.end());

  // What each token decodes to.
  bytes.assign(n, std::string());
  for (size_t i = 0; i < n; ++i) {
    const std::string& p = pieces[i];
    if (model == TokenizerModel::kByteLevelBpe) {
      std::string& b = bytes[i];
      size_t k = 0;
      while (k < p.size()) {
        size_t start = k;
        uint32_t cp = next_code_point(p, k);
        int byte = byte_level_byte(cp);
        if (byte >= 0) {
          b.push_back(char(byte));
        } else {
          b.append(p, start, k - start);  // not a byte-level character: keep its text
        }
      }
    } else if (int byte = byte_piece_value(p); types[i] == TokenType::kByte && byte >= 0) {
      bytes[i] = std::string(1, char(byte));
    } else {
      bytes[i] = p;
      replace_all(bytes[i], "\xE2\x96\x81", " ");  // ▁ -> space
    }
  }
  // Added tokens decode to their text as written.
  for (const AddedToken& a : added) bytes[size_t(a.id)] = a.content;
  // Unused and undefined ids (the padding at the end of Qwen's and others' vocabularies) decode
  // to nothing, as in the reference tokenizers: a model that emits one adds no text.
  for (size_t i = 0; i < n; ++i) {
    if (types[i] == TokenType::kUnused || types[i] == TokenType::kUndefined) bytes[i].clear();
  }

  for (int b = 0; b < 256; ++b) {
    byte_token[b] = -1;
    if (model == TokenizerModel::kByteLevelBpe) {
      auto it = piece_to_id.find(byte_level_char(uint8_t(b)));
      if (it == piece_to_id.end()) {
        return data_loss(fmt::format(
            "the byte-level vocabulary has no token for byte 0x{:02X} ('{}'); the vocabulary is "
            "incomplete or not byte-level",
            b, byte_level_char(uint8_t(b))));
      }
      byte_token[b] = it->second;
    } else {
      auto it = piece_to_id.find(fmt::format("<0x{:02X}>", b));
      if (it != piece_to_id.end()) byte_token[b] = it->second;
    }
  }
  if (model == TokenizerModel::kSentencePiece && byte_fallback) {
    for (int b = 0; b < 256; ++b) {
      if (byte_token[b] < 0) {
        return data_loss(
            fmt::format("byte fallback is on but the vocabulary has no <0x{:02X}> token", b));
      }
    }
  }
  return ok_status();
}

void Tokenizer::Impl::merges_from_scores() {
  const size_t n = pieces.size();
  std::vector<TokenId> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](TokenId a, TokenId b) {
    float sa = size_t(a) < scores.size() ? scores[size_t(a)] : 0.f;
    float sb = size_t(b) < scores.size() ? scores[size_t(b)] : 0.f;
    return sa > sb;
  });
  merges.reserve(n * 4);
  for (size_t r = 0; r < n; ++r) {
    TokenId t = order[r];
    if (types[size_t(t)] != TokenType::kNormal && types[size_t(t)] != TokenType::kUserDefined)
      continue;
    const std::string& p = pieces[size_t(t)];
    for (size_t k = 1; k < p.size(); ++k) {
      if ((uint8_t(p[k]) & 0xC0) == 0x80) continue;  // split between characters only
      auto l = piece_to_id.find(std::string_view(p).substr(0, k));
      if (l == piece_to_id.end()) continue;
      auto rr = piece_to_id.find(std::string_view(p).substr(k));
      if (rr == piece_to_id.end()) continue;
      merges.add(l->second, rr->second, uint32_t(r), t);
    }
  }
}

void Tokenizer::Impl::encode_word(std::string_view word, std::vector<TokenId>& out) const {
  // One byte (spaces, punctuation, single digits) is always its byte token: no cache needed.
  if (word.size() == 1 && model == TokenizerModel::kByteLevelBpe) {
    out.push_back(byte_token[uint8_t(word[0])]);
    return;
  }
  const bool cacheable = word.size() <= kMaxCachedWord;
  if (cacheable && cache.get(word, out)) return;
  std::vector<TokenId> ids;
  ids.reserve(word.size());
  if (model == TokenizerModel::kByteLevelBpe) {
    if (ignore_merges) {
      std::string mapped;
      for (char c : word) mapped += byte_level_char(uint8_t(c));
      auto it = piece_to_id.find(mapped);
      if (it != piece_to_id.end()) ids.push_back(it->second);
    }
    if (ids.empty()) {
      for (char c : word) ids.push_back(byte_token[uint8_t(c)]);
      merges.apply(ids);
    }
  } else {
    if (ignore_merges) {
      auto it = piece_to_id.find(word);
      if (it != piece_to_id.end()) ids.push_back(it->second);
    }
    if (ids.empty()) {
      size_t i = 0;
      while (i < word.size()) {
        size_t start = i;
        next_code_point(word, i);
        auto it = piece_to_id.find(word.substr(start, i - start));
        if (it != piece_to_id.end()) {
          ids.push_back(it->second);
        } else if (byte_fallback) {
          for (size_t k = start; k < i; ++k) ids.push_back(byte_token[uint8_t(word[k])]);
        } else if (unk_id) {
          if (!(fuse_unk && !ids.empty() && ids.back() == *unk_id)) ids.push_back(*unk_id);
        }
      }
      merges.apply(ids);
    }
  }
  out.insert(out.end(), ids.begin(), ids.end());
  if (cacheable) cache.put(word, ids);
}

Status Tokenizer::Impl::encode_plain(std::string_view text, PreTokenizer::Scratch& scratch,
                                     std::vector<TokenId>& out) const {
  if (text.empty()) return ok_status();
  std::string normalized;
  std::string_view view = text;
  if (!normalizers.empty() || byte_level_prefix_space) {
    normalized.assign(text);
    for (const NormalizerStep& step : normalizers) {
      switch (step.kind) {
        case NormalizerStep::Kind::kNfc: {
          ARC_ASSIGN_OR_RETURN(normalized, nfc(normalized));
          break;
        }
        case NormalizerStep::Kind::kPrepend:
          if (!normalized.empty()) normalized.insert(0, step.a);
          break;
        case NormalizerStep::Kind::kReplace:
          replace_all(normalized, step.a, step.b);
          break;
      }
    }
    if (byte_level_prefix_space && !normalized.empty() && normalized[0] != ' ') {
      normalized.insert(0, " ");
    }
    view = normalized;
  }
  if (pre.empty()) {
    encode_word(view, out);
    return ok_status();
  }
  std::vector<std::string_view> words;
  ARC_RETURN_IF_ERROR(pre.split(view, scratch, words));
  for (std::string_view w : words) encode_word(w, out);
  return ok_status();
}

Result<std::vector<TokenId>> Tokenizer::encode(std::string_view text,
                                               const EncodeOptions& options) const {
  const Impl& m = *impl_;
  size_t bad = find_invalid_utf8(text);
  if (bad != std::string_view::npos) {
    return invalid_argument(fmt::format(
        "text is not valid UTF-8: byte 0x{:02X} at offset {} does not start or continue a "
        "character",
        uint8_t(text[bad]), bad));
  }
  std::vector<TokenId> out;
  out.reserve(text.size() / 3 + 2);
  if (options.add_bos && m.bos_id) out.push_back(*m.bos_id);
  PreTokenizer::Scratch scratch;

  size_t seg_start = 0, i = 0;
  bool strip_next = false;  // the previous added token swallows the whitespace after it
  while (i < text.size()) {
    if (!m.added_first_byte[uint8_t(text[i])]) {
      ++i;
      continue;
    }
    const AddedToken* hit = nullptr;
    for (size_t len : m.added_lengths) {  // longest match wins
      if (len > text.size() - i) continue;
      auto it = m.added_index.find(text.substr(i, len));
      if (it == m.added_index.end()) continue;
      const AddedToken& a = m.added[size_t(it->second)];
      if (a.special && !options.parse_special) continue;
      hit = &a;
      break;
    }
    if (hit == nullptr) {
      ++i;
      continue;
    }
    std::string_view before = text.substr(seg_start, i - seg_start);
    if (strip_next) before = trim_start(before);
    if (hit->lstrip) before = trim_end(before);
    ARC_RETURN_IF_ERROR(m.encode_plain(before, scratch, out));
    out.push_back(hit->id);
    i += hit->content.size();
    seg_start = i;
    strip_next = hit->rstrip;
  }
  std::string_view rest = text.substr(seg_start);
  if (strip_next) rest = trim_start(rest);
  ARC_RETURN_IF_ERROR(m.encode_plain(rest, scratch, out));
  if (options.add_eos && m.eos_id) out.push_back(*m.eos_id);
  return out;
}

std::string Tokenizer::decode(std::span<const TokenId> ids, bool skip_special) const {
  StreamingDetokenizer d(*this, skip_special);
  std::string out;
  for (TokenId id : ids) out += d.feed(id);
  out += d.flush();
  return out;
}

std::string_view Tokenizer::token_bytes(TokenId id) const {
  if (id < 0 || size_t(id) >= impl_->bytes.size()) return {};
  return impl_->bytes[size_t(id)];
}

std::string_view Tokenizer::piece(TokenId id) const {
  if (id < 0 || size_t(id) >= impl_->pieces.size()) return {};
  return impl_->pieces[size_t(id)];
}

std::optional<TokenId> Tokenizer::find_token(std::string_view piece) const {
  auto it = impl_->added_index.find(piece);
  if (it != impl_->added_index.end()) return impl_->added[size_t(it->second)].id;
  auto jt = impl_->piece_to_id.find(piece);
  if (jt != impl_->piece_to_id.end()) return jt->second;
  return std::nullopt;
}

TokenizerModel Tokenizer::model() const {
  return impl_->model;
}
TokenType Tokenizer::token_type(TokenId id) const {
  if (id < 0 || size_t(id) >= impl_->types.size()) return TokenType::kUndefined;
  return impl_->types[size_t(id)];
}
bool Tokenizer::is_special(TokenId id) const {
  TokenType t = token_type(id);
  return t == TokenType::kControl || t == TokenType::kUnknown;
}
size_t Tokenizer::vocab_size() const {
  return impl_->pieces.size();
}
std::optional<TokenId> Tokenizer::bos_id() const {
  return impl_->bos_id;
}
std::optional<TokenId> Tokenizer::eos_id() const {
  return impl_->eos_id;
}
bool Tokenizer::add_bos_by_default() const {
  return impl_->add_bos && impl_->bos_id.has_value();
}
bool Tokenizer::add_eos_by_default() const {
  return impl_->add_eos && impl_->eos_id.has_value();
}
EncodeOptions Tokenizer::default_encode_options() const {
  EncodeOptions o;
  o.add_bos = add_bos_by_default();
  o.add_eos = add_eos_by_default();
  return o;
}
bool Tokenizer::strips_leading_space() const {
  return impl_->strip_leading_space;
}
std::string_view Tokenizer::pre_tokenizer_name() const {
  return impl_->pre_name;
}

}  // namespace arc
