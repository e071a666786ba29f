// Tool calls written as XML-like markup (GLM-4.5/4.6, MiniMax-M2, Qwen3-Coder): the text of one
// call block parsed into calls. These formats write every argument value as bare text; a value
// stays a string unless the tool's JSON schema gives its parameter another type, and is then
// read as JSON (as llama.cpp's parsers of these formats do). A value that does not parse as the
// JSON its schema asks for is kept as the text the model wrote.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace arc::chat {

struct ParsedCall {
  std::string raw;  // the text of this call, markers included
  std::string name;
  std::string arguments;  // a JSON object; empty when error is set
  std::string error;      // non-empty: the call is malformed (raw holds all of it)
};

// Body between "<tool_call>" and "</tool_call>": "NAME\n<arg_key>K</arg_key>\n<arg_value>V
// </arg_value>\n..." (GLM). `tools`: the request's OpenAI tool list, or null.
ParsedCall parse_glm_call(std::string_view body, const nlohmann::ordered_json& tools);

// Body between "<tool_call>" and "</tool_call>": "\n<function=NAME>\n<parameter=K>\nV\n
// </parameter>\n</function>\n" (Qwen3-Coder).
ParsedCall parse_qwen3_coder_call(std::string_view body, const nlohmann::ordered_json& tools);

// Body between "<minimax:tool_call>" and "</minimax:tool_call>": one or more
// "<invoke name=\"N\">\n<parameter name=\"K\">V</parameter>\n</invoke>" (MiniMax-M2).
std::vector<ParsedCall> parse_minimax_calls(std::string_view body,
                                            const nlohmann::ordered_json& tools);

// The JSON schema of a tool's parameter (null when the tool or the parameter is not declared).
const nlohmann::ordered_json* tool_param_schema(const nlohmann::ordered_json& tools,
                                                std::string_view tool, std::string_view param);
// True when values of this schema are written as bare text: it says "string" (or allows it), or
// says nothing about the type.
bool schema_value_is_text(const nlohmann::ordered_json* schema);

}  // namespace arc::chat
