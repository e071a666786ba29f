// Message formatting: turns a conversation into the variables chat templates expect, the way
// transformers' apply_chat_template builds them (messages, tools, add_generation_prompt,
// bos_token, eos_token, enable_thinking, strftime_now and any extra keyword arguments).
#include "arc/chat_template.h"

#include <optional>

namespace arc {
namespace {

using json = nlohmann::ordered_json;

// tokenizer_config.json writes special tokens as strings or as AddedToken objects.
std::string token_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string()) {
    return v["content"].get<std::string>();
  }
  return "";
}

// Tool-call arguments arrive as JSON text inside a string, past the request's depth check:
// parse them only when shallow enough for the recursive walks that follow (copies, template
// values). Deeper or invalid text stays a string.
json parse_arguments(const std::string& text) {
  constexpr int kMaxDepth = 64;
  bool too_deep = false;
  json::parser_callback_t cb = [&](int depth, json::parse_event_t event, json&) {
    if ((event == json::parse_event_t::object_start || event == json::parse_event_t::array_start) &&
        depth >= kMaxDepth) {
      too_deep = true;
      return false;  // skip what is inside
    }
    return true;
  };
  json args = json::parse(text, cb, /*allow_exceptions=*/false);
  if (too_deep) return json(json::value_t::discarded);
  return args;
}

// A content list whose parts are all text, joined with "\n"; nullopt when it holds anything else.
std::optional<std::string> joined_text_parts(const json& content) {
  std::string text;
  for (size_t i = 0; i < content.size(); ++i) {
    const json& part = content[i];
    if (!part.is_object() || !part.contains("type") || part["type"] != "text" ||
        !part.contains("text") || !part["text"].is_string()) {
      return std::nullopt;
    }
    if (i > 0) text += "\n";
    text += part["text"].get<std::string>();
  }
  return text;
}

bool renders_needle(const ChatTemplate& tpl, const json& content, const std::string& needle) {
  json ctx = {{"messages", json::array({{{"role", "user"}, {"content", content}}})},
              {"add_generation_prompt", true},
              {"bos_token", ""},
              {"eos_token", ""}};
  auto out = tpl.render(ctx, std::time_t{0});
  return out.ok() && out->find(needle) != std::string::npos;
}

}  // namespace

ChatFormatter::ChatFormatter(ChatTemplate tpl, std::string bos_token, std::string eos_token)
    : tpl_(std::move(tpl)), bos_(std::move(bos_token)), eos_(std::move(eos_token)) {
  // The way llama.cpp learns a template's capabilities: does the text of a message given as a
  // plain string reach the prompt, and does the text of a typed part?
  const std::string needle = "<arc-content-probe-5d1e>";
  typed_content_ =
      !renders_needle(tpl_, json(needle), needle) &&
      renders_needle(tpl_, json::array({{{"type", "text"}, {"text", needle}}}), needle);
}

Result<ChatFormatter> ChatFormatter::from_tokenizer_config(const json& config) {
  if (!config.is_object()) return invalid_argument("tokenizer_config.json must hold a JSON object");
  const json* tpl = config.contains("chat_template") ? &config["chat_template"] : nullptr;
  std::string source;
  if (tpl && tpl->is_string()) {
    source = tpl->get<std::string>();
  } else if (tpl && tpl->is_array()) {
    // [{"name": "default", "template": ...}, {"name": "tool_use", ...}]
    for (const auto& t : *tpl) {
      if (t.is_object() && t.value("name", "") == "default" && t.contains("template") &&
          t["template"].is_string()) {
        source = t["template"].get<std::string>();
      }
    }
    if (source.empty()) {
      return invalid_argument(
          "tokenizer_config.json lists chat templates but none named 'default'");
    }
  } else {
    return not_found(
        "tokenizer_config.json has no chat_template (newer models ship it as a separate "
        "chat_template.jinja file; pass that with --template)");
  }
  auto parsed = ChatTemplate::parse(source);
  if (!parsed.ok()) return parsed.status();
  return ChatFormatter(std::move(*parsed), token_text(config.value("bos_token", json())),
                       token_text(config.value("eos_token", json())));
}

