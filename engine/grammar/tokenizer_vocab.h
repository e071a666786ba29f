// The grammar's view of a loaded tokenizer (grammar/token_mask.h): built once per model.
#pragma once

#include <memory>
#include <vector>

#include "arc/tokenizer.h"
#include "grammar/token_mask.h"

namespace arc::grammar {

// Every token's bytes; special, unknown and unused tokens are never allowed; `stops` (EOS,
// <|im_end|>, ...) only where the document is complete.
std::shared_ptr<const TokenVocab> vocab_from_tokenizer(const Tokenizer& tok,
                                                       const std::vector<int32_t>& stops);

}  // namespace arc::grammar
