#include "grammar/tokenizer_vocab.h"

#include <algorithm>

namespace arc::grammar {

std::shared_ptr<const TokenVocab> vocab_from_tokenizer(
    const Tokenizer& tok, const std::vector<int32_t>& stops,
    const std::function<bool(std::string_view)>& special_as_text) {
  const size_t n = tok.vocab_size();
  std::vector<std::string> bytes(n);
  std::vector<bool> usable(n, false);
  for (size_t i = 0; i < n; ++i) {
    const auto id = static_cast<TokenId>(i);
    bytes[i] = std::string(tok.token_bytes(id));
    // Control tokens (<|im_end|>, <s>) are never text; unused slots have no bytes to match.
    const TokenType t = tok.token_type(id);
    const bool special = tok.is_special(id) && !(special_as_text && special_as_text(bytes[i]) &&
                                                 std::find(stops.begin(), stops.end(),
                                                           static_cast<int32_t>(i)) == stops.end());
    usable[i] = !special && t != TokenType::kUnused && t != TokenType::kUnknown;
  }
  return std::make_shared<const TokenVocab>(std::move(bytes), usable, stops);
}

}  // namespace arc::grammar
