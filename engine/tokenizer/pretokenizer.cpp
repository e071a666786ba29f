#define PCRE2_CODE_UNIT_WIDTH 8
#include "pretokenizer.h"

#include <pcre2.h>

#include <fmt/format.h>

namespace arc {

namespace {

constexpr const char* kGpt2 =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";
constexpr const char* kQwen2 =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
constexpr const char* kLlama3 =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
// DeepSeek V3 splits digits, then CJK runs, then everything else (CR/LF are literal characters
// in its class, as in its tokenizer.json).
constexpr const char* kDeepSeekDigits = "\\p{N}{1,3}";
constexpr const char* kDeepSeekCjk = "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+";
constexpr const char* kDeepSeekRest =
    "[!\"#$%&'()*+,\\-./"
    ":;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| "
    "?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+";
constexpr const char* kO200k =
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'"
    "s|'t|"
    "'re|'ve|'m|'ll|'d)?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}"
    "\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*["
    "\\r\\n]+|\\s+(?!\\S)|\\s+";

struct Alias {
  const char* alias;
  const char* name;
};
// Other names llama.cpp's converter writes for the same regexes.
constexpr Alias kAliases[] = {
    {"default", "gpt2"},       {"gpt-2", "gpt2"},          {"llama3", "llama-bpe"},
    {"llama-v3", "llama-bpe"}, {"smaug-bpe", "llama-bpe"}, {"deepseek-r1-qwen", "qwen2"},
    {"qwen3", "qwen2"},        {"gpt-oss", "gpt-4o"},      {"o200k", "gpt-4o"},
    {"llama4", "gpt-4o"},      {"chatglm-bpe", "glm4"},
};

}  // namespace

const std::vector<KnownPreTokenizer>& known_pre_tokenizers() {
  static const std::vector<KnownPreTokenizer> table = {
      {"gpt2", {kGpt2}},
      {"qwen2", {kQwen2}},
      {"llama-bpe", {kLlama3}},
      {"deepseek-v3", {kDeepSeekDigits, kDeepSeekCjk, kDeepSeekRest}},
      {"gpt-4o", {kO200k}},
      // Same regexes as above under their own names: llama.cpp gives these vocabularies other
      // defaults (no BOS for glm4; BPE merges applied for both), see load_gguf.cpp. Listed after
      // their twins so a tokenizer.json with the regex keeps the older name.
      {"glm4", {kLlama3}},
      {"minimax-m2", {kO200k}},
  };
  return table;
}

const KnownPreTokenizer* find_known_pre_tokenizer(std::string_view name) {
  for (const Alias& a : kAliases) {
    if (name == a.alias) name = a.name;
  }
  for (const KnownPreTokenizer& k : known_pre_tokenizers()) {
    if (name == k.gguf_name) return &k;
  }
  return nullptr;
}

Result<std::shared_ptr<Regex>> Regex::compile(const std::string& pattern) {
  int err = 0;
  PCRE2_SIZE err_off = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   PCRE2_UTF | PCRE2_UCP, &err, &err_off, nullptr);
  if (code == nullptr) {
    PCRE2_UCHAR buf[256];
    pcre2_get_error_message(err, buf, sizeof(buf));
    return invalid_argument(
        fmt::format("pre-tokenizer regex does not compile at offset {}: {} ({})", err_off,
                    reinterpret_cast<const char*>(buf), pattern));
  }
  // JIT is an optimisation: a build of PCRE2 without it still matches correctly.
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
  std::shared_ptr<Regex> re(new Regex());
  re->pattern_ = pattern;
  re->code_ = code;
  return re;
}

Regex::~Regex() {
  pcre2_code_free(static_cast<pcre2_code*>(code_));
}

PreTokenizer::Scratch::Scratch() {
  match_data = pcre2_match_data_create(4, nullptr);
  context = pcre2_match_context_create(nullptr);
  // Long runs of whitespace or letters backtrack deeply; the default 32 KiB JIT stack is too
  // small for megabyte inputs.
  jit_stack = pcre2_jit_stack_create(32 * 1024, 8 * 1024 * 1024, nullptr);
  if (context != nullptr && jit_stack != nullptr) {
    pcre2_jit_stack_assign(static_cast<pcre2_match_context*>(context), nullptr, jit_stack);
  }
}

PreTokenizer::Scratch::~Scratch() {
  pcre2_jit_stack_free(static_cast<pcre2_jit_stack*>(jit_stack));
  pcre2_match_context_free(static_cast<pcre2_match_context*>(context));
  pcre2_match_data_free(static_cast<pcre2_match_data*>(match_data));
}

Status PreTokenizer::add_step(const std::string& pattern) {
  ARC_ASSIGN_OR_RETURN(auto re, Regex::compile(pattern));
  steps_.push_back(std::move(re));
  return ok_status();
}

std::string PreTokenizer::gguf_name() const {
  for (const KnownPreTokenizer& k : known_pre_tokenizers()) {
    if (k.patterns.size() != steps_.size()) continue;
    bool same = true;
    for (size_t i = 0; i < steps_.size() && same; ++i) same = k.patterns[i] == steps_[i]->pattern();
    if (same) return k.gguf_name;
  }
  return "custom";
}

namespace {

// Appends the matches of `re` in `piece` and the text between them.
Status split_isolated(const Regex& re, std::string_view piece, PreTokenizer::Scratch& scratch,
                      std::vector<std::string_view>& out) {
  auto* code = static_cast<pcre2_code*>(re.code());
  auto* md = static_cast<pcre2_match_data*>(scratch.match_data);
  auto* ctx = static_cast<pcre2_match_context*>(scratch.context);
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(piece.data());
  size_t pos = 0, last = 0;
  while (pos <= piece.size()) {
    int rc = pcre2_match(code, subject, piece.size(), pos, PCRE2_NO_UTF_CHECK, md, ctx);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) {
      PCRE2_UCHAR buf[256];
      pcre2_get_error_message(rc, buf, sizeof(buf));
      return resource_exhausted(fmt::format("pre-tokenizer regex failed on a {}-byte text: {}",
                                            piece.size(), reinterpret_cast<const char*>(buf)));
    }
    PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
    size_t start = ov[0], end = ov[1];
    if (end == start) {
      // An empty match splits nothing; step over one character.
      pos = end + 1;
      while (pos < piece.size() && (uint8_t(piece[pos]) & 0xC0) == 0x80) ++pos;
      continue;
    }
    if (start > last) out.push_back(piece.substr(last, start - last));
    out.push_back(piece.substr(start, end - start));
    last = pos = end;
  }
  if (last < piece.size()) out.push_back(piece.substr(last));
  return ok_status();
}

}  // namespace

Status PreTokenizer::split(std::string_view text, Scratch& scratch,
                           std::vector<std::string_view>& words) const {
  if (text.empty()) return ok_status();
  if (scratch.match_data == nullptr || scratch.context == nullptr) {
    return resource_exhausted("out of memory creating the regex match state");
  }
  if (steps_.empty()) {
    words.push_back(text);
    return ok_status();
  }
  std::vector<std::string_view> cur{text}, next;
  for (size_t s = 0; s < steps_.size(); ++s) {
    std::vector<std::string_view>& dst = s + 1 == steps_.size() ? words : next;
    for (std::string_view piece : cur)
      ARC_RETURN_IF_ERROR(split_isolated(*steps_[s], piece, scratch, dst));
    if (s + 1 < steps_.size()) {
      cur.swap(next);
      next.clear();
    }
  }
  return ok_status();
}

}  // namespace arc
