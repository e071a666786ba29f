#include "arc/bench/client.h"

#include <condition_variable>
#include <mutex>
#include <thread>

#include <httplib.h>

#include "arc/bench/sse.h"

namespace arc::bench {
namespace {

using json = nlohmann::json;

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// An error body of a few KB is enough to explain the failure; more is noise.
constexpr size_t kMaxErrorBody = 2048;

std::string error_body_message(const std::string& body) {
  // OpenAI-style {"error": {"message": ...}} or {"error": "..."}; otherwise the raw text.
  auto j = json::parse(body, nullptr, false);
  if (j.is_object() && j.contains("error")) {
    const auto& e = j["error"];
    if (e.is_object() && e.contains("message") && e["message"].is_string()) {
      return e["message"].get<std::string>();
    }
    if (e.is_string()) return e.get<std::string>();
  }
  if (j.is_object() && j.contains("message") && j["message"].is_string()) {
    return j["message"].get<std::string>();
  }
  std::string text = body.substr(0, 300);
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return text;
}

httplib::Headers auth_headers(const Endpoint& ep) {
  httplib::Headers h;
  if (!ep.api_key.empty()) h.emplace("Authorization", "Bearer " + ep.api_key);
  return h;
}

void set_timeouts(httplib::Client& cli, double timeout_s) {
  auto total = std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  cli.set_connection_timeout(std::min(total, std::chrono::milliseconds(10000)));
  cli.set_read_timeout(total);
  cli.set_write_timeout(total);
}

// The text of a streamed delta that counts as output: content, or reasoning under either of
// the names servers use (reasoning_content: DeepSeek/vLLM/Arclight; reasoning: others).
bool delta_has_text(const json& delta) {
  for (const char* key : {"content", "reasoning_content", "reasoning"}) {
    auto it = delta.find(key);
    if (it != delta.end() && it->is_string() && !it->get_ref<const std::string&>().empty()) {
      return true;
    }
  }
  return false;
}

// State of one streamed response while its chunks arrive.
struct StreamState {
  explicit StreamState(RequestTiming& timing) : t(timing) {}

  RequestTiming& t;
  Clock::time_point last_token;
  bool done = false;  // "[DONE]" seen
  std::string error;  // first protocol error

  // Handles one SSE event; false stops the transfer.
  bool on_event(const SseEvent& ev, Clock::time_point now) {
    if (ev.data == "[DONE]") {
      done = true;
      return true;
    }
    auto j = json::parse(ev.data, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      error =
          "malformed SSE event: the data is not a JSON object: '" + ev.data.substr(0, 120) + "'";
      return false;
    }
    if (j.contains("error")) {
      error = "the server reported an error mid-stream: " + error_body_message(ev.data);
      return false;
    }
    if (auto u = j.find("usage"); u != j.end() && u->is_object()) {
      if (auto p = u->find("prompt_tokens"); p != u->end() && p->is_number_integer()) {
        t.prompt_tokens = p->get<int64_t>();
      }
      if (auto c = u->find("completion_tokens"); c != u->end() && c->is_number_integer()) {
        t.output_tokens = c->get<int64_t>();
        t.usage_reported = true;
      }
      if (auto d = u->find("completion_tokens_details"); d != u->end() && d->is_object()) {
        t.accepted_prediction_tokens = d->value("accepted_prediction_tokens", int64_t{0});
        t.rejected_prediction_tokens = d->value("rejected_prediction_tokens", int64_t{0});
      }
    }
    if (auto tm = j.find("timings"); tm != j.end() && tm->is_object()) {
      if (auto h = tm->find("host_us_per_token"); h != tm->end() && h->is_number()) {
        t.host_us_per_token = h->get<double>();
      }
    }
    auto choices = j.find("choices");
    if (choices == j.end() || !choices->is_array()) return true;
    for (const auto& choice : *choices) {
      if (!choice.is_object()) continue;
      if (auto fr = choice.find("finish_reason"); fr != choice.end() && fr->is_string()) {
        t.finish_reason = fr->get<std::string>();
      }
      auto delta = choice.find("delta");
      if (delta == choice.end() || !delta->is_object() || !delta_has_text(*delta)) continue;
      if (t.token_chunks == 0) {
        t.ttft_ms = ms_between(t.sent, now);
      } else {
        t.itl_ms.push_back(ms_between(last_token, now));
      }
      last_token = now;
      ++t.token_chunks;
    }
    return true;
  }
};

// Aborts a client's socket when the deadline passes or cancel is set, so no request outlives
// the timeout even when the server trickles bytes or goes silent mid-stream.
class Watchdog {
 public:
  Watchdog(httplib::Client& cli, Clock::time_point deadline, const std::atomic<bool>* cancel)
      : thread_([this, &cli, deadline, cancel] {
          std::unique_lock lock(mu_);
          while (!stop_) {
            auto next = std::min(deadline, Clock::now() + std::chrono::milliseconds(50));
            cv_.wait_until(lock, next);
            if (stop_) return;
            bool cancelled = cancel != nullptr && cancel->load();
            if (Clock::now() >= deadline || cancelled) {
              fired_ = cancelled ? Fired::kCancel : Fired::kDeadline;
              cli.stop();
              return;
            }
          }
        }) {}
  ~Watchdog() { finish(); }

