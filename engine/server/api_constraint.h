// Structured-output fields of requests as an OutputConstraint (arc/service.h): OpenAI's
// response_format (json_object, json_schema) and tool_choice forcing a call ("required" or a named
// function), Anthropic's tool_choice ({"type": "any"} or {"type": "tool", "name": ...}).
//
// Request bodies are parsed into nlohmann::json, whose objects sort their keys; a schema's
// property order is the order the model writes them in (OpenAI writes them in declaration
// order, and a "reasoning" field before "answer" matters). So the routes parse again into
// ordered JSON (with_schema_order) once the request was accepted.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "arc/service.h"
#include "arc/status.h"

namespace arc::server {

// chat: /v1/chat/completions (tool_choice counts); otherwise /v1/completions.
Result<OutputConstraint> parse_openai_constraint(const nlohmann::json& body, bool chat);
Result<OutputConstraint> parse_anthropic_constraint(const nlohmann::json& body);

// The same constraint with its schemas in the key order of the raw body (unchanged when the
// body does not parse again, which cannot happen after parse_body accepted it).
void with_schema_order(const std::string& raw_body, bool anthropic, bool chat, OutputConstraint& c);

}  // namespace arc::server
