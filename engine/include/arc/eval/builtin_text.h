// The built-in evaluation text (resources/eval/: English prose and reference text, source code,
// and prose in other languages, each part's source and licence in resources/eval/README.md),
// compiled into the engine so `arclight-engine eval` needs no download.
#pragma once

#include <string>
#include <string_view>

namespace arc::eval {

// The whole text (about 330 KB of UTF-8), frozen: figures on it stay comparable across versions.
std::string builtin_eval_text();
// How reports name it.
inline constexpr std::string_view kBuiltinTextName = "built-in";

}  // namespace arc::eval
