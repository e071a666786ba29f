#include "api_common.h"

#include <chrono>
#include <cmath>
#include <random>

namespace arc::server {

Result<json> parse_body(const std::string& body) {
  if (body.empty()) return invalid_argument("the request body is empty; send a JSON object");
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    // Find where it broke for the message: parse again with exceptions enabled.
    try {
      [[maybe_unused]] const json again = json::parse(body);
    } catch (const json::parse_error& e) {
      return invalid_argument(std::string("the request body is not valid JSON (") + e.what() + ")");
    }
    return invalid_argument("the request body is not valid JSON");
  }
  if (!j.is_object()) return invalid_argument("the request body must be a JSON object");
  return j;
}

namespace {
std::string quoted(std::string_view key) {
  return "'" + std::string(key) + "'";
}
}  // namespace

Result<std::optional<double>> get_number(const json& obj, std::string_view key, double lo,
                                         double hi) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::optional<double>{};
  if (!it->is_number()) return invalid_argument(quoted(key) + " must be a number");
  double v = it->get<double>();
  if (!std::isfinite(v) || v < lo || v > hi) {
    return invalid_argument(quoted(key) + " must be between " + json(lo).dump() + " and " +
                            json(hi).dump() + ", got " + it->dump());
  }
  return std::optional<double>{v};
}

Result<std::optional<int64_t>> get_int(const json& obj, std::string_view key, int64_t lo,
                                       int64_t hi) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::optional<int64_t>{};
  bool integral = it->is_number_integer() ||
                  (it->is_number_float() && std::floor(it->get<double>()) == it->get<double>() &&
                   std::fabs(it->get<double>()) < 9e15);
  if (!integral) return invalid_argument(quoted(key) + " must be an integer");
  int64_t v =
      it->is_number_unsigned()
          ? static_cast<int64_t>(std::min<uint64_t>(it->get<uint64_t>(), INT64_MAX))
          : (it->is_number_float() ? static_cast<int64_t>(it->get<double>()) : it->get<int64_t>());
  if (v < lo || v > hi) {
    return invalid_argument(quoted(key) + " must be between " + std::to_string(lo) + " and " +
                            std::to_string(hi) + ", got " + it->dump());
  }
  return std::optional<int64_t>{v};
}

Result<std::optional<bool>> get_bool(const json& obj, std::string_view key) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::optional<bool>{};
  if (!it->is_boolean()) return invalid_argument(quoted(key) + " must be true or false");
  return std::optional<bool>{it->get<bool>()};
}

Result<std::optional<std::string>> get_string(const json& obj, std::string_view key) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::optional<std::string>{};
  if (!it->is_string()) return invalid_argument(quoted(key) + " must be a string");
  return std::optional<std::string>{it->get<std::string>()};
}

Result<std::vector<std::string>> get_stop_list(const json& obj, std::string_view key) {
  std::vector<std::string> out;
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return out;
  if (it->is_string()) {
    if (!it->get_ref<const std::string&>().empty()) out.push_back(it->get<std::string>());
    return out;
  }
  if (!it->is_array())
    return invalid_argument(quoted(key) + " must be a string or an array of strings");
  if (it->size() > 16) return invalid_argument(quoted(key) + " may hold at most 16 strings");
  for (const auto& s : *it) {
    if (!s.is_string()) return invalid_argument(quoted(key) + " must contain only strings");
    if (s.get_ref<const std::string&>().empty()) {
      return invalid_argument(quoted(key) + " must not contain empty strings");
    }
    out.push_back(s.get<std::string>());
  }
  return out;
}

std::string make_id(std::string_view prefix) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id(prefix);
  for (int i = 0; i < 24; ++i) id.push_back(kHex[rng() & 15]);
  return id;
}

int64_t unix_time_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int http_status_for(const Status& s) {
  switch (s.code()) {
    case StatusCode::kOk:
      return 200;
    case StatusCode::kInvalidArgument:
    case StatusCode::kOutOfRange:
    case StatusCode::kResourceExhausted:  // e.g. prompt longer than the context: client must
                                          // shorten
      return 400;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kUnimplemented:
      return 501;
    case StatusCode::kFailedPrecondition:  // no model loaded, loading in progress
    case StatusCode::kUnavailable:
      return 503;
    case StatusCode::kCancelled:
      return 499;
    case StatusCode::kDeadlineExceeded:
      return 504;
    default:
      return 500;
  }
}

std::string sse_frame(const json& data, std::string_view event) {
  std::string out;
  if (!event.empty()) {
    out += "event: ";
    out += event;
    out += "\n";
  }
  out += "data: ";
  out += data.dump(-1, ' ', false, json::error_handler_t::replace);
  out += "\n\n";
  return out;
}

bool sink_write(httplib::DataSink& sink, const std::string& chunk) {
  if (sink.is_writable && !sink.is_writable()) return false;
  return sink.write(chunk.data(), chunk.size());
}

}  // namespace arc::server
