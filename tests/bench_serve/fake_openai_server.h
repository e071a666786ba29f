// An in-process OpenAI-compatible server with known timing, for bench-serve's tests: it waits
// first_delay_ms, then streams n_tokens content chunks gap_ms apart, then a usage chunk and
// [DONE]. Modes make it fail the ways real servers fail.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

namespace arc::testing {

class FakeOpenAiServer {
 public:
  enum class Mode { kOk, kHttp500, kMalformed, kSlow, kCutOff };

  // Set before start(); read by handler threads afterwards.
  Mode mode = Mode::kOk;
  int first_delay_ms = 200;
  int gap_ms = 20;
  int n_tokens = 10;
  bool send_usage = true;
  int64_t context_length = 4096;

  std::atomic<int> active{0};
  std::atomic<int> max_active{0};
  std::atomic<int> requests{0};

  ~FakeOpenAiServer() { stop(); }

  int start() {
    // More handler threads than the widest wave of the tests.
    server_.new_task_queue = [] { return new httplib::ThreadPool(16); };
    server_.Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
      nlohmann::json j = {{"object", "list"},
                          {"data",
                           {{{"id", "fake-model"},
                             {"object", "model"},
                             {"meta", {{"context_length", context_length}}}}}}};
      res.set_content(j.dump(), "application/json");
    });
    server_.Post("/v1/chat/completions",
                 [this](const httplib::Request& req, httplib::Response& res) { chat(req, res); });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return port_;
  }

  void stop() {
    if (thread_.joinable()) {
      server_.stop();
      thread_.join();
    }
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  std::vector<nlohmann::json> bodies() const {
    std::lock_guard lock(mu_);
    return bodies_;
  }

  // What the fake reports as prompt tokens: one per 4 characters of message content.
  static int64_t prompt_tokens_of(const nlohmann::json& body) {
    size_t chars = 0;
    for (const auto& m : body["messages"]) chars += m["content"].get<std::string>().size();
    return static_cast<int64_t>(chars / 4);
  }

 private:
  static std::string frame(const nlohmann::json& j) { return "data: " + j.dump() + "\n\n"; }

  void chat(const httplib::Request& req, httplib::Response& res) {
    ++requests;
    auto body = nlohmann::json::parse(req.body, nullptr, false);
    {
      std::lock_guard lock(mu_);
      bodies_.push_back(body);
    }
    if (mode == Mode::kHttp500) {
      res.status = 500;
      res.set_content(R"({"error":{"message":"boom: the fake failed","type":"server_error"}})",
                      "application/json");
      return;
    }
    int64_t prompt_tokens = body.is_object() ? prompt_tokens_of(body) : 0;
    res.set_chunked_content_provider(
        "text/event-stream", [this, prompt_tokens](size_t, httplib::DataSink& sink) {
          int now_active = ++active;
          int seen = max_active.load();
          while (now_active > seen && !max_active.compare_exchange_weak(seen, now_active)) {
          }
          stream(sink, prompt_tokens);
          --active;
          return true;
        });
  }

  // Sleeps in small steps so a client that went away releases the thread quickly.
  static bool sleep_ms(httplib::DataSink& sink, int ms) {
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (std::chrono::steady_clock::now() < until) {
      if (!sink.is_writable()) return false;
      auto left = until - std::chrono::steady_clock::now();
      std::this_thread::sleep_for(
          std::min<std::chrono::steady_clock::duration>(left, std::chrono::milliseconds(10)));
    }
    return true;
  }

  void stream(httplib::DataSink& sink, int64_t prompt_tokens) {
    auto write = [&](const std::string& s) { return sink.write(s.data(), s.size()); };
    if (mode == Mode::kSlow) {
      // Keep-alive comments but no token for 3 s.
      for (int i = 0; i < 30; ++i) {
        if (!write(": keep-alive\n\n") || !sleep_ms(sink, 100)) return;
      }
    }
    if (!sleep_ms(sink, first_delay_ms)) return;
    nlohmann::json role = {{"choices", {{{"index", 0}, {"delta", {{"role", "assistant"}}}}}}};
    if (!write(frame(role))) return;
    for (int i = 0; i < n_tokens; ++i) {
      if (i > 0 && !sleep_ms(sink, gap_ms)) return;
      if (mode == Mode::kMalformed && i == 2) {
        write("data: {\"choices\": [ this is not json\n\n");
        sink.done();
        return;
      }
      nlohmann::json chunk = {
          {"choices", {{{"index", 0}, {"delta", {{"content", " tok" + std::to_string(i)}}}}}}};
      if (!write(frame(chunk))) return;
    }
    if (mode == Mode::kCutOff) {
      sink.done();  // no finish_reason, no [DONE]
      return;
    }
    nlohmann::json fin = {
        {"choices",
         {{{"index", 0}, {"delta", nlohmann::json::object()}, {"finish_reason", "length"}}}}};
    write(frame(fin));
    if (send_usage) {
      nlohmann::json usage = {{"choices", nlohmann::json::array()},
                              {"usage",
                               {{"prompt_tokens", prompt_tokens},
                                {"completion_tokens", n_tokens},
                                {"total_tokens", prompt_tokens + n_tokens}}}};
      write(frame(usage));
    }
    write("data: [DONE]\n\n");
    sink.done();
  }

  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  mutable std::mutex mu_;
  std::vector<nlohmann::json> bodies_;
};

}  // namespace arc::testing
