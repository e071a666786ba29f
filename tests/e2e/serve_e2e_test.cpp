// End to end: arclight-engine serve on a generated model, talked to over HTTP like a client.
#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include <gtest/gtest.h>

#include "e2e/engine_process.h"

namespace arc {
namespace {

using nlohmann::json;
using testing::EngineProcess;

std::string model_path() {
  return (std::filesystem::temp_directory_path() / "arc_e2e_qwen3moe.gguf").string();
}

class ServeE2E : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string bin = std::string(ARC_BIN_DIR) + "/arclight-engine";
    ASSERT_EQ(
        testing::run_command({bin, "--log-level", "warn", "make-test-model", "--family", "qwen3moe",
                              "--out", model_path(), "--layers", "2", "--seed", "7"}),
        0);
    engine_ = new EngineProcess();
    ASSERT_TRUE(engine_->start({"--model", model_path(), "--ctx-size", "512", "--parallel", "64",
                                "--threads", "2", "--max-batch-tokens", "256"}))
        << engine_->error();
  }
  static void TearDownTestSuite() {
    delete engine_;
    engine_ = nullptr;
    std::filesystem::remove(model_path());
  }
  void SetUp() override {
    if (engine_ == nullptr || engine_->port() == 0) GTEST_SKIP() << "engine did not start";
  }

