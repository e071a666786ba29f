// Anthropic Messages routes: /v1/messages and /v1/messages/count_tokens.
#pragma once

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "arc/service.h"
#include "arc/status.h"

namespace arc::server {

// Converts an Anthropic Messages body into the engine's (OpenAI-shaped) chat request.
Result<ChatRequest> parse_anthropic_messages(const nlohmann::json& body, bool for_counting);

// {"type": "error", "error": {"type", "message"}} with the HTTP status.
void send_anthropic_error(httplib::Response& res, const Status& status, int http_status = 0);

void handle_messages(InferenceService& service, const httplib::Request& req,
                     httplib::Response& res);
void handle_count_tokens(InferenceService& service, const httplib::Request& req,
                         httplib::Response& res);

}  // namespace arc::server