json chat_message_to_json(const ChatMessage& m) {
  json j = json::object();
  j["role"] = m.role;
  j["content"] = m.content;
  if (!m.reasoning_content.empty()) {
    // Templates name the field differently: Qwen3, GLM and MiniMax read reasoning_content,
    // gpt-oss reads thinking.
    j["reasoning_content"] = m.reasoning_content;
    j["thinking"] = m.reasoning_content;
  }
  if (!m.tool_calls.empty()) {
    json calls = json::array();
    for (const auto& c : m.tool_calls) {
      json call = json::object();
      if (!c.id.empty()) call["id"] = c.id;
      call["type"] = "function";
      // Templates expect a mapping (Qwen, gpt-oss apply tojson to it); arguments that are not a
      // JSON object stay the text the model produced.
      json args = parse_arguments(c.arguments_json);
      call["function"] = {{"name", c.name},
                          {"arguments", args.is_discarded() ? json(c.arguments_json) : args}};
      calls.push_back(std::move(call));
    }
    j["tool_calls"] = std::move(calls);
  }
  if (!m.tool_call_id.empty()) j["tool_call_id"] = m.tool_call_id;
  if (!m.name.empty()) j["name"] = m.name;
  return j;
}

Result<std::vector<ChatMessage>> chat_messages_from_json(const json& messages) {
  if (!messages.is_array()) return invalid_argument("messages must be a JSON array");
  std::vector<ChatMessage> out;
  for (size_t i = 0; i < messages.size(); ++i) {
    const json& m = messages[i];
    const std::string where = "messages[" + std::to_string(i) + "]";
    if (!m.is_object()) return invalid_argument(where + " must be an object");
    if (!m.contains("role") || !m["role"].is_string()) {
      return invalid_argument(where + " needs a string \"role\"");
    }
    ChatMessage msg;
    msg.role = m["role"].get<std::string>();
    msg.content = m.contains("content") ? m["content"] : json();
    if (!msg.content.is_null() && !msg.content.is_string() && !msg.content.is_array()) {
      return invalid_argument(where + ".content must be a string, an array of parts or null");
    }
    if (m.contains("reasoning_content") && m["reasoning_content"].is_string()) {
      msg.reasoning_content = m["reasoning_content"].get<std::string>();
    } else if (m.contains("thinking") && m["thinking"].is_string()) {
      msg.reasoning_content = m["thinking"].get<std::string>();  // gpt-oss's own field name
    }
    if (m.contains("tool_calls") && !m["tool_calls"].is_null()) {
      if (!m["tool_calls"].is_array())
        return invalid_argument(where + ".tool_calls must be an array");
      for (const auto& c : m["tool_calls"]) {
        const json& f = c.contains("function") ? c["function"] : c;
        if (!f.is_object() || !f.contains("name") || !f["name"].is_string()) {
          return invalid_argument(where + ".tool_calls: each call needs function.name");
        }
        ChatToolCall call;
        if (c.is_object() && c.contains("id") && c["id"].is_string()) call.id = c["id"];
        call.name = f["name"].get<std::string>();
        const json args = f.value("arguments", json::object());
        call.arguments_json = args.is_string() ? args.get<std::string>() : args.dump();
        msg.tool_calls.push_back(std::move(call));
      }
    }
    if (m.contains("tool_call_id") && m["tool_call_id"].is_string()) {
      msg.tool_call_id = m["tool_call_id"].get<std::string>();
    }
    msg.name = m.contains("name") && m["name"].is_string() ? m["name"].get<std::string>() : "";
    out.push_back(std::move(msg));
  }
  return out;
}

json ChatFormatter::build_context(const std::vector<ChatMessage>& messages,
                                  const ChatFormatOptions& options) const {
  json ctx = json::object();
  json msgs = json::array();
  for (const auto& m : messages) {
    json jm = chat_message_to_json(m);
    if (!typed_content_ && jm["content"].is_array()) {
      if (auto text = joined_text_parts(jm["content"])) jm["content"] = std::move(*text);
    }
    msgs.push_back(std::move(jm));
  }
  ctx["messages"] = std::move(msgs);
  if (options.tools.is_array() && !options.tools.empty()) ctx["tools"] = options.tools;
  ctx["add_generation_prompt"] = options.add_generation_prompt;
  ctx["bos_token"] = bos_;
  ctx["eos_token"] = eos_;
  if (options.enable_thinking) ctx["enable_thinking"] = *options.enable_thinking;
  if (options.extra.is_object()) {
    for (const auto& [k, v] : options.extra.items()) ctx[k] = v;
  }
  return ctx;
}

Result<std::string> ChatFormatter::format(const std::vector<ChatMessage>& messages,
                                          const ChatFormatOptions& options) const {
  return tpl_.render(build_context(messages, options), options.now);
}

}  // namespace arc
