// The grammar's view of a loaded tokenizer (grammar/token_mask.h): built once per model.
#pragma once

#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "arc/tokenizer.h"
#include "grammar/token_mask.h"

namespace arc::grammar {

// Every token's bytes; special, unknown and unused tokens are never allowed, except special
// tokens whose text `special_as_text` accepts (a family's markers); `stops` (EOS, <|im_end|>,
// ...) only where the document is complete, never as text.
std::shared_ptr<const TokenVocab> vocab_from_tokenizer(
    const Tokenizer& tok, const std::vector<int32_t>& stops,
    const std::function<bool(std::string_view)>& special_as_text = {});

}  // namespace arc::grammar