  enum class Fired { kNo, kDeadline, kCancel };
  // Stops the watchdog; what it did, if anything.
  Fired finish() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
    return fired_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  Fired fired_ = Fired::kNo;
  std::thread thread_;
};

}  // namespace

Result<ParsedUrl> parse_base_url(const std::string& url) {
  auto scheme_end = url.find("://");
  if (scheme_end == std::string::npos) {
    return invalid_argument("'" + url + "' is not a URL; give one like http://127.0.0.1:8080");
  }
  std::string scheme = url.substr(0, scheme_end);
  if (scheme != "http" && scheme != "https") {
    return invalid_argument("'" + url + "': only http:// and https:// URLs are supported");
  }
  auto host_begin = scheme_end + 3;
  auto path_begin = url.find('/', host_begin);
  ParsedUrl p;
  p.scheme_host_port = url.substr(0, path_begin);
  if (host_begin >= p.scheme_host_port.size()) {
    return invalid_argument("'" + url + "' has no host name");
  }
  if (path_begin != std::string::npos) p.path_prefix = url.substr(path_begin);
  while (!p.path_prefix.empty() && p.path_prefix.back() == '/') p.path_prefix.pop_back();
  if (p.path_prefix.size() >= 3 && p.path_prefix.compare(p.path_prefix.size() - 3, 3, "/v1") == 0) {
    p.path_prefix.resize(p.path_prefix.size() - 3);
  }
  return p;
}

std::optional<double> RequestTiming::tpot_ms() const {
  if (!ok || ttft_ms < 0 || output_tokens < 2) return std::nullopt;
  return (e2e_ms - ttft_ms) / static_cast<double>(output_tokens - 1);
}

json make_chat_body(const ChatParams& params) {
  json body = {{"messages", params.messages},
               {"max_tokens", params.max_tokens},
               {"temperature", params.temperature},
               {"stream", true},
               {"stream_options", {{"include_usage", true}}}};
  if (!params.model.empty()) body["model"] = params.model;
  if (params.ignore_eos) body["ignore_eos"] = true;
  return body;
}

RequestTiming stream_chat(const Endpoint& endpoint, const json& body,
                          const std::atomic<bool>* cancel) {
  RequestTiming t;
  t.sent = t.finished = Clock::now();
  auto url = parse_base_url(endpoint.url);
  if (!url.ok()) {
    t.error = url.status().message();
    return t;
  }
  httplib::Client cli(url->scheme_host_port);
  if (!cli.is_valid()) {
    t.error = "cannot make an HTTP client for '" + endpoint.url + "'";
    return t;
  }
  set_timeouts(cli, endpoint.timeout_s);
  cli.set_keep_alive(false);

  httplib::Request req;
  req.method = "POST";
  req.path = url->path_prefix + "/v1/chat/completions";
  req.headers = auth_headers(endpoint);
  req.headers.emplace("Accept", "text/event-stream");
  req.headers.emplace("Content-Type", "application/json");
  req.body = body.dump(-1, ' ', false, json::error_handler_t::replace);

  int status = 0;
  std::string content_type;
  std::string error_body;
  SseParser parser;
  StreamState state(t);
  std::vector<SseEvent> events;
  req.response_handler = [&](const httplib::Response& res) {
    status = res.status;
    content_type = res.get_header_value("Content-Type");
    return true;
  };
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    auto now = Clock::now();
    if (status != 200) {
      if (error_body.size() < kMaxErrorBody) {
        error_body.append(data, std::min(n, kMaxErrorBody - error_body.size()));
      }
      return true;
    }
    events.clear();
    if (Status s = parser.feed(std::string_view(data, n), events); !s.ok()) {
      state.error = s.message();
      return false;
    }
    for (const auto& ev : events) {
      if (!state.on_event(ev, now)) return false;
    }
    return true;
  };

