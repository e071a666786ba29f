#include "api_common.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

namespace arc::server {

namespace {

// The byte offset of the first invalid UTF-8 sequence in `s`, or npos.
size_t invalid_utf8_at(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t n = 0;
    uint32_t cp = 0;
    if ((c & 0xE0) == 0xC0) {
      n = 1;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      n = 2;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      n = 3;
      cp = c & 0x07;
    } else {
      return i;
    }
    if (i + n >= s.size()) return i;  // truncated sequence
    for (size_t k = 1; k <= n; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (cc & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF.
    if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
        cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return i;
    }
    i += n + 1;
  }
  return std::string_view::npos;
}

// Deepest nesting of arrays and objects outside strings; stops counting past `limit`.
int nesting_depth(std::string_view s, int limit) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > limit) return deepest;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

// 'key', or 'where.key' for a field inside the request ("'stream_options.include_usage'").
std::string quoted(std::string_view key, std::string_view where = {}) {
  if (where.empty()) return "'" + std::string(key) + "'";
  return "'" + std::string(where) + "." + std::string(key) + "'";
}

}  // namespace

std::string truncate_for_message(std::string_view text, size_t max_chars) {
  if (text.size() <= max_chars) return std::string(text);
  size_t cut = max_chars;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return std::string(text.substr(0, cut)) + "... (" + std::to_string(text.size()) + " bytes)";
}

Result<json> parse_body(const std::string& body) {
  if (body.empty()) return invalid_argument("the request body is empty; send a JSON object");
  if (size_t bad = invalid_utf8_at(body); bad != std::string_view::npos) {
    return invalid_argument("the request body is not valid UTF-8 (at byte " + std::to_string(bad) +
                            "); send JSON text encoded as UTF-8");
  }
  // Before parsing: the parser itself is iterative, but copies, dumps and template values of
  // the result recurse once per level.
  if (nesting_depth(body, kMaxJsonDepth) > kMaxJsonDepth) {
    return invalid_argument("the request body nests arrays and objects deeper than " +
                            std::to_string(kMaxJsonDepth) + " levels; flatten it");
  }
  bool out_of_range = false;
  json::parser_callback_t check_numbers = [&](int, json::parse_event_t event, json& value) {
    if (event == json::parse_event_t::value && value.is_number_float() &&
        !std::isfinite(value.get<double>())) {
      out_of_range = true;
    }
    return true;
  };
  json j = json::parse(body, check_numbers, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    // Find where it broke for the message: parse again with exceptions enabled. The message
    // quotes the bytes read last, which are valid UTF-8 (checked above).
    try {
      [[maybe_unused]] const json again = json::parse(body);
    } catch (const json::exception& e) {
      return invalid_argument("the request body is not valid JSON (" +
                              truncate_for_message(e.what(), 200) + ")");
    }
    return invalid_argument("the request body is not valid JSON");
  }
  if (out_of_range) {
    return invalid_argument(
        "the request body holds a number too large for a double (such as 1e400); send finite "
        "numbers");
  }
  if (!j.is_object()) return invalid_argument("the request body must be a JSON object");
  return j;
}

Result<std::optional<double>> get_number(const json& obj, std::string_view key, double lo,
                                         double hi, std::string_view where) {
  if (!obj.is_object()) return std::optional<double>{};
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::optional<double>{};
  if (!it->is_number()) return invalid_argument(quoted(key, where) + " must be a number");
  double v = it->get<double>();
  if (!std::isfinite(v) || v < lo || v > hi) {
    return invalid_argument(quoted(key, where) + " must be between " + json(lo).dump() + " and " +
                            json(hi).dump() + ", got " + it->dump());
  }
  return std::optional<double>{v};
}

Result<std::optional<int64_t>> get_int(const json& obj, std::string_view key, int64_t lo,
                                       int64_t hi, std::string_view where) {
  if (!obj.is_object()) return std::optional<int64_t>{};
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::optional<int64_t>{};
  bool integral = it->is_number_integer() ||
                  (it->is_number_float() && std::floor(it->get<double>()) == it->get<double>() &&
                   std::fabs(it->get<double>()) < 9e15);
  if (!integral) return invalid_argument(quoted(key, where) + " must be an integer");
  int64_t v =
      it->is_number_unsigned()
          ? static_cast<int64_t>(std::min<uint64_t>(it->get<uint64_t>(), INT64_MAX))
          : (it->is_number_float() ? static_cast<int64_t>(it->get<double>()) : it->get<int64_t>());
  if (v < lo || v > hi) {
    return invalid_argument(quoted(key, where) + " must be between " + std::to_string(lo) +
                            " and " + std::to_string(hi) + ", got " + it->dump());
  }
  return std::optional<int64_t>{v};
}

Result<std::optional<bool>> get_bool(const json& obj, std::string_view key,
                                     std::string_view where) {
  if (!obj.is_object()) return std::optional<bool>{};
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::optional<bool>{};
  if (!it->is_boolean()) return invalid_argument(quoted(key, where) + " must be true or false");
  return std::optional<bool>{it->get<bool>()};
}

Result<std::optional<std::string>> get_string(const json& obj, std::string_view key,
                                              std::string_view where) {
  if (!obj.is_object()) return std::optional<std::string>{};
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::optional<std::string>{};
  if (!it->is_string()) return invalid_argument(quoted(key, where) + " must be a string");
  return std::optional<std::string>{it->get<std::string>()};
}

Result<std::optional<std::string>> get_reasoning_effort(const json& obj, std::string_view key,
                                                        std::string_view where) {
  ARC_ASSIGN_OR_RETURN(auto effort, get_string(obj, key, where));
  if (!effort) return effort;
  if (*effort == "minimal") return std::optional<std::string>{"low"};
  if (*effort != "low" && *effort != "medium" && *effort != "high") {
    return invalid_argument(quoted(key, where) + " must be 'low', 'medium' or 'high'");
  }
  return effort;
}

Result<const json*> get_object(const json& obj, std::string_view key, std::string_view where) {
  if (!obj.is_object()) return static_cast<const json*>(nullptr);
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return static_cast<const json*>(nullptr);
  if (!it->is_object()) return invalid_argument(quoted(key, where) + " must be an object");
  return &*it;
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
