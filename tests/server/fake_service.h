// A scripted InferenceService for the HTTP tests: it "generates" a fixed script of events, so
// the tests check only what the server does with them (dialects, streaming, errors, auth).
#pragma once

#include <atomic>
#include <mutex>
#include <thread>

#include "arc/metrics.h"
#include "arc/service.h"

namespace arc::testing {

class FakeService : public InferenceService {
 public:
  struct Prepared : PreparedRequest {
    ChatRequest chat;
    bool is_chat = true;
  };

  // What run() emits, in order, before the finish event.
  std::vector<GenerationEvent> script;
  GenerationEvent finish;
  int64_t context_length = 64;
  bool vision = false;  // what model() reports
  std::atomic<int> cancelled{0};
  std::atomic<int> runs{0};
  int delay_ms = 0;
  EngineState current_state = EngineState::kReady;
  mutable std::mutex mu;
  ChatRequest last_chat;
  EngineEventSink events;
  MetricsRegistry metrics;

  FakeService() {
    finish.kind = GenerationEvent::Kind::kFinish;
    finish.finish_reason = "stop";
    finish.usage = {5, 3, 2};
    metrics.add_counter("arclight_requests_total", "Requests finished");
  }

  EngineState state() const override { return current_state; }
  std::optional<ModelInfo> model() const override {
    if (current_state != EngineState::kReady) return std::nullopt;
    ModelInfo m;
    m.id = "fake-moe";
    m.path = "/models/fake.gguf";
    m.architecture = "qwen3moe";
    m.context_length = context_length;
    m.tools = true;
    m.vision = vision;
    return m;
  }

  Result<std::shared_ptr<PreparedRequest>> prepare_chat(const ChatRequest& r) override {
    if (current_state != EngineState::kReady) return failed_precondition("no model is loaded");
    auto n = count_chat_tokens(r);
    if (*n > context_length) {
      return resource_exhausted("the prompt has " + std::to_string(*n) +
                                " tokens but the context holds " + std::to_string(context_length));
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      last_chat = r;
    }
    auto p = std::make_shared<Prepared>();
    p->chat = r;
    p->prompt_tokens = *n;
    return std::shared_ptr<PreparedRequest>(p);
  }
  Result<std::shared_ptr<PreparedRequest>> prepare_completion(const CompletionRequest& r) override {
    if (current_state != EngineState::kReady) return failed_precondition("no model is loaded");
    auto p = std::make_shared<Prepared>();
    p->is_chat = false;
    p->prompt_text = r.prompt;
    p->prompt_tokens = static_cast<int64_t>(r.prompt.size());
    for (char c : r.prompt) p->prompt_logprobs.push_back({std::string(1, c), {}, -0.5f, {}});
    return std::shared_ptr<PreparedRequest>(p);
  }
  Status run(const std::shared_ptr<PreparedRequest>&, const EventSink& sink) override {
    runs++;
    for (const auto& ev : script) {
      if (delay_ms) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
      if (!sink(ev)) {
        cancelled++;
        return ok_status();
      }
    }
    sink(finish);
    metrics.inc("arclight_requests_total");
    return ok_status();
  }
  Result<int64_t> count_chat_tokens(const ChatRequest& r) override {
    // One "token" per character of every text content.
    int64_t n = 0;
    for (const auto& m : r.messages) {
      if (m.contains("content") && m["content"].is_string())
        n += static_cast<int64_t>(m["content"].get<std::string>().size());
    }
    return n;
  }
  nlohmann::json status() const override {
    return {{"state", std::string(engine_state_name(current_state))}, {"ranks", 1}};
  }
  Status load(const nlohmann::json& options) override {
    if (!options.contains("model") || !options["model"].is_string()) {
      return invalid_argument("'model' (a GGUF path) is required");
    }
    if (events) events({"load_progress", {{"bytes_done", 10}, {"bytes_total", 100}, {"rank", 0}}});
    return ok_status();
  }
  Status unload() override { return ok_status(); }
  nlohmann::json local_models() const override { return nlohmann::json::array(); }
  Result<nlohmann::json> fit(const nlohmann::json&) const override {
    return unimplemented("no fit in the fake");
  }
  std::string metrics_text() const override { return metrics.render(); }
  void set_event_sink(EngineEventSink sink) override { events = std::move(sink); }

  static GenerationEvent content(std::string text) {
    GenerationEvent e;
    e.kind = GenerationEvent::Kind::kContent;
    e.text = std::move(text);
    return e;
  }
  static GenerationEvent reasoning(std::string text) {
    GenerationEvent e;
    e.kind = GenerationEvent::Kind::kReasoning;
    e.text = std::move(text);
    return e;
  }
  static GenerationEvent tool(std::string name, std::string args) {
    GenerationEvent e;
    e.kind = GenerationEvent::Kind::kToolCall;
    e.tool_call = {"call_1", std::move(name), std::move(args), ""};
    return e;
  }
};

}  // namespace arc::testing