  static httplib::Client client() {
    httplib::Client c("127.0.0.1", engine_->port());
    c.set_read_timeout(60, 0);
    return c;
  }
  static json chat(const std::string& content, int max_tokens, bool stream = false) {
    return {{"model", "test"},
            {"stream", stream},
            {"temperature", 0},
            {"max_tokens", max_tokens},
            {"messages", json::array({{{"role", "user"}, {"content", content}}})}};
  }
  // Text of a streamed chat completion.
  static std::string stream_text(const std::string& body) {
    std::string text;
    size_t pos = 0;
    while ((pos = body.find("data: ", pos)) != std::string::npos) {
      size_t end = body.find("\n\n", pos);
      std::string data = body.substr(pos + 6, end - pos - 6);
      pos = end;
      if (data == "[DONE]") break;
      auto j = json::parse(data);
      if (j.contains("choices") && !j["choices"].empty() &&
          j["choices"][0]["delta"].contains("content")) {
        text += j["choices"][0]["delta"]["content"].get<std::string>();
      }
    }
    return text;
  }
  static json status() { return json::parse(client().Get("/engine/status")->body); }
  static void wait_blocks_free() {
    for (int i = 0; i < 100 && status()["kv"]["blocks_used"] != 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  static EngineProcess* engine_;
};
EngineProcess* ServeE2E::engine_ = nullptr;

TEST_F(ServeE2E, HealthModelsAndStatus) {
  auto c = client();
  EXPECT_EQ(json::parse(c.Get("/health")->body)["status"], "ready");
  auto models = json::parse(c.Get("/v1/models")->body);
  ASSERT_EQ(models["data"].size(), 1u);
  EXPECT_EQ(models["data"][0]["meta"]["architecture"], "qwen3moe");
  EXPECT_EQ(models["data"][0]["meta"]["context_length"], 512);
  auto s = status();
  EXPECT_EQ(s["state"], "ready");
  EXPECT_GT(s["kv"]["blocks_total"].get<int>(), 0);
}

TEST_F(ServeE2E, StreamingAndNonStreamingAgreeUnderGreedy) {
  auto c = client();
  auto r = c.Post("/v1/chat/completions", chat("hello there", 12).dump(), "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  auto j = json::parse(r->body);
  std::string whole = j["choices"][0]["message"]["content"];
  EXPECT_GT(j["usage"]["completion_tokens"].get<int>(), 0);
  EXPECT_GT(j["usage"]["prompt_tokens"].get<int>(), 0);
  auto s = c.Post("/v1/chat/completions", chat("hello there", 12, true).dump(), "application/json");
  ASSERT_TRUE(s);
  ASSERT_EQ(s->status, 200);
  EXPECT_EQ(stream_text(s->body), whole);
}

TEST_F(ServeE2E, SixtyFourConcurrentClientsGetTheirOwnAnswers) {
  constexpr int kClients = 64;
  std::vector<std::string> prompts, alone(kClients), together(kClients);
  for (int i = 0; i < kClients; ++i)
    prompts.push_back("question number " + std::to_string(i * 7919 % 1000));
  // Each prompt alone first (greedy is deterministic), then all at once, streaming.
  for (int i = 0; i < kClients; ++i) {
    auto r = client().Post("/v1/chat/completions", chat(prompts[i], 8).dump(), "application/json");
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    alone[i] = json::parse(r->body)["choices"][0]["message"]["content"];
  }
  // Then 3, 17 and all 64 at once, streaming: odd batch sizes, one of them past a graph bucket
  // boundary (16), and the batches of several buckets (on the CUDA backend, recorded graphs).
  for (const int n : {3, 17, kClients}) {
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int i = 0; i < n; ++i) {
      threads.emplace_back([&, i] {
        auto r = client().Post("/v1/chat/completions", chat(prompts[i], 8, true).dump(),
                               "application/json");
        if (!r || r->status != 200) {
          failures++;
          ADD_FAILURE() << "client " << i << ": "
                        << (r ? std::to_string(r->status) + " " + r->body
                              : httplib::to_string(r.error()));
          return;
        }
        together[i] = stream_text(r->body);
      });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(failures.load(), 0);
    for (int i = 0; i < n; ++i) EXPECT_EQ(together[i], alone[i]) << "client " << i << " of " << n;
  }
  wait_blocks_free();
  EXPECT_EQ(status()["kv"]["blocks_used"], 0);
}

TEST_F(ServeE2E, PrefixReuseShowsInUsageAndMetrics) {
  std::string system(150, 'a');  // a long shared "system prompt" (one token per byte)
  auto body = [&](const std::string& q) {
    return json{{"temperature", 0},
                {"max_tokens", 2},
                {"messages", json::array({{{"role", "system"}, {"content", system}},
                                          {{"role", "user"}, {"content", q}}})}};
  };
  auto c = client();
  auto first =
      json::parse(c.Post("/v1/chat/completions", body("one?").dump(), "application/json")->body);
  auto second =
      json::parse(c.Post("/v1/chat/completions", body("two?").dump(), "application/json")->body);
  int64_t prompt = second["usage"]["prompt_tokens"];
  int64_t cached = second["usage"]["prompt_tokens_details"]["cached_tokens"];
  EXPECT_GT(cached, 0) << second.dump();
  EXPECT_GE(cached, prompt - 32) << "most of the shared prefix should be reused";
  EXPECT_LT(cached, prompt);
  (void)first;
  std::string metrics = c.Get("/metrics")->body;
  auto pos = metrics.find("\narclight_prefix_cache_hits_total ");
  ASSERT_NE(pos, std::string::npos) << metrics;
  EXPECT_GT(std::stod(metrics.substr(pos + 34)), 0.0);
}

TEST_F(ServeE2E, CancellingMidStreamFreesBlocks) {
  httplib::Client c = client();
  httplib::Request req;
  req.method = "POST";
  req.path = "/v1/chat/completions";
  // As many tokens as the context allows, and the client leaves after the first chunk: the tiny
  // model decodes fast, and a short answer could be complete before the server sees the close.
  req.body = chat("tell me a long story", 400, true).dump();
  req.set_header("Content-Type", "application/json");
  int chunks = 0;
  req.content_receiver = [&](const char*, size_t, uint64_t, uint64_t) { return ++chunks < 2; };
  c.send(req);
  wait_blocks_free();
  EXPECT_EQ(status()["kv"]["blocks_used"], 0);
  // The request thread counts the cancellation when it notices the closed connection.
  std::string metrics;
  for (int i = 0; i < 100; ++i) {
    metrics = client().Get("/metrics")->body;
    if (metrics.find("arclight_requests_total{finish_reason=\"cancelled\"}") != std::string::npos)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_NE(metrics.find("arclight_requests_total{finish_reason=\"cancelled\"}"), std::string::npos)
      << metrics;
}

TEST_F(ServeE2E, ClientMistakesAre4xx) {
  auto c = client();
  auto r =
      c.Post("/v1/chat/completions", chat(std::string(2000, 'x'), 4).dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(json::parse(r->body)["error"]["code"], "context_length_exceeded");
  r = c.Post("/v1/chat/completions", "{", "application/json");
  EXPECT_EQ(r->status, 400);
  json img = chat("x", 4);
  img["messages"][0]["content"] = json::array(
      {{{"type", "image_url"}, {"image_url", {{"url", "data:image/png;base64,AAAA"}}}}});
  r = c.Post("/v1/chat/completions", img.dump(), "application/json");
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("cannot see images"), std::string::npos);
  r = c.Post("/v1/completions", json({{"prompt", json::array({999999})}}).dump(),
             "application/json");
  EXPECT_EQ(r->status, 400);
}

TEST_F(ServeE2E, AnthropicMessagesAndCompletionsWithStop) {
  auto c = client();
  json m = {{"model", "test"},
            {"max_tokens", 6},
            {"temperature", 0},
            {"messages", json::array({{{"role", "user"}, {"content", "hi"}}})}};
  auto r = c.Post("/v1/messages", m.dump(), "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  auto j = json::parse(r->body);
  EXPECT_EQ(j["type"], "message");
  EXPECT_GT(j["usage"]["output_tokens"].get<int>(), 0);
  // Legacy completion; then the same with a stop string taken from its own output.
  auto cr = c.Post("/v1/completions",
                   json({{"prompt", "abc"}, {"max_tokens", 8}, {"temperature", 0}}).dump(),
                   "application/json");
  ASSERT_EQ(cr->status, 200) << cr->body;
  std::string text = json::parse(cr->body)["choices"][0]["text"];
  if (text.size() >= 3) {
    std::string stop = text.substr(1, 2);
    auto sr = c.Post(
        "/v1/completions",
        json({{"prompt", "abc"}, {"max_tokens", 8}, {"temperature", 0}, {"stop", stop}}).dump(),
        "application/json");
    auto sj = json::parse(sr->body);
    EXPECT_EQ(sj["choices"][0]["text"], text.substr(0, text.find(stop)));
    EXPECT_EQ(sj["choices"][0]["finish_reason"], "stop");
  }
}

TEST_F(ServeE2E, FitReportsForTheLoadedFileAndTheCatalog) {
  auto c = client();
  auto r =
      c.Post("/engine/fit", json({{"model", model_path()}, {"cluster", {{"boxes", 1}}}}).dump(),
             "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_TRUE(json::parse(r->body).contains("verdict")) << r->body;
  r = c.Post("/engine/fit", json({{"catalog", "qwen3-30b-a3b"}}).dump(), "application/json");
  EXPECT_EQ(r->status, 200) << r->body;
  r = c.Post("/engine/fit", json({{"catalog", "no-such-model"}}).dump(), "application/json");
  EXPECT_EQ(r->status, 404);
}

TEST_F(ServeE2E, MetricsPassPromtool) {
  const char* promtool = "/usr/bin/promtool";
  if (access(promtool, X_OK) != 0)
    GTEST_SKIP() << "promtool not installed (Debian package prometheus)";
  std::string metrics = client().Get("/metrics")->body;
  auto path = std::filesystem::temp_directory_path() / "arc_metrics.txt";
  FILE* f = std::fopen(path.c_str(), "w");
  std::fwrite(metrics.data(), 1, metrics.size(), f);
  std::fclose(f);
  std::string cmd = std::string(promtool) + " check metrics < " + path.string() + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[256];
  while (fgets(buf, sizeof buf, p)) out += buf;
  int rc = pclose(p);
  EXPECT_EQ(rc, 0) << out;
  std::filesystem::remove(path);
}

// A tiny generated llama in the temp folder; empty when make-test-model failed.
std::string make_llama(const std::string& name) {
  const std::string bin = std::string(ARC_BIN_DIR) + "/arclight-engine";
  const std::string path = (std::filesystem::temp_directory_path() / name).string();
  const int rc = testing::run_command(
      {bin, "--log-level", "warn", "make-test-model", "--family", "llama", "--out", path});
  return rc == 0 ? path : std::string();
}

// /engine/status once a load POSTed to `c` has ended (or after 10 s).
json status_after_load(httplib::Client& c) {
  json s;
  for (int i = 0; i < 200; ++i) {
    s = json::parse(c.Get("/engine/status")->body);
    if (s["state"] != "loading") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return s;
}

TEST(ServeE2EControl, UnloadLoadAndRefusal) {
  const std::string path = make_llama("arc_e2e_llama.gguf");
  ASSERT_FALSE(path.empty());
  EngineProcess engine;
  ASSERT_TRUE(engine.start(
      {"--threads", "1", "--model-dir", std::filesystem::path(path).parent_path().string()},
      "idle"))
      << engine.error();
  httplib::Client c("127.0.0.1", engine.port());
  c.set_read_timeout(30, 0);
  // No model: chat is refused with 503 and a reason.
  auto r = c.Post("/v1/chat/completions",
                  json({{"messages", json::array({{{"role", "user"}, {"content", "x"}}})}}).dump(),
                  "application/json");
  EXPECT_EQ(r->status, 503);
  // The file shows up among the local models.
  auto local = json::parse(c.Get("/engine/local-models")->body);
  bool listed = false;
  for (const auto& m : local) listed |= m["path"] == path;
  EXPECT_TRUE(listed);
  // A missing file is refused at once, with a reason; nothing was unloaded.
  r = c.Post("/engine/load", json({{"model", "nonexistent.gguf"}}).dump(), "application/json");
  EXPECT_EQ(r->status, 404);
  EXPECT_NE(r->body.find("nonexistent"), std::string::npos) << r->body;
  EXPECT_EQ(json::parse(c.Get("/health")->body)["status"], "idle");
  // Load the real one, use it, unload it.
  r = c.Post("/engine/load", json({{"model", path}, {"ctx_size", 128}}).dump(), "application/json");
  EXPECT_EQ(r->status, 202);
  json s = status_after_load(c);
  ASSERT_EQ(s["state"], "ready") << s.dump();
  r = c.Post("/v1/completions", json({{"prompt", "hi"}, {"max_tokens", 3}}).dump(),
             "application/json");
  EXPECT_EQ(r->status, 200) << r->body;
  // A load that passes the checks but fails after the unload (a projector for a model that
  // takes no images): the model that was serving comes back.
  r = c.Post("/engine/load", json({{"model", path}, {"mmproj", path}}).dump(), "application/json");
  EXPECT_EQ(r->status, 202) << r->body;
  s = status_after_load(c);
  EXPECT_EQ(s["state"], "ready") << s.dump();
  EXPECT_NE(s.value("error", "").find("still serving"), std::string::npos) << s.dump();
  r = c.Post("/v1/completions", json({{"prompt", "hi"}, {"max_tokens", 3}}).dump(),
             "application/json");
  EXPECT_EQ(r->status, 200) << r->body;
  r = c.Post("/engine/unload", "{}", "application/json");
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(json::parse(c.Get("/health")->body)["status"], "idle");
  engine.stop();
  EXPECT_EQ(engine.exit_status(), 0);
  std::filesystem::remove(path);
}

// A model whose weights cannot fit is refused before any weight is copied into memory (the CPU
// backend copies them; filling memory first would bring the OOM killer, not a message). With
// --mmap nothing is copied and the full guard (weights, KV, workspace) answers after mapping.
TEST(ServeE2EControl, WeightsThatCannotFitAreRefusedBeforeLoading) {
  const std::string path = make_llama("arc_e2e_nofit.gguf");
  ASSERT_FALSE(path.empty());
  for (const bool mmap : {false, true}) {
    std::vector<std::string> args = {
        "--threads", "1",           "--reserve-gib",
        "1024",      "--model-dir", std::filesystem::path(path).parent_path().string()};
    if (mmap) args.push_back("--mmap");
    EngineProcess engine;
    ASSERT_TRUE(engine.start(args, "idle")) << engine.error();
    httplib::Client c("127.0.0.1", engine.port());
    c.set_read_timeout(30, 0);
    // Refused before anything is unloaded or loaded: the answer itself carries the numbers.
    auto r = c.Post("/engine/load", json({{"model", path}}).dump(), "application/json");
    EXPECT_EQ(r->status, 400);
    EXPECT_NE(r->body.find("the model does not fit"), std::string::npos) << r->body;
    EXPECT_EQ(json::parse(c.Get("/health")->body)["status"], "idle");
    engine.stop();
    EXPECT_EQ(engine.exit_status(), 0);
  }
  std::filesystem::remove(path);
}

// Issue 33, defects 1 and 2: single hostile requests are 400s and the engine keeps serving.
TEST_F(ServeE2E, HostileBodiesAre400AndTheEngineSurvives) {
  auto c = client();
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"/v1/chat/completions",
       "{\"messages\":[{\"role\":\"user\",\"content\":\"x\",\"a\":" + deep + "}]}"},
      {"/v1/chat/completions",
       "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"tools\":[{\"type\":"
       "\"function\",\"function\":{\"name\":\"f\",\"parameters\":{\"a\":" +
           deep + "}}}]}"},
      {"/v1/messages",
       "{\"model\":\"m\",\"max_tokens\":4,\"messages\":[{\"role\":\"assistant\",\"content\":"
       "[{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"f\",\"input\":{\"a\":" +
           deep + "}}]}]}"},
      {"/v1/messages",
       "{\"model\":\"m\",\"max_tokens\":4,\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],"
       "\"tools\":[{\"name\":\"f\",\"input_schema\":{\"a\":" +
           deep + "}}]}"},
      {"/v1/chat/completions",
       std::string("{\"messages\":[{\"role\":\"user\",\"content\":\"\xff\"}]}")},
      {"/v1/chat/completions",
       "{\"temperature\":1e400,\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}"},
      {"/v1/chat/completions",
       "{\"stream\":true,\"stream_options\":{\"include_usage\":\"yes\"},\"messages\":[{"
       "\"role\":\"user\",\"content\":\"x\"}]}"},
      {"/v1/chat/completions",
       "{\"tools\":[{\"type\":5}],\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}"},
      {"/v1/messages",
       "{\"model\":\"m\",\"max_tokens\":4,\"messages\":[{\"role\":\"user\",\"content\":[{"
       "\"type\":\"tool_result\",\"tool_use_id\":\"t\",\"is_error\":\"yes\"}]}]}"},
      {"/v1/messages",
       "{\"model\":\"m\",\"max_tokens\":4,\"thinking\":{\"type\":5},\"messages\":[{\"role\":"
       "\"user\",\"content\":\"x\"}]}"},
      {"/engine/fit", "{\"model\":\"" + std::string(30000, 'a') + "-00001-of-00002.gguf\"}"},
      {"/engine/load", "{\"model\":\"" + std::string(30000, 'a') + "-00001-of-00002.gguf\"}"},
  };
  for (const auto& [route, body] : cases) {
    auto r = c.Post(route.c_str(), body, "application/json");
    ASSERT_TRUE(r) << route << " " << body.substr(0, 120);
    EXPECT_GE(r->status, 400) << r->body;
    EXPECT_LT(r->status, 500) << r->body;
    EXPECT_LT(r->body.size(), 2000u) << "long names are not echoed whole";
    const json j = json::parse(r->body);
    if (route == "/v1/messages") {
      EXPECT_EQ(j["type"], "error") << r->body;
    } else {
      EXPECT_TRUE(j.contains("error")) << r->body;
    }
  }
  EXPECT_EQ(json::parse(c.Get("/health")->body)["status"], "ready");
}

// Issue 33, defect 7: content as a list of text parts, the way Claude Code and SDKs send it.
TEST_F(ServeE2E, ContentBlocksInBothDialects) {
  auto c = client();
  json openai = chat("", 3);
  openai["messages"] = json::array(
      {{{"role", "system"}, {"content", json::array({{{"type", "text"}, {"text", "Be terse."}}})}},
       {{"role", "user"},
        {"content", json::array({{{"type", "text"}, {"text", "Hello"}},
                                 {{"type", "text"}, {"text", "there"}}})}}});
  auto r = c.Post("/v1/chat/completions", openai.dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  json anthropic = {
      {"model", "m"},
      {"max_tokens", 3},
      {"system", json::array({{{"type", "text"}, {"text", "You are Claude Code."}}})},
      {"messages",
       json::array({{{"role", "user"},
                     {"content", json::array({{{"type", "text"}, {"text", "ls"}},
                                              {{"type", "text"}, {"text", "now"}}})}}})}};
  r = c.Post("/v1/messages", anthropic.dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
}

// Issue 33, defect 6: a second engine on a busy port fails instead of sharing it.
TEST_F(ServeE2E, SecondEngineOnABusyPortFails) {
  int rc = 0;
  const std::string out =
      testing::capture({std::string(ARC_BIN_DIR) + "/arclight-engine", "--log-level", "warn",
                        "serve", "--port", std::to_string(engine_->port())},
                       &rc);
  EXPECT_NE(rc, 0) << out;
  EXPECT_NE(out.find("port in use"), std::string::npos) << out;
  EXPECT_EQ(json::parse(client().Get("/health")->body)["status"], "ready");
}

// Issue 33, defects 5 and 8: model paths stay inside the model folders, refusals reveal nothing
// about other files, and a load that cannot succeed leaves the working model serving.
TEST_F(ServeE2E, LoadAndFitPathsAreConfinedAndRefusalsKeepTheModel) {
  auto c = client();
  const auto dir = std::filesystem::path(model_path()).parent_path();
  const auto not_gguf = dir / "arc_e2e_not_a_model.gguf";
  {
    std::ofstream f(not_gguf);
    f << "root:x:0:0:secret\n";
  }
  const auto link = dir / "arc_e2e_link_out.gguf";
  std::filesystem::remove(link);
  std::filesystem::create_symlink("/etc/passwd", link);
  // Outside the folder, missing, through "..", a link out: the same kind of answer, no bytes.
  std::vector<std::string> refused = {"/etc/passwd", "/etc/no-such-file", "../etc/passwd",
                                      link.string(), "nonexistent.gguf"};
  for (const auto& p : refused) {
    for (const char* route : {"/engine/load", "/engine/fit"}) {
      auto r = c.Post(route, json({{"model", p}}).dump(), "application/json");
      ASSERT_TRUE(r);
      EXPECT_GE(r->status, 400) << route << " " << p << ": " << r->body;
      EXPECT_LT(r->status, 500) << route << " " << p << ": " << r->body;
      EXPECT_EQ(r->body.find("root"), std::string::npos) << r->body;
      EXPECT_EQ(r->body.find("magic"), std::string::npos) << r->body;
    }
  }
  auto a = c.Post("/engine/fit", json({{"model", "/etc/passwd"}}).dump(), "application/json");
  auto b = c.Post("/engine/fit", json({{"model", "/etc/no-such-file"}}).dump(), "application/json");
  EXPECT_EQ(a->status, b->status);
  // A file in the folder that is not a GGUF: refused at once, the model keeps serving.
  auto r = c.Post("/engine/load", json({{"model", not_gguf.string()}}).dump(), "application/json");
  EXPECT_EQ(r->status, 400) << r->body;
  EXPECT_EQ(json::parse(c.Get("/health")->body)["status"], "ready");
  r = c.Post("/v1/chat/completions", chat("hi", 2).dump(), "application/json");
  EXPECT_EQ(r->status, 200) << r->body;
  std::filesystem::remove(not_gguf);
  std::filesystem::remove(link);
}

}  // namespace
}  // namespace arc
