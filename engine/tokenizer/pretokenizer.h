// Pre-tokenization: splitting text into words with the families' regexes (PCRE2, UTF + Unicode
// properties, JIT). A pre-tokenizer is a sequence of "isolated" splits: each step splits every
// piece of the previous step into its matches and the text between them.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "arc/status.h"

namespace arc {

class Regex {
 public:
  static Result<std::shared_ptr<Regex>> compile(const std::string& pattern);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  const std::string& pattern() const { return pattern_; }
  void* code() const { return code_; }

 private:
  Regex() = default;
  std::string pattern_;
  void* code_ = nullptr;  // pcre2_code_8*
};

// Regex steps of the pre-tokenizers the GGUF world names (tokenizer.ggml.pre).
struct KnownPreTokenizer {
  const char* gguf_name;              // what llama.cpp's converter writes
  std::vector<std::string> patterns;  // PCRE2 syntax, applied in order
};
const std::vector<KnownPreTokenizer>& known_pre_tokenizers();
// Accepts the converter's aliases ("llama3" for "llama-bpe", "gpt-oss" for "gpt-4o", ...).
const KnownPreTokenizer* find_known_pre_tokenizer(std::string_view gguf_name);

class PreTokenizer {
 public:
  // Per-call matching state (PCRE2 match data and JIT stack); not shared between threads.
  class Scratch {
   public:
    Scratch();
    ~Scratch();
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;
    void* match_data = nullptr;  // pcre2_match_data_8*
    void* context = nullptr;     // pcre2_match_context_8*
    void* jit_stack = nullptr;   // pcre2_jit_stack_8*
  };

  Status add_step(const std::string& pattern);
  bool empty() const { return steps_.empty(); }
  // The GGUF name matching these steps, or "custom".
  std::string gguf_name() const;

  // Splits valid UTF-8 `text` into words (views into text), appended to `words`.
  Status split(std::string_view text, Scratch& scratch, std::vector<std::string_view>& words) const;

 private:
  std::vector<std::shared_ptr<Regex>> steps_;
};

}  // namespace arc
