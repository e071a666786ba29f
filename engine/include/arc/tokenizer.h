// Tokenizers: byte-level BPE (GPT-2, Qwen2/3, Llama 3, DeepSeek V3, o200k/gpt-oss) and
// SentencePiece-style BPE with byte fallback (Llama 2, Mistral, Mixtral).
//
// A Tokenizer is loaded from a Hugging Face tokenizer.json (+ tokenizer_config.json) or from the
// tokenizer.ggml.* metadata of a GGUF file, and is immutable afterwards: encode/decode may be
// called from any number of threads (the word cache inside is synchronised). Copies share the
// loaded vocabulary.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "arc/status.h"

namespace arc {

namespace gguf {
class File;
class Writer;
}  // namespace gguf

using TokenId = int32_t;

// How the model splits words into tokens.
enum class TokenizerModel : int {
  kByteLevelBpe = 0,   // GGUF tokenizer.ggml.model "gpt2"
  kSentencePiece = 1,  // GGUF tokenizer.ggml.model "llama" (BPE with byte fallback, ▁ for space)
};

// Token kinds as GGUF stores them in tokenizer.ggml.token_type. Serialized: never renumber.
enum class TokenType : int32_t {
  kUndefined = 0,
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,      // special tokens (<|im_end|>, <s>)
  kUserDefined = 4,  // added tokens that are not special (<think>)
  kUnused = 5,
  kByte = 6,  // <0xNN> byte-fallback tokens
};

struct EncodeOptions {
  bool add_bos = false;  // prepend the BOS token (when the tokenizer has one)
  bool add_eos = false;  // append the EOS token (when the tokenizer has one)
  // Special-token strings inside the text ("<|im_end|>") become their token; when false they are
  // tokenized as plain text. Non-special added tokens (<think>) are matched either way.
  bool parse_special = true;
};

class Tokenizer {
 public:
  // tokenizer.json, plus tokenizer_config.json for bos/eos/add_bos_token. An empty config path
  // looks for tokenizer_config.json beside the tokenizer.json (absent is fine).
  static Result<Tokenizer> from_json_file(const std::string& tokenizer_json_path,
                                          const std::string& tokenizer_config_path = "");
  static Result<Tokenizer> from_json(std::string_view tokenizer_json,
                                     std::string_view tokenizer_config_json = {});
  // tokenizer.ggml.* metadata (model, tokens, merges, scores, token_type, pre, bos/eos ids).
  static Result<Tokenizer> from_gguf(const gguf::File& file);

  // Writes this vocabulary as tokenizer.ggml.* metadata, so that from_gguf() of the written file
  // gives the same ids. Fails for a pre-tokenizer that has no GGUF name.
  Status write_gguf_metadata(gguf::Writer& writer) const;

  // Text must be valid UTF-8 (an error names the first bad byte otherwise).
  Result<std::vector<TokenId>> encode(std::string_view text,
                                      const EncodeOptions& options = {}) const;

  // The text of `ids`; invalid UTF-8 from byte tokens becomes U+FFFD. Ids outside the vocabulary
  // are skipped.
  std::string decode(std::span<const TokenId> ids, bool skip_special = false) const;

  // The bytes token `id` stands for in decoded text (before any start-of-text space stripping);
  // empty for ids outside the vocabulary. May be a partial UTF-8 sequence.
  std::string_view token_bytes(TokenId id) const;
  // The vocabulary string of `id` ("Ġthe", "▁the", "<0x0A>", "<|im_end|>").
  std::string_view piece(TokenId id) const;
  std::optional<TokenId> find_token(std::string_view piece) const;

  TokenizerModel model() const;
  TokenType token_type(TokenId id) const;
  bool is_special(TokenId id) const;  // control tokens (skipped by decode(skip_special))
  size_t vocab_size() const;          // highest id + 1
  std::optional<TokenId> bos_id() const;
  std::optional<TokenId> eos_id() const;
  bool add_bos_by_default() const;  // from add_bos_token / tokenizer.ggml.add_bos_token
  bool add_eos_by_default() const;
  // Options that follow the model's metadata (add_bos/add_eos as the model was trained).
  EncodeOptions default_encode_options() const;
  // SentencePiece decoding drops the space the normalizer put before the first word.
  bool strips_leading_space() const;
  // "qwen2", "llama-bpe", "deepseek-v3", "gpt-4o", "gpt2", "" for SentencePiece, "custom".
  std::string_view pre_tokenizer_name() const;

  struct Impl;

 private:
  explicit Tokenizer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

// Turns ids into text one at a time without ever emitting part of a UTF-8 character: bytes of a
// character split across tokens are held until it completes; bytes that can no longer form a
// character become U+FFFD. Concatenating every feed() and the final flush() gives exactly
// Tokenizer::decode(ids). The tokenizer must outlive the detokenizer.
class StreamingDetokenizer {
 public:
  explicit StreamingDetokenizer(const Tokenizer& tokenizer, bool skip_special = false);

  // Text that became complete with this token (often empty while a character is incomplete).
  std::string feed(TokenId id);
  // The rest at the end of the stream (held incomplete bytes become U+FFFD); resets the state.
  std::string flush();
  // Forgets held bytes and starts a new text (the next token counts as the first).
  void reset();

 private:
  const Tokenizer* tokenizer_;
  bool skip_special_;
  bool at_start_ = true;
  std::string pending_;  // bytes of an incomplete UTF-8 sequence
};

// Converts bytes to valid UTF-8, replacing each maximal invalid subpart with U+FFFD (the WHATWG /
// TextDecoder rule). Stops before a trailing incomplete sequence unless `final`; returns how many
// input bytes were consumed.
size_t utf8_sanitize(std::string_view in, bool final, std::string& out);

// A token's bytes made readable for people: complete characters as they are, \n \t \r \\ and
// \" escaped, other control bytes and bytes that are not (yet) a whole character as \xNN.
std::string escape_token_text(std::string_view bytes);

}  // namespace arc
