#include "arc/eval/tokenizer_fingerprint.h"

#include <cstdint>
#include <cstdio>
#include <string_view>

namespace arc::eval {
namespace {

struct Fnv {
  uint64_t h = 1469598103934665603ull;
  void bytes(std::string_view s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 1099511628211ull;
    }
  }
  void num(int64_t v) { bytes(std::string_view(reinterpret_cast<const char*>(&v), sizeof v)); }
};

std::string with_commas(uint64_t v) {
  std::string s = std::to_string(v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return s;
}

}  // namespace

std::string tokenizer_fingerprint(const Tokenizer& tok) {
  Fnv f;
  f.num(static_cast<int64_t>(tok.model()));
  f.bytes(tok.pre_tokenizer_name());
  f.num(static_cast<int64_t>(tok.vocab_size()));
  for (size_t i = 0; i < tok.vocab_size(); ++i) {
    const std::string_view p = tok.piece(static_cast<TokenId>(i));
    f.num(static_cast<int64_t>(p.size()));  // length first: "ab"+"c" differs from "a"+"bc"
    f.bytes(p);
    f.num(static_cast<int64_t>(tok.token_type(static_cast<TokenId>(i))));
  }
  f.num(tok.bos_id().value_or(-1));
  f.num(tok.eos_id().value_or(-1));
  f.num(tok.add_bos_by_default() ? 1 : 0);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(f.h));
  return hex;
}

std::string describe_tokenizer(const Tokenizer& tok) {
  std::string pre(tok.pre_tokenizer_name());
  const char* kind = tok.model() == TokenizerModel::kSentencePiece ? "SentencePiece" : "BPE";
  return (pre.empty() ? std::string() : pre + " ") + kind + ", " + with_commas(tok.vocab_size()) +
         " tokens";
}

}  // namespace arc::eval
