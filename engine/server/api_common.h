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

// Deepest nesting of arrays and objects a request body may have. Real requests (JSON schemas
// of tools included) stay far below; the limit keeps every recursive walk of the request
// (copies, dumps, template values) far from the stack's end.
inline constexpr int kMaxJsonDepth = 64;

// Parses a request body into a JSON object, or explains what is wrong with it: not JSON,
// invalid UTF-8, nested deeper than kMaxJsonDepth, or a number too large for a double (1e400).
Result<json> parse_body(const std::string& body);

// `text` shortened to at most `max_chars` bytes (cut at a UTF-8 boundary, "..." appended), for
// echoing client-supplied names in error messages.
std::string truncate_for_message(std::string_view text, size_t max_chars = 120);

// Typed optional fields: absent or null gives nullopt; the wrong type or a value outside
// [lo, hi] gives INVALID_ARGUMENT naming the field and the allowed range. `where` is the path of
// `obj` in the request ("tools[0]"), prefixed to the key in messages.
Result<std::optional<double>> get_number(const json& obj, std::string_view key, double lo,
                                         double hi, std::string_view where = {});
Result<std::optional<int64_t>> get_int(const json& obj, std::string_view key, int64_t lo,
                                       int64_t hi, std::string_view where = {});
Result<std::optional<bool>> get_bool(const json& obj, std::string_view key,
                                     std::string_view where = {});
Result<std::optional<std::string>> get_string(const json& obj, std::string_view key,
                                              std::string_view where = {});
// A reasoning effort ("low", "medium" or "high", as gpt-oss's template takes it); "minimal" is
// read as "low" (OpenAI's smallest level for its own models).
Result<std::optional<std::string>> get_reasoning_effort(const json& obj, std::string_view key,
                                                        std::string_view where = {});
// An optional sub-object: absent or null gives nullptr, another type an error naming the field.
Result<const json*> get_object(const json& obj, std::string_view key, std::string_view where = {});

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
