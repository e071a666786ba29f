// Parsing of the XML-style tool-call bodies. Each parser walks the body with a cursor and fails
// with a message naming what it expected; the caller reports the whole call as malformed then.
#include "chat/xml_tool_calls.h"

#include <algorithm>

namespace arc::chat {
namespace {

using json = nlohmann::ordered_json;

bool is_ws(char c) {
  return c == ' ' || c == '\n' || c == '\t' || c == '\r';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_ws(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_ws(s.back())) s.remove_suffix(1);
  return s;
}

// A cursor over a call body.
struct Cursor {
  std::string_view s;
  size_t i = 0;

  void skip_ws() {
    while (i < s.size() && is_ws(s[i])) ++i;
  }
  bool at_end() const { return i >= s.size(); }
  bool starts(std::string_view lit) const { return s.substr(i, lit.size()) == lit; }
  bool eat(std::string_view lit) {
    if (!starts(lit)) return false;
    i += lit.size();
    return true;
  }
  // The text up to `stop` (consumed with it); false when `stop` does not follow.
  bool until(std::string_view stop, std::string_view* out) {
    size_t p = s.find(stop, i);
    if (p == std::string_view::npos) return false;
    *out = s.substr(i, p - i);
    i = p + stop.size();
    return true;
  }
};

bool valid_name(std::string_view n) {
  if (n.empty()) return false;
  for (char c : n) {
    if (is_ws(c) || c == '<' || c == '>' || c == '"') return false;
  }
  return true;
}

// Adds key = value to args, typing the value by the parameter's schema; false on a repeated key.
bool add_argument(json& args, const json& tools, std::string_view tool, std::string_view key,
                  std::string_view value) {
  const std::string k(key);
  if (args.contains(k)) return false;
  if (!schema_value_is_text(tool_param_schema(tools, tool, key))) {
    json v = json::parse(trim(value), nullptr, /*allow_exceptions=*/false);
    if (!v.is_discarded()) {
      args[k] = std::move(v);
      return true;
    }
  }
  args[k] = std::string(value);
  return true;
}

ParsedCall failed(std::string raw, std::string why) {
  ParsedCall c;
  c.raw = std::move(raw);
  c.error = std::move(why);
  return c;
}

ParsedCall succeeded(std::string raw, std::string_view name, const json& args) {
  ParsedCall c;
  c.raw = std::move(raw);
  c.name = std::string(name);
  c.arguments = args.dump();
  return c;
}

bool has_any_string(const json& values) {
  for (const auto& v : values) {
    if (v.is_string()) return true;
  }
  return false;
}

}  // namespace

const json* tool_param_schema(const json& tools, std::string_view tool, std::string_view param) {
  if (!tools.is_array()) return nullptr;
  for (const auto& t : tools) {
    const json& f = t.is_object() && t.contains("function") ? t["function"] : t;
    if (!f.is_object() || !f.contains("name") || f["name"] != tool) continue;
    if (!f.contains("parameters")) return nullptr;
    const json& p = f["parameters"];
    if (!p.is_object() || !p.contains("properties") || !p["properties"].is_object()) return nullptr;
    auto it = p["properties"].find(std::string(param));
    return it == p["properties"].end() ? nullptr : &*it;
  }
  return nullptr;
}

bool schema_value_is_text(const json* s) {
  if (s == nullptr || !s->is_object()) return true;
  if (s->contains("type")) {
    const json& t = (*s)["type"];
    if (t.is_string()) return t == "string";
    if (t.is_array()) return std::find(t.begin(), t.end(), json("string")) != t.end();
  }
  if (s->contains("enum") && (*s)["enum"].is_array()) return has_any_string((*s)["enum"]);
  if (s->contains("const")) return (*s)["const"].is_string();
  for (const char* k : {"anyOf", "oneOf"}) {
    if (!s->contains(k) || !(*s)[k].is_array()) continue;
    for (const auto& branch : (*s)[k]) {
      if (branch.is_object() && (branch.contains("type") || branch.contains("enum")) &&
          schema_value_is_text(&branch)) {
        return true;
      }
    }
    return false;
  }
  return !s->contains("properties") && !s->contains("items");
}

ParsedCall parse_glm_call(std::string_view body, const json& tools) {
  const std::string raw = "<tool_call>" + std::string(body) + "</tool_call>";
  Cursor c{body};
  size_t name_end = body.find("<arg_key>");
  std::string_view name = trim(body.substr(0, name_end));
  if (!valid_name(name)) return failed(raw, "GLM tool call has no function name");
  c.i = name_end == std::string_view::npos ? body.size() : name_end;
  json args = json::object();
  for (c.skip_ws(); !c.at_end(); c.skip_ws()) {
    std::string_view key, value;
    if (!c.eat("<arg_key>") || !c.until("</arg_key>", &key)) {
      return failed(raw, "GLM tool call: expected <arg_key>NAME</arg_key>");
    }
    c.skip_ws();
    if (!c.eat("<arg_value>") || !c.until("</arg_value>", &value)) {
      return failed(raw, "GLM tool call: expected <arg_value>...</arg_value> after a key");
    }
    if (!add_argument(args, tools, name, trim(key), value)) {
      return failed(raw, "GLM tool call: argument '" + std::string(trim(key)) + "' given twice");
    }
  }
  return succeeded(raw, name, args);
}

ParsedCall parse_qwen3_coder_call(std::string_view body, const json& tools) {
  const std::string raw = "<tool_call>" + std::string(body) + "</tool_call>";
  Cursor c{body};
  c.skip_ws();
  std::string_view name;
  if (!c.eat("<function=") || !c.until(">", &name) || !valid_name(name)) {
    return failed(raw, "Qwen3-Coder tool call: expected <function=NAME>");
  }
  json args = json::object();
  for (c.skip_ws(); !c.eat("</function>"); c.skip_ws()) {
    std::string_view key, value;
    if (!c.eat("<parameter=") || !c.until(">", &key) || !c.until("</parameter>", &value)) {
      return failed(raw,
                    "Qwen3-Coder tool call: expected <parameter=NAME>...</parameter> or "
                    "</function>");
    }
    // The template writes "<parameter=K>\nV\n</parameter>": the newlines are layout.
    if (!value.empty() && value.front() == '\n') value.remove_prefix(1);
    if (!value.empty() && value.back() == '\n') value.remove_suffix(1);
    if (!add_argument(args, tools, name, key, value)) {
      return failed(raw, "Qwen3-Coder tool call: argument '" + std::string(key) + "' given twice");
    }
  }
  c.skip_ws();
  if (!c.at_end()) return failed(raw, "Qwen3-Coder tool call: text after </function>");
  return succeeded(raw, name, args);
}

std::vector<ParsedCall> parse_minimax_calls(std::string_view body, const json& tools) {
  std::vector<ParsedCall> calls;
  Cursor c{body};
  for (c.skip_ws(); !c.at_end(); c.skip_ws()) {
    const size_t start = c.i;
    std::string_view name;
    bool ok = c.eat("<invoke name=\"") && c.until("\">", &name) && valid_name(name);
    json args = json::object();
    std::string why = "MiniMax tool call: expected <invoke name=\"NAME\">";
    for (c.skip_ws(); ok && !c.eat("</invoke>"); c.skip_ws()) {
      std::string_view key, value;
      if (!c.eat("<parameter name=\"") || !c.until("\">", &key) ||
          !c.until("</parameter>", &value)) {
        ok = false;
        why = "MiniMax tool call: expected <parameter name=\"NAME\">...</parameter> or </invoke>";
      } else if (!add_argument(args, tools, name, key, value)) {
        ok = false;
        why = "MiniMax tool call: argument '" + std::string(key) + "' given twice";
      }
    }
    if (!ok) {
      // The rest of the block cannot be split into calls any more: all of it is the error (the
      // whole block with its markers when no call came before).
      std::string rest = calls.empty()
                             ? "<minimax:tool_call>" + std::string(body) + "</minimax:tool_call>"
                             : std::string(body.substr(start));
      calls.push_back(failed(std::move(rest), why));
      return calls;
    }
    calls.push_back(succeeded(std::string(body.substr(start, c.i - start)), name, args));
  }
  if (calls.empty()) {
    calls.push_back(failed("<minimax:tool_call>" + std::string(body) + "</minimax:tool_call>",
                           "MiniMax tool call block holds no <invoke>"));
  }
  return calls;
}

}  // namespace arc::chat
