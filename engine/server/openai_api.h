// OpenAI-compatible routes: /v1/chat/completions, /v1/completions, /v1/models.
#pragma once

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "arc/service.h"
#include "arc/status.h"

namespace arc::server {

// Request parsing (exposed for tests): validates every field it reads.
Result<ChatRequest> parse_openai_chat(const nlohmann::json& body);
Result<CompletionRequest> parse_openai_completion(const nlohmann::json& body);

// {"error": {"message", "type", "param", "code"}} with the HTTP status.
void send_openai_error(httplib::Response& res, const Status& status, int http_status = 0);

void handle_chat_completions(InferenceService& service, const httplib::Request& req,
                             httplib::Response& res);
void handle_completions(InferenceService& service, const httplib::Request& req,
                        httplib::Response& res);
void handle_models(InferenceService& service, const httplib::Request& req, httplib::Response& res);

}  // namespace arc::server
