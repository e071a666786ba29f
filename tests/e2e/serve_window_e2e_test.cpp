// End to end: serve keeps gpt-oss's sliding-window layers in a windowed KV pool (only the last
// window per sequence) and answers exactly what `run` answers with the full pool; the status
// route shows both pools.
#include <filesystem>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "e2e/engine_process.h"

namespace arc {
namespace {

using nlohmann::json;
using testing::EngineProcess;

TEST(ServeWindowE2E, WindowedPoolAnswersAsTheFullPoolAndShowsInStatus) {
  const std::string bin = std::string(ARC_BIN_DIR) + "/arclight-engine";
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("arc_e2e_gptoss_window_" + std::to_string(::getpid()) + ".gguf"))
                               .string();
  // Window 8: the prompts below are far longer.
  ASSERT_EQ(testing::run_command({bin, "--log-level", "warn", "make-test-model", "--family",
                                  "gpt-oss", "--layers", "4", "--sliding-window", "8", "--seed",
                                  "3", "--out", path}),
            0);
  std::vector<int32_t> prompt;
  std::string ids;
  for (int i = 0; i < 45; ++i) {
    prompt.push_back(3 + (i * 37) % 250);
    ids += (i ? "," : "") + std::to_string(prompt.back());
  }
  // The full pool's answer (run sizes its pool for the whole context, no windowed pool).
  int rc = -1;
  const std::string out =
      testing::capture({bin, "--log-level", "warn", "run", "--model", path, "--prompt-ids", ids,
                        "--max-tokens", "20", "--json", "--threads", "2"},
                       &rc);
  ASSERT_EQ(rc, 0) << out;
  const json want = json::parse(out);

  EngineProcess engine;
  // Chunked prefill: 16 tokens a step, so the prompt crosses the window inside and between
  // chunks; two parallel sequences.
  ASSERT_TRUE(engine.start({"--model", path, "--ctx-size", "256", "--parallel", "2", "--threads",
                            "2", "--max-batch-tokens", "16"}))
      << engine.error();
  httplib::Client c("127.0.0.1", engine.port());
  c.set_read_timeout(60, 0);
  const json body = {{"prompt", prompt}, {"max_tokens", 20}, {"temperature", 0}};
  for (int round = 0; round < 2; ++round) {
    auto r = c.Post("/v1/completions", body.dump(), "application/json");
    ASSERT_EQ(r->status, 200) << r->body;
    const json j = json::parse(r->body);
    EXPECT_EQ(j["choices"][0]["text"], want["text"]) << "round " << round;
    // The second reuses the prefix past the window: its last window stayed cached.
    const int64_t cached = j["usage"]["prompt_tokens_details"]["cached_tokens"];
    EXPECT_EQ(cached, round == 0 ? 0 : 32) << j.dump();
  }
  json s;
  for (int i = 0; i < 100; ++i) {
    s = json::parse(c.Get("/engine/status")->body);
    if (s["kv"]["blocks_used"] == 0 && s["kv"]["window"]["blocks_used"] == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(s["kv"].contains("window")) << s.dump();
  const json& w = s["kv"]["window"];
  EXPECT_EQ(w["tokens"], 8);
  // Windowed pool (blocks of 16): 2 x (2 sequences x (ceil(7 / 16) + 2) + ceil(16 / 16) + 2) =
  // 18 blocks, against 32 in the main pool (256 tokens x 2 sequences).
  EXPECT_EQ(w["blocks_total"], 18);
  EXPECT_EQ(s["kv"]["blocks_total"], 32);
  EXPECT_EQ(w["blocks_used"], 0);
  EXPECT_EQ(s["kv"]["blocks_used"], 0);
  EXPECT_GT(w["blocks_cached"].get<int>(), 0) << "finished windows stay cached for reuse";
  // Bytes: the 2 full layers over 512 positions and the 2 sliding ones over 288, each position
  // K and V of the generator's KV heads (F16).
  const uint64_t kv_bytes = s["kv"]["bytes"];
  const uint64_t window_bytes = w["bytes"];
  EXPECT_EQ((kv_bytes - window_bytes) * 288, window_bytes * 512)
      << "full and windowed layers take the same bytes per position";
  engine.stop();
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace arc
