// The settings a load carries (context, KV type, parallel sequences, reserve) and cancelling a
// load, on the engine service itself: what /engine/load and /engine/load/cancel drive.
#include <unistd.h>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "arc/engine_service.h"
#include "model/test_model.h"

namespace arc {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

class LoadSettingsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("arc_load_settings_" + std::to_string(getpid()));
    fs::create_directories(dir_);
    TestModelOptions o;
    o.n_ctx = 4096;
    for (const char* name : {"a.gguf", "b.gguf"}) {
      ASSERT_TRUE(write_test_model(o, (dir_ / name).string()).ok());
      o.seed += 1;
    }
    EngineOptions eo;
    eo.threads = 1;
    eo.ctx_size = 512;
    eo.max_parallel = 8;
    eo.reserve_gib = 0;
    eo.model_dirs = {dir_.string()};
    service_ = std::make_unique<EngineService>(eo);
    service_->set_event_sink([this](const EngineEvent& e) {
      if (e.type == "load_progress" && cancel_next_) {
        cancel_next_ = false;
        // On the loading thread, while weights are read: the next progress check stops it.
        EXPECT_TRUE(service_->cancel_load().ok());
      }
      std::lock_guard<std::mutex> lock(mu_);
      events_.push_back(e);
    });
  }
  void TearDown() override {
    service_.reset();
    fs::remove_all(dir_);
  }
  std::string path(const char* name) const { return (dir_ / name).string(); }
  // Waits for the load to end; the status after it.
  json settle() {
    for (int i = 0; i < 600 && service_->state() == EngineState::kLoading; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return service_->status();
  }
  std::vector<EngineEvent> events(const std::string& type) {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<EngineEvent> out;
    for (const auto& e : events_)
      if (e.type == type) out.push_back(e);
    return out;
  }

  fs::path dir_;
  std::unique_ptr<EngineService> service_;
  std::atomic<bool> cancel_next_{false};
  std::mutex mu_;
  std::vector<EngineEvent> events_;
};

TEST_F(LoadSettingsTest, SettingsReachTheLoadedModel) {
  ASSERT_TRUE(service_
                  ->load({{"model", path("a.gguf")},
                          {"ctx_size", 256},
                          {"kv_type", "f32"},
                          {"parallel", 3},
                          {"reserve_gib", 0.25}})
                  .ok());
  json s = settle();
  ASSERT_EQ(s["state"], "ready") << s.dump();
  const json& set = s["model"]["settings"];
  EXPECT_EQ(set["ctx_size"], 256);
  EXPECT_EQ(set["kv_type"], "f32");
  EXPECT_EQ(set["parallel"], 3);
  EXPECT_DOUBLE_EQ(set["reserve_gib"].get<double>(), 0.25);
  EXPECT_EQ(s["model"]["context_length"], 256);
  // KV: at most ctx_size for each of the 3 sequences (f32: twice the bytes of f16 per token).
  EXPECT_LE(s["kv"]["tokens"].get<int64_t>(), 3 * 256 + 16);
  // Settings not given keep the engine's own.
  ASSERT_TRUE(service_->load({{"model", path("b.gguf")}}).ok());
  s = settle();
  ASSERT_EQ(s["state"], "ready") << s.dump();
  EXPECT_EQ(s["model"]["settings"]["ctx_size"], 512);
  EXPECT_EQ(s["model"]["settings"]["kv_type"], "f16");
  EXPECT_EQ(s["model"]["settings"]["parallel"], 8);
}

TEST_F(LoadSettingsTest, BadSettingsAreRefusedBeforeAnythingIsUnloaded) {
  ASSERT_TRUE(service_->load({{"model", path("a.gguf")}}).ok());
  ASSERT_EQ(settle()["state"], "ready");
  const json bad[] = {
      {{"model", path("b.gguf")}, {"kv_type", "q4_0"}},
      {{"model", path("b.gguf")}, {"parallel", 0}},
      {{"model", path("b.gguf")}, {"parallel", 1.5}},
      {{"model", path("b.gguf")}, {"reserve_gib", -1}},
      {{"model", path("b.gguf")}, {"reserve_gib", "two"}},
      {{"model", path("b.gguf")}, {"ctx_size", 8}},
  };
  for (const json& b : bad) {
    Status st = service_->load(b);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << b.dump() << ": " << st.to_string();
  }
  json s = service_->status();
  EXPECT_EQ(s["state"], "ready");
  EXPECT_EQ(s["model"]["path"], path("a.gguf"));
}