  httplib::Response res;
  httplib::Error err = httplib::Error::Success;
  auto deadline =
      Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(endpoint.timeout_s * 1000));
  t.sent = Clock::now();
  Watchdog::Fired fired;
  bool sent_ok;
  {
    Watchdog watchdog(cli, deadline, cancel);
    sent_ok = cli.send(req, res, err);
    fired = watchdog.finish();
  }
  t.finished = Clock::now();
  t.e2e_ms = ms_between(t.sent, t.finished);

  auto where = endpoint.url;
  if (fired == Watchdog::Fired::kCancel) {
    t.error = "cancelled";
  } else if (fired == Watchdog::Fired::kDeadline ||
             (err == httplib::Error::Read && t.e2e_ms >= endpoint.timeout_s * 1000 * 0.95)) {
    t.error = "timed out after " + std::to_string(static_cast<int64_t>(endpoint.timeout_s)) +
              " s (--timeout-s) waiting for " + where;
  } else if (!state.error.empty()) {
    t.error = state.error;
  } else if (!sent_ok || err != httplib::Error::Success) {
    if (err == httplib::Error::Connection || err == httplib::Error::ConnectionTimeout) {
      t.error = "could not connect to " + where + " (" + httplib::to_string(err) +
                "); is the server running and the URL right?";
    } else {
      t.error = "HTTP request to " + where + " failed: " + httplib::to_string(err);
    }
  } else if (status != 200) {
    t.error = "HTTP " + std::to_string(status) + ": " + error_body_message(error_body);
  } else if (content_type.find("text/event-stream") == std::string::npos && t.token_chunks == 0 &&
             !state.done) {
    t.error = "the server answered with '" + content_type +
              "' instead of an event stream; it does not support \"stream\": true";
  } else if (!state.done && t.finish_reason.empty()) {
    t.error = "the stream ended before [DONE] or a finish_reason (the server stopped mid-answer)";
  } else if (t.token_chunks == 0) {
    t.error = "the stream carried no tokens (finish_reason '" + t.finish_reason + "')";
  } else {
    t.ok = true;
    if (!t.usage_reported) t.output_tokens = t.token_chunks;
  }
  return t;
}

Result<ServerInfo> fetch_server_info(const Endpoint& endpoint, const std::string& model) {
  ARC_ASSIGN_OR_RETURN(auto url, parse_base_url(endpoint.url));
  httplib::Client cli(url.scheme_host_port);
  set_timeouts(cli, std::min(endpoint.timeout_s, 30.0));
  auto res = cli.Get(url.path_prefix + "/v1/models", auth_headers(endpoint));
  if (!res) {
    return unavailable("GET " + endpoint.url + "/v1/models failed (" +
                       httplib::to_string(res.error()) +
                       "); is the server running and the URL right?");
  }
  if (res->status != 200) {
    return unavailable("GET /v1/models answered HTTP " + std::to_string(res->status) + ": " +
                       error_body_message(res->body));
  }
  auto j = json::parse(res->body, nullptr, false);
  if (!j.is_object() || !j.contains("data") || !j["data"].is_array()) {
    return data_loss("GET /v1/models did not answer an OpenAI model list ({\"data\": [...]})");
  }
  ServerInfo info;
  for (const auto& m : j["data"]) {
    if (!m.is_object() || !m.contains("id") || !m["id"].is_string()) continue;
    auto id = m["id"].get<std::string>();
    info.model_ids.push_back(id);
    if (info.context_length > 0 || (!model.empty() && id != model)) continue;
    auto pick = [&](const json& obj, const char* key) {
      if (info.context_length == 0 && obj.is_object() && obj.contains(key) &&
          obj[key].is_number_integer() && obj[key].get<int64_t>() > 0) {
        info.context_length = obj[key].get<int64_t>();
      }
    };
    const json& meta = m.contains("meta") ? m["meta"] : json();
    pick(meta, "context_length");
    pick(m, "max_model_len");
    pick(meta, "n_ctx");
    pick(meta, "n_ctx_train");
  }
  return info;
}

}  // namespace arc::bench
