// The HTTP layer against a scripted service: dialects, streaming framing, errors, auth, limits.
#include "arc/server.h"

#include <httplib.h>

#include <gtest/gtest.h>

#include "arc/log.h"

#include "fake_service.h"

namespace arc {
namespace {

using nlohmann::json;
using testing::FakeService;

class ServerTest : public ::testing::Test {
 protected:
  void start(ServerOptions o = {}) {
    o.port = 0;
    server_ = std::make_unique<Server>(o, service_);
    ASSERT_TRUE(server_->start().ok());
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
    client_->set_read_timeout(10, 0);
  }
  void TearDown() override {
    if (server_) server_->stop();
  }
  httplib::Result post(const std::string& path, const json& body, httplib::Headers h = {}) {
    return client_->Post(path.c_str(), h, body.dump(), "application/json");
  }
  // Parses an SSE body into (event, data) pairs.
  static std::vector<std::pair<std::string, std::string>> sse(const std::string& body) {
    std::vector<std::pair<std::string, std::string>> out;
    std::string event, data;
    size_t pos = 0;
    while (pos < body.size()) {
      size_t nl = body.find('\n', pos);
      if (nl == std::string::npos) nl = body.size();
      std::string line = body.substr(pos, nl - pos);
      pos = nl + 1;
      if (line.empty()) {
        if (!data.empty() || !event.empty()) out.emplace_back(event, data);
        event.clear();
        data.clear();
      } else if (line.rfind("event: ", 0) == 0) {
        event = line.substr(7);
      } else if (line.rfind("data: ", 0) == 0) {
        data += line.substr(6);
      }
    }
    return out;
  }

  FakeService service_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<httplib::Client> client_;
};

json chat_body(bool stream = false) {
  return {{"model", "x"},
          {"stream", stream},
          {"messages", json::array({{{"role", "user"}, {"content", "hello"}}})}};
}

TEST_F(ServerTest, HealthAndModels) {
  start();
  auto r = client_->Get("/health");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(json::parse(r->body)["status"], "ready");
  r = client_->Get("/v1/models");
  ASSERT_TRUE(r);
  auto j = json::parse(r->body);
  ASSERT_EQ(j["data"].size(), 1u);
  EXPECT_EQ(j["data"][0]["id"], "fake-moe");
  EXPECT_EQ(j["data"][0]["meta"]["context_length"], 64);
}

TEST_F(ServerTest, ChatNonStreaming) {
  service_.script = {FakeService::reasoning("think"), FakeService::content("Hel"),
                     FakeService::content("lo ü")};
  start();
  auto r = post("/v1/chat/completions", chat_body());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  auto j = json::parse(r->body);
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["choices"][0]["message"]["content"], "Hello ü");
  EXPECT_EQ(j["choices"][0]["message"]["reasoning_content"], "think");
  EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(j["usage"]["prompt_tokens"], 5);
  EXPECT_EQ(j["usage"]["total_tokens"], 8);
  EXPECT_EQ(j["usage"]["prompt_tokens_details"]["cached_tokens"], 2);
}

TEST_F(ServerTest, ReasoningEffortFromBothDialects) {
  start();
  auto effort = [&] {
    std::lock_guard<std::mutex> lock(service_.mu);
    return service_.last_chat.reasoning_effort.value_or("unset");
  };
  json body = chat_body();
  body["reasoning_effort"] = "high";
  auto r = post("/v1/chat/completions", body);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(effort(), "high");
  body.erase("reasoning_effort");
  body["chat_template_kwargs"] = {{"reasoning_effort", "low"}};
  r = post("/v1/chat/completions", body);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(effort(), "low");
  body["reasoning_effort"] = "extreme";
  r = post("/v1/chat/completions", body);
  ASSERT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("'reasoning_effort' must be 'low', 'medium' or 'high'"), std::string::npos)
      << r->body;
  json anthropic = {{"model", "x"},
                    {"max_tokens", 5},
                    {"output_config", {{"effort", "medium"}}},
                    {"messages", json::array({{{"role", "user"}, {"content", "hi"}}})}};
  r = post("/v1/messages", anthropic);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(effort(), "medium");
}

