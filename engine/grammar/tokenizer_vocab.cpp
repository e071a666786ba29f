#include "grammar/tokenizer_vocab.h"

namespace arc::grammar {

std::shared_ptr<const TokenVocab> vocab_from_tokenizer(const Tokenizer& tok,
                                                       const std::vector<int32_t>& stops) {
  const size_t n = tok.vocab_size();
  std::vector<std::string> bytes(n);
  std::vector<bool> usable(n, false);
  for (size_t i = 0; i < n; ++i) {
    const auto id = static_cast<TokenId>(i);
    bytes[i] = std::string(tok.token_bytes(id));
    // Control tokens (<|im_end|>, <s>) are never text; unused slots have no bytes to match.
    const TokenType t = tok.token_type(id);
    usable[i] = !tok.is_special(id) && t != TokenType::kUnused && t != TokenType::kUnknown;
  }
  return std::make_shared<const TokenVocab>(std::move(bytes), usable, stops);
}

}  // namespace arc::grammar
