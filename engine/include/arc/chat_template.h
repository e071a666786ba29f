// Chat templates: the Jinja subset that real model templates are written in (Qwen, Llama 3,
// DeepSeek V3, Gemma 3, gpt-oss/Harmony), rendered byte for byte as the reference renderer
// (@huggingface/jinja, what transformers.js uses) does, and the message formatting on top of it.
//
//   auto tpl = arc::ChatTemplate::parse(source);           // syntax errors: line and column
//   auto text = tpl->render(context_json);                  // runtime errors and raise_exception
//
// Rendering is bounded (recursion depth, steps, output size), so a hostile template gets an
// error, never a hang or a crash.
#pragma once

#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "arc/status.h"

namespace arc {

namespace jinja {
struct Node;
}
namespace gguf {
class File;
}

struct ChatTemplateLimits {
  int max_depth = 300;                  // nested evaluation and macro calls
  uint64_t max_steps = 20'000'000;      // statements, loop iterations and calls
  size_t max_output_bytes = 64u << 20;  // the rendered prompt
};

class ChatTemplate {
 public:
  // Parses a template; the error says where ("chat template line 3, column 14: ...").
  static Result<ChatTemplate> parse(std::string_view source);

  // Renders with `context` (a JSON object: messages, tools, add_generation_prompt, bos_token,
  // ...) as the template's variables. `now` feeds strftime_now() (UTC); default: current time.
  Result<std::string> render(const nlohmann::ordered_json& context,
                             std::optional<std::time_t> now = std::nullopt,
                             const ChatTemplateLimits& limits = {}) const;

  const std::string& source() const { return source_; }

 private:
  std::string source_;
  std::shared_ptr<const std::vector<std::shared_ptr<jinja::Node>>> program_;
};

// A tool call made by the assistant, as OpenAI's API carries it.
struct ChatToolCall {
  std::string id;  // may be empty
  std::string name;
  std::string arguments_json;  // the arguments object as JSON text
};

// One message of a conversation. `content` is a string, an array of parts
// ([{"type":"text","text":...}, {"type":"image"}, ...]) or null (assistant turns that only call
// tools).
struct ChatMessage {
  std::string role;  // system, developer, user, assistant, tool
  nlohmann::ordered_json content;
  std::string reasoning_content;  // assistant thinking, when kept apart from content
  std::vector<ChatToolCall> tool_calls;
  std::string tool_call_id;  // role "tool": the call this answers
  std::string name;          // role "tool": the function's name, when known
};

struct ChatFormatOptions {
  bool add_generation_prompt = true;
  std::optional<bool> enable_thinking;  // unset: the template's default
  nlohmann::ordered_json tools;         // JSON-schema tool list, or null
  nlohmann::ordered_json extra;         // more template variables (reasoning_effort, ...)
  std::optional<std::time_t> now;       // strftime_now(); default: current time
};

// Builds the variables a chat template expects, as transformers' apply_chat_template does, and
// renders them.
class ChatFormatter {
 public:
  // Renders the template once with probe messages to learn whether it needs content as a list
  // of typed parts (see requires_typed_content()).
  ChatFormatter(ChatTemplate tpl, std::string bos_token, std::string eos_token);

  // From a Hugging Face tokenizer_config.json (its chat_template: a string, or a list of named
  // templates of which "default" is used; bos/eos as strings or AddedToken objects).
  static Result<ChatFormatter> from_tokenizer_config(const nlohmann::ordered_json& config);
  // From GGUF metadata: tokenizer.chat_template, BOS/EOS strings from tokenizer.ggml.*.
  static Result<ChatFormatter> from_gguf(const gguf::File& file);

  nlohmann::ordered_json build_context(const std::vector<ChatMessage>& messages,
                                       const ChatFormatOptions& options) const;
  Result<std::string> format(const std::vector<ChatMessage>& messages,
                             const ChatFormatOptions& options) const;

  const ChatTemplate& chat_template() const { return tpl_; }
  const std::string& bos_token() const { return bos_; }
  const std::string& eos_token() const { return eos_; }
  // True when the template only shows content given as a list of typed parts. Otherwise (most
  // text templates, which call string methods on content) a content list made only of text parts
  // is joined into one string with "\n" before rendering, as llama.cpp's server and vLLM do;
  // lists holding images stay lists for the vision templates that iterate them.
  bool requires_typed_content() const { return typed_content_; }

 private:
  ChatTemplate tpl_;
  std::string bos_;
  std::string eos_;
  bool typed_content_ = false;
};

// Messages from OpenAI-style JSON ([{"role":..., "content":..., "tool_calls":[...]}, ...]).
// Tool-call arguments given as a JSON string are kept as that text.
Result<std::vector<ChatMessage>> chat_messages_from_json(const nlohmann::ordered_json& messages);
nlohmann::ordered_json chat_message_to_json(const ChatMessage& message);

}  // namespace arc