TEST_F(ServerTest, ChatStreamingFramesAndUsage) {
  service_.script = {FakeService::content("a"), FakeService::content("b"),
                     FakeService::tool("get_weather", R"({"city":"Oslo"})")};
  start();
  json body = chat_body(true);
  body["stream_options"] = {{"include_usage", true}};
  auto r = post("/v1/chat/completions", body);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  EXPECT_NE(r->get_header_value("Content-Type").find("text/event-stream"), std::string::npos);
  auto frames = sse(r->body);
  ASSERT_GE(frames.size(), 6u);
  EXPECT_EQ(frames.back().second, "[DONE]");
  std::string text;
  std::string finish;
  bool usage_seen = false, tool_seen = false;
  for (size_t i = 0; i + 1 < frames.size(); ++i) {
    auto j = json::parse(frames[i].second);
    EXPECT_EQ(j["object"], "chat.completion.chunk");
    if (j.contains("usage")) {
      usage_seen = true;
      EXPECT_TRUE(j["choices"].empty());
      continue;
    }
    const auto& d = j["choices"][0]["delta"];
    if (d.contains("content")) text += d["content"].get<std::string>();
    if (d.contains("tool_calls")) {
      tool_seen = true;
      EXPECT_EQ(d["tool_calls"][0]["function"]["name"], "get_weather");
      EXPECT_EQ(d["tool_calls"][0]["index"], 0);
    }
    if (!j["choices"][0]["finish_reason"].is_null()) finish = j["choices"][0]["finish_reason"];
  }
  EXPECT_EQ(text, "ab");
  EXPECT_TRUE(tool_seen);
  EXPECT_TRUE(usage_seen);
  EXPECT_EQ(finish, "tool_calls");
}

TEST_F(ServerTest, OpenAiErrorsAreClientErrorsInDialect) {
  start();
  auto expect_400 = [&](const std::string& raw, const std::string& needle) {
    auto r = client_->Post("/v1/chat/completions", raw, "application/json");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << raw;
    auto j = json::parse(r->body);
    ASSERT_TRUE(j.contains("error")) << r->body;
    EXPECT_EQ(j["error"]["type"], "invalid_request_error");
    EXPECT_NE(j["error"]["message"].get<std::string>().find(needle), std::string::npos)
        << j["error"]["message"];
  };
  expect_400("{not json", "not valid JSON");
  expect_400("[1,2]", "must be a JSON object");
  expect_400(R"({"messages": []})", "at least one message");
  expect_400(R"({"messages": [{"role": "wizard", "content": "x"}]})", "wizard");
  expect_400(R"({"messages": [{"role": "user"}]})", "content is missing");
  expect_400(R"({"messages": [{"role": "user", "content": "x"}], "temperature": 9})",
             "temperature");
  expect_400(R"({"messages": [{"role": "user", "content": "x"}], "max_tokens": -3})", "max_tokens");
  expect_400(R"({"messages": [{"role": "user", "content": "x"}], "n": 3})", "'n' must be 1");
  expect_400(
      R"({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "http://x/y.png"}}]}]})",
      "data URI");
  expect_400(R"({"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "function"}]})",
             "tools[0]");
  // Too long for the context: a 400 with the OpenAI code clients look for.
  json longer = chat_body();
  longer["messages"][0]["content"] = std::string(100, 'x');
  auto r = post("/v1/chat/completions", longer);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(json::parse(r->body)["error"]["code"], "context_length_exceeded");
  // The same refusal when streaming: no 200 and no partial stream.
  longer["stream"] = true;
  r = post("/v1/chat/completions", longer);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
}

TEST_F(ServerTest, NoModelLoadedIs503) {
  service_.current_state = EngineState::kIdle;
  start();
  auto r = post("/v1/chat/completions", chat_body());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503);
  EXPECT_NE(r->body.find("no model is loaded"), std::string::npos);
}

