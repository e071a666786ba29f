// The loaded tokenizer shared by all copies of arc::Tokenizer (internal to arc_tokenizer).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "arc/tokenizer.h"
#include "bpe.h"
#include "pretokenizer.h"

namespace arc {

// Hash for heterogeneous lookup (string_view into string-keyed maps).
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using StringIdMap = std::unordered_map<std::string, TokenId, StringHash, std::equal_to<>>;

struct AddedToken {
  std::string content;
  TokenId id = -1;
  bool special = false;
  bool lstrip = false;  // swallow whitespace before the token
  bool rstrip = false;  // swallow whitespace after the token
};

// Normalization steps applied to each stretch of text between added tokens, in order.
struct NormalizerStep {
  enum class Kind { kNfc, kPrepend, kReplace } kind;
  std::string a;  // prepend: the prefix; replace: the pattern
  std::string b;  // replace: the replacement
};

// word bytes -> ids, for pre-tokenized chunks that repeat (most words do).
class WordCache {
 public:
  bool get(std::string_view word, std::vector<TokenId>& out) const;
  void put(std::string_view word, const std::vector<TokenId>& ids) const;

 private:
  static constexpr size_t kMaxEntries = 1 << 17;
  mutable std::mutex mu_;
  mutable std::unordered_map<std::string, std::vector<TokenId>, StringHash, std::equal_to<>> map_;
};

struct Tokenizer::Impl {
  TokenizerModel model = TokenizerModel::kByteLevelBpe;
  std::vector<std::string> pieces;  // [vocab_size] vocabulary strings
  std::vector<std::string> bytes;   // [vocab_size] what each token decodes to
  std::vector<TokenType> types;     // [vocab_size]
  std::vector<float> scores;        // [vocab_size] SentencePiece scores (empty when unknown)
  StringIdMap piece_to_id;
  BpeMerges merges;
  bool ignore_merges = false;  // a word that is itself in the vocabulary is one token
  bool byte_fallback = false;
  std::optional<TokenId> unk_id;
  std::optional<TokenId> bos_id, eos_id;
  bool add_bos = false, add_eos = false;

  std::vector<NormalizerStep> normalizers;
  PreTokenizer pre;      // empty for SentencePiece (the whole stretch is one word)
  std::string pre_name;  // GGUF name of `pre` ("" for SentencePiece)

  std::vector<AddedToken> added;         // as declared
  StringIdMap added_index;               // content -> index into `added`
  std::vector<size_t> added_lengths;     // distinct content lengths, longest first
  bool added_first_byte[256] = {};       // quick reject while scanning for added tokens
  bool strip_leading_space = false;      // SentencePiece: decode drops the first ▁'s space
  bool byte_level_prefix_space = false;  // ByteLevel add_prefix_space: " " before each text
  bool fuse_unk = false;

  // Byte-level: the token of each single byte's character; SentencePiece: the <0xNN> tokens
  // (-1 when missing).
  TokenId byte_token[256] = {};

  WordCache cache;

  // Fills derived tables (bytes, added lookup, byte tokens) after pieces, types and added tokens
  // are set; checks that the vocabulary can encode every byte.
  Status finish();
  // Appends the ids of one pre-tokenized word.
  void encode_word(std::string_view word, std::vector<TokenId>& out) const;
  // Appends the ids of one stretch of text without added tokens.
  Status encode_plain(std::string_view text, PreTokenizer::Scratch& scratch,
                      std::vector<TokenId>& out) const;
  // Adds merges (a, b) -> a+b for every split of every piece, ranked by descending score: the
  // SentencePiece rule when a GGUF file has scores but no merges.
  void merges_from_scores();
};

// The GPT-2 byte <-> printable-character table used by byte-level BPE.
const std::string& byte_level_char(uint8_t byte);
// The byte of a byte-level character (code point), or -1 when it is not one.
int byte_level_byte(uint32_t code_point);

// Decodes one UTF-8 code point at s[i] (input already validated); advances i.
uint32_t next_code_point(std::string_view s, size_t& i);
void append_utf8(uint32_t cp, std::string& out);
// Offset of the first byte that is not valid UTF-8, or npos.
size_t find_invalid_utf8(std::string_view s);
Result<std::string> nfc(std::string_view s);

}  // namespace arc