TEST_F(LoadSettingsTest, CancelBringsThePreviousModelBackOrLeavesTheEngineIdle) {
  EXPECT_EQ(service_->cancel_load().code(), StatusCode::kFailedPrecondition);  // nothing loading
  // Nothing loaded before: a cancelled load leaves the engine idle, with no error.
  cancel_next_ = true;
  ASSERT_TRUE(service_->load({{"model", path("a.gguf")}}).ok());
  json s = settle();
  EXPECT_EQ(s["state"], "idle") << s.dump();
  EXPECT_FALSE(s.contains("error")) << s.dump();
  EXPECT_TRUE(s["model"].is_null());
  auto errs = events("load_error");
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_TRUE(errs[0].data["cancelled"].get<bool>());
  // A model serving: the cancelled load brings it back, with its own settings.
  ASSERT_TRUE(service_->load({{"model", path("a.gguf")}, {"parallel", 2}}).ok());
  ASSERT_EQ(settle()["state"], "ready");
  cancel_next_ = true;
  ASSERT_TRUE(service_->load({{"model", path("b.gguf")}}).ok());
  s = settle();
  EXPECT_EQ(s["state"], "ready") << s.dump();
  EXPECT_EQ(s["model"]["path"], path("a.gguf"));
  EXPECT_EQ(s["model"]["settings"]["parallel"], 2);
  EXPECT_FALSE(s.contains("error")) << s.dump();
  EXPECT_EQ(events("load_error").size(), 2u);
  // And the next load is not cancelled by the one before.
  ASSERT_TRUE(service_->load({{"model", path("b.gguf")}}).ok());
  s = settle();
  EXPECT_EQ(s["state"], "ready");
  EXPECT_EQ(s["model"]["path"], path("b.gguf"));
}

// A request the client stops after its first token (the user pressed Stop) is still reported
// with its time to first token, so the Monitor's TTFT chart counts it.
TEST_F(LoadSettingsTest, StoppedRequestStillReportsItsTimeToFirstToken) {
  ASSERT_TRUE(service_->load({{"model", path("a.gguf")}}).ok());
  ASSERT_EQ(settle()["state"], "ready");
  ChatRequest req;
  req.messages = json::array({{{"role", "user"}, {"content", "hello"}}});
  req.sampling.temperature = 0;
  req.sampling.ignore_eos = true;
  req.sampling.max_tokens = 64;
  auto prepared = service_->prepare_chat(req);
  ASSERT_TRUE(prepared.ok());
  int text_events = 0;
  ASSERT_TRUE(service_
                  ->run(*prepared,
                        [&](const GenerationEvent& e) {
                          const bool text = e.kind == GenerationEvent::Kind::kContent ||
                                            e.kind == GenerationEvent::Kind::kReasoning;
                          if (text) ++text_events;
                          return !text;  // gone after the first piece of text
                        })
                  .ok());
  ASSERT_EQ(text_events, 1);
  const auto requests = events("request");
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].data["finish_reason"], "cancelled");
  EXPECT_GT(requests[0].data["ttft_ms"].get<double>(), 0.0);
  EXPECT_GE(requests[0].data["completion_tokens"].get<int64_t>(), 1);
}

// A folder given twice lists its files once (the app showed every file twice when the engine's
// --model folder was also a --model-dir).
TEST_F(LoadSettingsTest, FolderGivenTwiceListsItsFilesOnce) {
  EngineOptions eo;
  eo.threads = 1;
  eo.model_dirs = {dir_.string(), dir_.string() + "/", (dir_ / ".").string()};
  EngineService twice(eo);
  const json files = twice.local_models();
  ASSERT_EQ(files.size(), 2u) << files.dump();
  EXPECT_NE(files[0]["path"], files[1]["path"]);
}

}  // namespace
}  // namespace arc