TEST_F(ServerTest, AnthropicMessages) {
  service_.script = {FakeService::reasoning("hmm"), FakeService::content("Hi"),
                     FakeService::tool("lookup", R"({"q":1})")};
  start();
  json body = {{"model", "x"},
               {"max_tokens", 50},
               {"system", "be brief"},
               {"messages", json::array({{{"role", "user"}, {"content", "hello"}},
                                         {{"role", "assistant"},
                                          {"content", json::array({{{"type", "tool_use"},
                                                                    {"id", "t1"},
                                                                    {"name", "lookup"},
                                                                    {"input", {{"q", 0}}}}})}},
                                         {{"role", "user"},
                                          {"content", json::array({{{"type", "tool_result"},
                                                                    {"tool_use_id", "t1"},
                                                                    {"content", "42"}}})}}})}};
  auto r = post("/v1/messages", body);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  auto j = json::parse(r->body);
  EXPECT_EQ(j["type"], "message");
  EXPECT_EQ(j["stop_reason"], "tool_use");
  ASSERT_EQ(j["content"].size(), 3u);
  EXPECT_EQ(j["content"][0]["type"], "thinking");
  EXPECT_EQ(j["content"][1]["text"], "Hi");
  EXPECT_EQ(j["content"][2]["type"], "tool_use");
  EXPECT_EQ(j["content"][2]["input"]["q"], 1);
  EXPECT_EQ(j["usage"]["output_tokens"], 3);
  EXPECT_EQ(j["usage"]["cache_read_input_tokens"], 2);
  // The request reached the engine in the OpenAI shape, tool result as a tool message.
  std::lock_guard<std::mutex> lock(service_.mu);
  const json& m = service_.last_chat.messages;
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[0]["role"], "system");
  EXPECT_EQ(m[2]["tool_calls"][0]["function"]["name"], "lookup");
  EXPECT_EQ(m[3]["role"], "tool");
  EXPECT_EQ(m[3]["tool_call_id"], "t1");
}

TEST_F(ServerTest, AnthropicStreamingEventSequence) {
  service_.script = {FakeService::content("He"), FakeService::content("y")};
  start();
  json body = {{"model", "x"},
               {"max_tokens", 5},
               {"stream", true},
               {"messages", json::array({{{"role", "user"}, {"content", "hi"}}})}};
  auto r = post("/v1/messages", body);
  ASSERT_TRUE(r);
  auto frames = sse(r->body);
  std::vector<std::string> names;
  std::string text;
  for (auto& [ev, data] : frames) {
    names.push_back(ev);
    auto j = json::parse(data);
    EXPECT_EQ(j["type"], ev);
    if (ev == "content_block_delta") text += j["delta"]["text"].get<std::string>();
  }
  std::vector<std::string> expected = {
      "message_start",      "content_block_start", "content_block_delta", "content_block_delta",
      "content_block_stop", "message_delta",       "message_stop"};
  EXPECT_EQ(names, expected);
  EXPECT_EQ(text, "Hey");
}

TEST_F(ServerTest, AnthropicErrorsAndCountTokens) {
  start();
  auto r = post("/v1/messages", {{"model", "x"}, {"messages", json::array()}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  auto j = json::parse(r->body);
  EXPECT_EQ(j["type"], "error");
  EXPECT_EQ(j["error"]["type"], "invalid_request_error");
  r = post("/v1/messages/count_tokens",
           {{"model", "x"}, {"messages", json::array({{{"role", "user"}, {"content", "abcd"}}})}});
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(json::parse(r->body)["input_tokens"], 4);
}

TEST_F(ServerTest, ApiKeyRequiredExceptHealth) {
  ServerOptions o;
  o.api_key = "sekret";
  start(o);
  EXPECT_EQ(client_->Get("/health")->status, 200);
  auto r = client_->Get("/v1/models");
  EXPECT_EQ(r->status, 401);
  EXPECT_EQ(json::parse(r->body)["error"]["type"], "authentication_error");
  r = post("/v1/messages", {{"model", "x"}});
  EXPECT_EQ(r->status, 401);
  EXPECT_EQ(json::parse(r->body)["type"], "error");
  EXPECT_EQ(client_->Get("/v1/models", {{"Authorization", "Bearer sekret"}})->status, 200);
  EXPECT_EQ(client_->Get("/v1/models", {{"x-api-key", "sekret"}})->status, 200);
  EXPECT_EQ(client_->Get("/v1/models", {{"Authorization", "Bearer sekreT"}})->status, 401);
}

// GET /engine/log: the engine's recent log lines (the app's engine log when it attaches), behind
// the API key like every route but /health; a bad line count is a 400.
TEST_F(ServerTest, RecentLogBehindTheKey) {
  ServerOptions o;
  o.api_key = "sekret";
  start(o);
  arc::logger("test")->warn("marker line {}", 4242);
  EXPECT_EQ(client_->Get("/engine/log")->status, 401);
  const httplib::Headers key = {{"Authorization", "Bearer sekret"}};
  auto r = client_->Get("/engine/log?lines=50", key);
  ASSERT_EQ(r->status, 200) << r->body;
  const json lines = json::parse(r->body)["lines"];
  ASSERT_TRUE(lines.is_array());
  EXPECT_LE(lines.size(), 50u);
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines.back().get<std::string>().find("[test] marker line 4242"), std::string::npos)
      << lines.back();
  for (const char* bad : {"0", "-3", "abc", "99999999"}) {
    EXPECT_EQ(client_->Get(std::string("/engine/log?lines=") + bad, key)->status, 400) << bad;
  }
}

TEST_F(ServerTest, BindSafety) {
  ServerOptions o;
  o.host = "0.0.0.0";
  EXPECT_EQ(check_bind_safety(o).code(), StatusCode::kFailedPrecondition);
  o.insecure = true;
  EXPECT_TRUE(check_bind_safety(o).ok());
  o.insecure = false;
  o.api_key = "k";
  EXPECT_TRUE(check_bind_safety(o).ok());
  o.host = "127.0.0.2";
  o.api_key.clear();
  EXPECT_TRUE(check_bind_safety(o).ok());
  o.host = "::1";
  EXPECT_TRUE(check_bind_safety(o).ok());
}

TEST_F(ServerTest, BodyLimitAndUnknownRoute) {
  ServerOptions o;
  o.max_body_bytes = 1024;
  start(o);
  json big = chat_body();
  big["messages"][0]["content"] = std::string(4096, 'x');
  auto r = post("/v1/chat/completions", big);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413);
  r = client_->Get("/v2/nothing");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  EXPECT_TRUE(json::parse(r->body).contains("error"));
}

