#include "api_constraint.h"

namespace arc::server {

namespace {

using nlohmann::ordered_json;

template <class J>
std::string string_at(const J& obj, const char* key) {
  return obj.is_object() && obj.contains(key) && obj[key].is_string()
             ? obj[key].template get<std::string>()
             : std::string();
}

// tool_choice "auto" (or absent) with tools marked strict: the calls the model chooses to make
// are constrained (every tool's arguments: the strict ones by their schemas), its text is not.
template <class J>
OutputConstraint auto_strict_calls(const J& body) {
  OutputConstraint c;
  if (body.contains("tool_choice") && !body["tool_choice"].is_null() &&
      !(body["tool_choice"].is_string() && body["tool_choice"] == "auto")) {
    return c;
  }
  if (!body.contains("tools") || !body["tools"].is_array()) return c;
  bool any_strict = false;
  for (const auto& t : body["tools"]) {
    if (!t.is_object() || !t.contains("function")) continue;
    const J& f = t["function"];
    OutputConstraint::Tool tool;
    tool.name = string_at(f, "name");
    if (f.contains("parameters") && f["parameters"].is_object()) {
      tool.parameters = ordered_json::parse(f["parameters"].dump());
    }
    tool.strict =
        f.contains("strict") && f["strict"].is_boolean() && f["strict"].template get<bool>();
    any_strict = any_strict || tool.strict;
    c.tools.push_back(std::move(tool));
  }
  if (!any_strict) return {};
  c.kind = OutputConstraint::Kind::kToolCall;
  c.optional = true;
  c.where = "tools";
  return c;
}

// OpenAI: tools[i] = {"type": "function", "function": {"name", "parameters", "strict"}}.
template <class J>
Result<OutputConstraint> openai_constraint(const J& body, bool chat) {
  OutputConstraint c;
  if (chat && body.contains("tool_choice") && !body["tool_choice"].is_null()) {
    const J& tc = body["tool_choice"];
    bool required = false;
    std::string forced;
    if (tc.is_string()) {
      const std::string s = tc.template get<std::string>();
      if (s == "required") {
        required = true;
      } else if (s != "auto" && s != "none") {
        return invalid_argument(
            "'tool_choice' must be \"none\", \"auto\", \"required\" or {\"type\": \"function\", "
            "\"function\": {\"name\": ...}}");
      }
    } else if (tc.is_object() && string_at(tc, "type") == "function" &&
               !string_at(tc.contains("function") ? tc["function"] : J(), "name").empty()) {
      forced = string_at(tc["function"], "name");
    } else {
      return invalid_argument(
          "'tool_choice' must be \"none\", \"auto\", \"required\" or {\"type\": \"function\", "
          "\"function\": {\"name\": ...}}");
    }
    if (required || !forced.empty()) {
      if (!body.contains("tools") || !body["tools"].is_array() || body["tools"].empty()) {
        return invalid_argument("'tool_choice' asks for a tool call but 'tools' is empty");
      }
      c.kind = OutputConstraint::Kind::kToolCall;
      c.where = "tools";
      for (const auto& t : body["tools"]) {
        if (!t.is_object() || !t.contains("function")) continue;
        const J& f = t["function"];
        const std::string name = string_at(f, "name");
        if (!forced.empty() && name != forced) continue;
        OutputConstraint::Tool tool;
        tool.name = name;
        if (f.contains("parameters") && f["parameters"].is_object()) {
          tool.parameters = ordered_json::parse(f["parameters"].dump());
        }
        tool.strict =
            f.contains("strict") && f["strict"].is_boolean() && f["strict"].template get<bool>();
        c.tools.push_back(std::move(tool));
      }
      if (c.tools.empty()) {
        return invalid_argument("'tool_choice' names the function \"" + forced +
                                "\", which 'tools' does not define");
      }
      return c;  // a forced call: the call is the whole output
    }
  }
  if (!body.contains("response_format") || body["response_format"].is_null()) {
    if (chat) c = auto_strict_calls(body);
    return c;
  }
  const J& rf = body["response_format"];
  const std::string type = string_at(rf, "type");
  if (type != "text" && type != "json_object" && type != "json_schema") {
    return invalid_argument("'response_format.type' must be text, json_object or json_schema");
  }
  if (type == "json_object") {
    c.kind = OutputConstraint::Kind::kJsonObject;
    c.where = "response_format";
  } else if (type == "json_schema") {
    if (!rf.contains("json_schema") || !rf["json_schema"].is_object()) {
      return invalid_argument(
          "'response_format.json_schema' must be an object: {\"name\": ..., \"schema\": {...}}");
    }
    const J& js = rf["json_schema"];
    c.kind = OutputConstraint::Kind::kJsonSchema;
    c.where = "response_format.json_schema.schema";
    c.schema = ordered_json::object();  // no schema: any JSON value
    if (js.contains("schema") && !js["schema"].is_null()) {
      if (!js["schema"].is_object() && !js["schema"].is_boolean()) {
        return invalid_argument(
            "'response_format.json_schema.schema' must be a JSON Schema object");
      }
      c.schema = ordered_json::parse(js["schema"].dump());
    }
  }
  return c;
}

// Anthropic: tools[i] = {"name", "input_schema", "strict"?}; tool_choice {"type": "auto" | "any"
// | "tool" | "none", "name"}.
template <class J>
Result<OutputConstraint> anthropic_constraint(const J& body) {
  OutputConstraint c;
  if (!body.contains("tool_choice") || !body["tool_choice"].is_object()) return c;
  const std::string type = string_at(body["tool_choice"], "type");
  if (type != "any" && type != "tool") return c;
  const std::string forced = type == "tool" ? string_at(body["tool_choice"], "name") : "";
  if (type == "tool" && forced.empty()) {
    return invalid_argument("'tool_choice.name' is required with {\"type\": \"tool\"}");
  }
  if (!body.contains("tools") || !body["tools"].is_array() || body["tools"].empty()) {
    return invalid_argument("'tool_choice' asks for a tool call but 'tools' is empty");
  }
  c.kind = OutputConstraint::Kind::kToolCall;
  c.where = "tools";
  for (const auto& t : body["tools"]) {
    const std::string name = string_at(t, "name");
    if (name.empty() || (!forced.empty() && name != forced)) continue;
    OutputConstraint::Tool tool;
    tool.name = name;
    if (t.contains("input_schema") && t["input_schema"].is_object()) {
      tool.parameters = ordered_json::parse(t["input_schema"].dump());
    }
    tool.strict =
        t.contains("strict") && t["strict"].is_boolean() && t["strict"].template get<bool>();
    c.tools.push_back(std::move(tool));
  }
  if (c.tools.empty()) {
    return invalid_argument("'tool_choice' names the tool \"" + forced +
                            "\", which 'tools' does not define");
  }
  return c;
}

}  // namespace

Result<OutputConstraint> parse_openai_constraint(const nlohmann::json& body, bool chat) {
  return openai_constraint(body, chat);
}

Result<OutputConstraint> parse_anthropic_constraint(const nlohmann::json& body) {
  return anthropic_constraint(body);
}

void with_schema_order(const std::string& raw_body, bool anthropic, bool chat,
                       OutputConstraint& c) {
  if (c.kind != OutputConstraint::Kind::kJsonSchema &&
      c.kind != OutputConstraint::Kind::kToolCall) {
    return;
  }
  const ordered_json body = ordered_json::parse(raw_body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded() || !body.is_object()) return;
  auto ordered = anthropic ? anthropic_constraint(body) : openai_constraint(body, chat);
  if (ordered.ok() && ordered->kind == c.kind) c = std::move(ordered).value();
}

}  // namespace arc::server
