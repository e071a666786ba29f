// Prompt sets for bench-serve: the built-in prose, code and JSON sets (resources/bench/*.json,
// compiled into the library so an installed binary needs no data files) or a user's file.
//
// File format:
//   {"name": "prose", "description": "...", "system": "optional system prompt",
//    "prompts": [{"id": "tides", "prompt": "Explain ..."},
//                {"id": "x", "messages": [{"role": "user", "content": "..."}]}]}
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "arc/status.h"

namespace arc::bench {

struct PromptSet {
  std::string name;
  std::string description;
  std::vector<nlohmann::json> conversations;  // each an OpenAI messages array
};

// Parses a prompt-set file's text; origin names it in error messages.
Result<PromptSet> parse_prompt_set(std::string_view json_text, std::string_view origin);

// "prose", "code" or "json" (compiled in), or a path to a prompt-set file ("*.json" or any name
// with a '/').
Result<PromptSet> load_prompt_set(const std::string& name_or_path);

std::vector<std::string> builtin_prompt_set_names();

// The long-prompt material: paragraphs of prose repeated to the wanted size and a closing
// question (resources/bench/long_context.json).
struct LongContextText {
  std::vector<std::string> paragraphs;
  std::string question;
};
Result<LongContextText> builtin_long_context();

// A user message of about target_chars characters: a header carrying nonce (so no two prompts
// share a prefix and no prefix cache can shorten the prefill), numbered sections cycling through
// the paragraphs, then the question.
std::string build_long_prompt(const LongContextText& text, size_t target_chars,
                              std::string_view nonce);

}  // namespace arc::bench
