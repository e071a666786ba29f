#include "arc/server.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <list>
#include <mutex>

#include <httplib.h>

#include "anthropic_api.h"
#include "api_common.h"
#include "arc/log.h"
#include "auth.h"
#include "http_gate.h"
#include "openai_api.h"

namespace arc {

namespace {

bool is_loopback(const std::string& host) {
  if (host == "localhost") return true;
  in_addr a4{};
  if (inet_pton(AF_INET, host.c_str(), &a4) == 1) return (ntohl(a4.s_addr) >> 24) == 127;
  in6_addr a6{};
  if (inet_pton(AF_INET6, host.c_str(), &a6) == 1) return IN6_IS_ADDR_LOOPBACK(&a6);
  return false;
}

bool is_anthropic_route(const std::string& path) {
  return path.rfind("/v1/messages", 0) == 0;
}

// httplib's router, fed complete requests by the gate (HttpGate) instead of its own socket loop.
class Router : public httplib::Server {
 public:
  using httplib::Server::process_request;
  // httplib ends streaming answers when its own listening socket is gone; with the gate in front
  // that socket is never opened, so mark the server as serving (or stopping) by hand.
  void set_serving(bool serving) { svr_sock_ = serving ? 0 : INVALID_SOCKET; }
};

}  // namespace

Status check_bind_safety(const ServerOptions& o) {
  if (o.port < 0 || o.port > 65535) {
    return invalid_argument("port " + std::to_string(o.port) + " is out of range 0..65535");
  }
  if (!is_loopback(o.host) && o.api_key.empty() && !o.insecure) {
    return failed_precondition(
        "refusing to listen on " + o.host +
        " without an API key: anyone on the network could use the model. Set --api-key KEY, "
        "bind to 127.0.0.1, or pass --insecure if the network is trusted");
  }
  return ok_status();
}

struct Server::Impl {
  ServerOptions options;
  InferenceService& service;
  Router http;
  std::unique_ptr<server::HttpGate> gate;
  int bound_port = 0;

  // Event stream subscribers: each /engine/events connection has its own bounded queue.
  struct Subscriber {
    std::deque<std::string> frames;
  };
  std::mutex mu;
  std::condition_variable cv;
  std::list<std::shared_ptr<Subscriber>> subscribers;
  bool stopping = false;
  bool stopped = false;

  Impl(ServerOptions o, InferenceService& s) : options(std::move(o)), service(s) {}

  void publish(const EngineEvent& ev) {
    std::string frame = server::sse_frame(ev.data, ev.type);
    std::lock_guard<std::mutex> lock(mu);
    for (auto& sub : subscribers) {
      // A client that stopped reading loses its oldest events, never the server's memory.
      if (sub->frames.size() >= 1024) sub->frames.pop_front();
      sub->frames.push_back(frame);
    }
    cv.notify_all();
  }

  bool authorized(const httplib::Request& req) const {
    if (options.api_key.empty()) return true;
    return server::request_has_api_key(req.get_header_value("Authorization"),
                                       req.get_header_value("x-api-key"), options.api_key);
  }

  void send_error(const httplib::Request& req, httplib::Response& res, const Status& s, int http) {
    if (is_anthropic_route(req.path)) {
      server::send_anthropic_error(res, s, http);
    } else {
      server::send_openai_error(res, s, http);
    }
  }

