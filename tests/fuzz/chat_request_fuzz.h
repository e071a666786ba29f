// One input of the chat request fuzzer: a request body through both dialects' parsers (OpenAI
// chat and completions, Anthropic messages and count_tokens), their error answers, and the chat
// template rendering of every request that parses, with real templates (text-only and typed
// content). Shared by the libFuzzer target and the corpus regression test.
#pragma once

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <httplib.h>

#include "anthropic_api.h"
#include "api_common.h"
#include "arc/chat_template.h"
#include "auth.h"
#include "openai_api.h"

namespace arc::fuzz {

// The templates requests are rendered with: tests/data/chat_templates/*/chat_template.jinja.
inline const std::vector<ChatFormatter>& fuzz_formatters() {
  static const std::vector<ChatFormatter> formatters = [] {
    std::vector<ChatFormatter> out;
    const std::filesystem::path dir = std::filesystem::path(ARC_TEST_DATA_DIR) / "chat_templates";
    for (const char* family : {"qwen3", "llama3", "gemma3", "deepseek_v3"}) {
      std::ifstream f(dir / family / "chat_template.jinja", std::ios::binary);
      std::stringstream ss;
      ss << f.rdbuf();
      auto tpl = ChatTemplate::parse(ss.str());
      if (tpl.ok()) out.emplace_back(std::move(*tpl), "<s>", "</s>");
    }
    return out;
  }();
  return formatters;
}

// What the engine does with a parsed chat request before tokenizing (request_pipeline.cpp).
inline void render_all(const ChatRequest& r) {
  auto messages = chat_messages_from_json(nlohmann::ordered_json(r.messages));
  if (!messages.ok()) return;
  ChatFormatOptions fo;
  fo.add_generation_prompt = true;
  fo.enable_thinking = r.enable_thinking;
  fo.now = 0;
  if (!r.tools.empty()) fo.tools = nlohmann::ordered_json(r.tools);
  for (const auto& f : fuzz_formatters()) (void)f.format(*messages, fo);
}

inline void run_chat_request_input(std::string_view input) {
  const std::string body(input);
  (void)server::bearer_token(input);
  (void)server::api_key_matches(input, "secret-key");
  httplib::Response res;
  auto parsed = server::parse_body(body);
  if (!parsed.ok()) {
    server::send_openai_error(res, parsed.status());
    server::send_anthropic_error(res, parsed.status());
    return;
  }
  if (auto chat = server::parse_openai_chat(*parsed); chat.ok()) {
    render_all(*chat);
  } else {
    server::send_openai_error(res, chat.status());
  }
  if (auto completion = server::parse_openai_completion(*parsed); !completion.ok()) {
    server::send_openai_error(res, completion.status());
  }
  for (const bool counting : {false, true}) {
    if (auto msgs = server::parse_anthropic_messages(*parsed, counting); msgs.ok()) {
      render_all(*msgs);
    } else {
      server::send_anthropic_error(res, msgs.status());
    }
  }
}

}  // namespace arc::fuzz
