// Helpers shared by the OpenAI and Anthropic routes: reading typed fields with errors a client
// can act on, sampling parameters, ids, SSE framing and HTTP status mapping.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "arc/service.h"
#include "arc/status.h"

namespace arc::server {

using json = nlohmann::json;

// Parses a request body into a JSON object, or explains what is wrong with it.
Result<json> parse_body(const std::string& body);

// Typed optional fields: absent or null gives nullopt; the wrong type or a value outside
// [lo, hi] gives INVALID_ARGUMENT naming the field and the allowed range.
Result<std::optional<double>> get_number(const json& obj, std::string_view key, double lo,
                                         double hi);
Result<std::optional<int64_t>> get_int(const json& obj, std::string_view key, int64_t lo,
                                       int64_t hi);
Result<std::optional<bool>> get_bool(const json& obj, std::string_view key);
Result<std::optional<std::string>> get_string(const json& obj, std::string_view key);

// "stop" as a string or an array of up to 16 non-empty strings.
Result<std::vector<std::string>> get_stop_list(const json& obj, std::string_view key);

// A random id with a prefix: "chatcmpl-3f9a...", "msg_...", "call_...".
std::string make_id(std::string_view prefix);
int64_t unix_time_now();

// HTTP status for a service error.
int http_status_for(const Status& s);

// One SSE frame: "data: <json>\n\n" (with "event: <name>\n" first when given).
std::string sse_frame(const json& data, std::string_view event = {});

// Writes a chunk to a streaming response; false when the client has gone.
bool sink_write(httplib::DataSink& sink, const std::string& chunk);

}  // namespace arc::server