  void install_routes();
  void handle_events(const httplib::Request& req, httplib::Response& res);
};

void Server::Impl::handle_events(const httplib::Request&, httplib::Response& res) {
  auto sub = std::make_shared<Subscriber>();
  {
    std::lock_guard<std::mutex> lock(mu);
    subscribers.push_back(sub);
  }
  // The first frame tells a new client where things stand.
  sub->frames.push_back(server::sse_frame(service.status(), "state"));
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider(
      "text/event-stream",
      [this, sub](size_t, httplib::DataSink& sink) {
        auto keepalive = std::chrono::seconds(std::max(1, options.event_keepalive_s));
        for (;;) {
          std::deque<std::string> batch;
          {
            std::unique_lock<std::mutex> lock(mu);
            cv.wait_for(lock, keepalive, [&] { return stopping || !sub->frames.empty(); });
            if (stopping) break;
            batch.swap(sub->frames);
          }
          if (batch.empty()) batch.push_back(": keepalive\n\n");
          bool ok = true;
          for (const auto& f : batch) {
            if (!server::sink_write(sink, f)) {
              ok = false;
              break;
            }
          }
          if (!ok) break;
        }
        sink.done();
        return true;
      },
      [this, sub](bool) {
        std::lock_guard<std::mutex> lock(mu);
        subscribers.remove(sub);
      });
}

void Server::Impl::install_routes() {
  using httplib::Request;
  using httplib::Response;
  using nlohmann::json;

  http.set_payload_max_length(options.max_body_bytes);
  // Advertised in Keep-Alive headers; the gate enforces the idle timeout.
  http.set_keep_alive_timeout(std::max(1, options.read_timeout_s));
  http.set_keep_alive_max_count(1000);
  http.set_post_routing_handler([](const Request& req, Response& res) {
    // The gate closes the connection after a 400: say so.
    if (res.status == 400) res.set_header("Connection", "close");
    // The gate let this request's Origin through: it is one the user allowed.
    if (!req.has_header("Origin")) return;
    res.set_header("Access-Control-Allow-Origin", req.get_header_value("Origin"));
    res.set_header("Vary", "Origin");
  });

  http.set_pre_routing_handler([this](const Request& req, Response& res) {
    if (req.path == "/health" || authorized(req))
      return httplib::Server::HandlerResponse::Unhandled;
    send_error(
        req, res,
        Status(StatusCode::kInvalidArgument,
               "missing or wrong API key: send 'Authorization: Bearer KEY' or 'x-api-key: KEY'"),
        401);
    return httplib::Server::HandlerResponse::Handled;
  });
  http.set_error_handler([this](const Request& req, Response& res) {
    if (!res.body.empty()) return;
    if (res.status == 404) {
      send_error(req, res, not_found("no route " + req.method + " " + req.path), 404);
    } else if (res.status == 413) {
      send_error(req, res,
                 invalid_argument("request body larger than " +
                                  std::to_string(options.max_body_bytes >> 20) +
                                  " MiB; images count toward it (base64 adds a third): send "
                                  "smaller or fewer images, or raise serve --max-body-bytes"),
                 413);
    } else if (res.status == 400) {
      send_error(req, res, invalid_argument("malformed HTTP request"), 400);
    }
  });
  http.set_exception_handler([this](const Request& req, Response& res, std::exception_ptr ep) {
    std::string what = "unexpected error";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    logger("server")->error("{} {}: {}", req.method, req.path, what);
    send_error(req, res, internal_error("internal error while handling the request: " + what), 500);
  });

  http.Get("/health", [this](const Request&, Response& res) {
    auto m = service.model();
    json body = {{"status", std::string(engine_state_name(service.state()))},
                 {"model", m ? json(m->id) : json(nullptr)}};
    res.set_content(body.dump(), "application/json");
  });
  http.Get("/v1/models",
           [this](const Request& q, Response& r) { server::handle_models(service, q, r); });
  http.Post("/v1/chat/completions", [this](const Request& q, Response& r) {
    server::handle_chat_completions(service, q, r);
  });
  http.Post("/v1/completions",
            [this](const Request& q, Response& r) { server::handle_completions(service, q, r); });
  http.Post("/v1/messages",
            [this](const Request& q, Response& r) { server::handle_messages(service, q, r); });
  http.Post("/v1/messages/count_tokens",
            [this](const Request& q, Response& r) { server::handle_count_tokens(service, q, r); });
  http.Get("/metrics", [this](const Request&, Response& res) {
    res.set_content(service.metrics_text(), "text/plain; version=0.0.4; charset=utf-8");
  });
  http.Get("/engine/status", [this](const Request&, Response& res) {
    res.set_content(service.status().dump(-1, ' ', false, json::error_handler_t::replace),
                    "application/json");
  });
  http.Get("/engine/events", [this](const Request& q, Response& r) { handle_events(q, r); });
  http.Get("/engine/local-models", [this](const Request&, Response& res) {
    res.set_content(service.local_models().dump(-1, ' ', false, json::error_handler_t::replace),
                    "application/json");
  });
  http.Post("/engine/load", [this](const Request& req, Response& res) {
    auto body = server::parse_body(req.body);
    if (!body.ok()) return server::send_openai_error(res, body.status());
    Status s = service.load(*body);
    if (!s.ok()) return server::send_openai_error(res, s);
    res.status = 202;
    res.set_content(json({{"status", "loading"}}).dump(), "application/json");
  });
  http.Get("/engine/log", [](const Request& req, Response& res) {
    // ?lines=N (1..kRecentLogLines, default 500): the engine's recent log, oldest first.
    size_t n = 500;
    if (req.has_param("lines")) {
      const std::string v = req.get_param_value("lines");
      char* end = nullptr;
      const unsigned long long parsed = std::strtoull(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || parsed < 1 || parsed > kRecentLogLines) {
        return server::send_openai_error(res,
                                         invalid_argument("'lines' must be an integer from 1 to " +
                                                          std::to_string(kRecentLogLines)));
      }
      n = static_cast<size_t>(parsed);
    }
    res.set_content(
        json({{"lines", recent_log_lines(n)}}).dump(-1, ' ', false, json::error_handler_t::replace),
        "application/json");
  });
  http.Post("/engine/load/cancel", [this](const Request&, Response& res) {
    Status s = service.cancel_load();
    if (!s.ok()) return server::send_openai_error(res, s);
    res.status = 202;
    res.set_content(json({{"status", "cancelling"}}).dump(), "application/json");
  });
  http.Post("/engine/unload", [this](const Request&, Response& res) {
    Status s = service.unload();
    if (!s.ok()) return server::send_openai_error(res, s);
    res.set_content(json({{"status", "idle"}}).dump(), "application/json");
  });
  http.Get("/engine/cluster", [this](const Request&, Response& res) {
    auto c = service.cluster();
    if (!c.ok()) return server::send_openai_error(res, c.status());
    res.set_content(c->dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
  });
  http.Post("/engine/link-test", [this](const Request& req, Response& res) {
    json body = json::object();  // an empty body runs the default sizes
    if (!req.body.empty()) {
      auto parsed = server::parse_body(req.body);
      if (!parsed.ok()) return server::send_openai_error(res, parsed.status());
      body = std::move(*parsed);
    }
    auto r = service.link_test(body);
    // One rank, or the ranks busy loading: a conflict with the engine's state, not an outage.
    if (!r.ok()) {
      const bool conflict = r.status().code() == StatusCode::kFailedPrecondition;
      return server::send_openai_error(res, r.status(), conflict ? 409 : 0);
    }
    res.set_content(r->dump(), "application/json");
  });
  http.Post("/engine/fit", [this](const Request& req, Response& res) {
    auto body = server::parse_body(req.body);
    if (!body.ok()) return server::send_openai_error(res, body.status());
    auto report = service.fit(*body);
    if (!report.ok()) return server::send_openai_error(res, report.status());
    res.set_content(report->dump(), "application/json");
  });
}

Server::Server(ServerOptions options, InferenceService& service)
    : impl_(std::make_unique<Impl>(std::move(options), service)) {}

Server::~Server() {
  stop();
}

Status Server::start() {
  ARC_RETURN_IF_ERROR(check_bind_safety(impl_->options));
  impl_->install_routes();
  impl_->service.set_event_sink([impl = impl_.get()](const EngineEvent& ev) { impl->publish(ev); });
  const auto& o = impl_->options;
  server::GateOptions g;
  g.limits.max_head_bytes = o.max_header_bytes;
  g.limits.max_headers = o.max_headers;
  g.limits.max_body_bytes = o.max_body_bytes;
  g.policy.allow_origins = o.allow_origins;
  g.policy.allow_hosts = o.allow_hosts;
  g.policy.bound_host = o.host;
  g.policy.check_host = o.api_key.empty();
  g.header_timeout_s = o.header_timeout_s;
  g.body_timeout_s = g.idle_timeout_s = g.write_timeout_s = std::max(1, o.read_timeout_s);
  g.max_per_client = o.max_connections_per_client;
  g.max_open = o.max_open_connections;
  g.max_buffered_bytes = std::max<size_t>(size_t{1} << 30, 4 * o.max_body_bytes);
  // Streaming answers hold a worker each: size the pool for many concurrent clients.
  g.workers = std::max(8, o.max_connections);
  Impl* impl = impl_.get();
  impl->gate = std::make_unique<server::HttpGate>(
      g, [impl](httplib::Stream& strm, bool close_connection, bool* connection_closed) {
        bool closed = false;
        bool ok = impl->http.process_request(strm, close_connection, closed, nullptr);
        *connection_closed = closed;
        return ok;
      });
  auto port = impl->gate->bind(o.host, o.port);
  if (!port.ok()) return port.status();
  impl->bound_port = *port;
  impl->http.set_serving(true);
  impl->gate->start();
  logger("server")->info("listening on http://{}:{}", o.host, impl_->bound_port);
  return ok_status();
}

int Server::port() const {
  return impl_->bound_port;
}

void Server::stop() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    if (impl_->stopped) return;
    impl_->stopping = true;
    impl_->stopped = true;
  }
  impl_->cv.notify_all();
  impl_->service.set_event_sink(nullptr);
  impl_->http.set_serving(false);
  if (impl_->gate) impl_->gate->stop();
}

void Server::wait() {
  std::unique_lock<std::mutex> lock(impl_->mu);
  impl_->cv.wait(lock, [&] { return impl_->stopped; });
}

std::string_view engine_state_name(EngineState s) {
  switch (s) {
    case EngineState::kIdle:
      return "idle";
    case EngineState::kLoading:
      return "loading";
    case EngineState::kReady:
      return "ready";
    case EngineState::kError:
      return "error";
  }
  return "error";
}

}  // namespace arc