TEST_F(ServerTest, ClientDisconnectCancels) {
  for (int i = 0; i < 200; ++i) service_.script.push_back(FakeService::content("x"));
  service_.delay_ms = 5;
  start();
  int received = 0;
  httplib::Request req;
  req.method = "POST";
  req.path = "/v1/chat/completions";
  req.body = chat_body(true).dump();
  req.set_header("Content-Type", "application/json");
  req.content_receiver = [&](const char*, size_t, uint64_t, uint64_t) { return ++received < 3; };
  client_->send(req);
  // The service sees the closed connection within a few writes and stops generating.
  for (int i = 0; i < 200 && service_.cancelled.load() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(service_.cancelled.load(), 1);
}

TEST_F(ServerTest, CompletionsWithEchoAndLogprobs) {
  service_.script = {FakeService::content("cd")};
  service_.script[0].logprobs = {{"cd", {'c', 'd'}, -0.25f, {{"cd", -0.25f}, {"ce", -2.0f}}}};
  start();
  auto r = post("/v1/completions", {{"prompt", "ab"}, {"echo", true}, {"logprobs", 1}});
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  auto j = json::parse(r->body);
  EXPECT_EQ(j["object"], "text_completion");
  EXPECT_EQ(j["choices"][0]["text"], "abcd");
  const auto& lp = j["choices"][0]["logprobs"];
  ASSERT_EQ(lp["tokens"].size(), 3u);
  EXPECT_EQ(lp["tokens"][0], "a");
  EXPECT_EQ(lp["text_offset"][2], 2);
  EXPECT_FLOAT_EQ(lp["token_logprobs"][2].get<float>(), -0.25f);
}

TEST_F(ServerTest, EventStreamDeliversEngineEvents) {
  ServerOptions o;
  o.event_keepalive_s = 1;
  start(o);
  std::string received;
  std::thread reader([&] {
    httplib::Client c("127.0.0.1", server_->port());
    c.set_read_timeout(5, 0);
    c.Get("/engine/events", [&](const char* data, size_t n) {
      received.append(data, n);
      return received.find("load_progress") == std::string::npos;
    });
  });
  // Wait for the subscription (the first frame is the state snapshot), then trigger an event.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  auto r = post("/engine/load", {{"model", "/m.gguf"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 202);
  reader.join();
  EXPECT_NE(received.find("event: state"), std::string::npos);
  EXPECT_NE(received.find("event: load_progress"), std::string::npos);
  EXPECT_NE(received.find("\"bytes_total\":100"), std::string::npos);
  r = post("/engine/load", json::object());
  EXPECT_EQ(r->status, 400);
}

}  // namespace
}  // namespace arc
