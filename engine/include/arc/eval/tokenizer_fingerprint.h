// A short hash of everything that decides how a tokenizer maps text to ids (model kind,
// pre-tokenizer, every piece and its type, BOS/EOS): two models can only be compared token by
// token when their fingerprints match.
#pragma once

#include <string>

#include "arc/tokenizer.h"

namespace arc::eval {

// 16 hex digits (FNV-1a 64).
std::string tokenizer_fingerprint(const Tokenizer& tok);
// "qwen2 BPE, 151,936 tokens": how an error names a tokenizer to the user.
std::string describe_tokenizer(const Tokenizer& tok);

}  // namespace arc::eval
