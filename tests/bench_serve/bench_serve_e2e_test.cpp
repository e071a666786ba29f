// bench-serve against the real engine: `arclight-engine serve` on a generated model, a short
// custom run (1 warm-up, 2 runs, 16 tokens, 1 and 2 streams, a small prefill), JSON lines back.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e/engine_process.h"

namespace arc {
namespace {

using json = nlohmann::json;

TEST(BenchServeE2E, MeasuresTheRealEngine) {
  const std::string bin = std::string(ARC_BIN_DIR) + "/arclight-engine";
  const std::string model =
      (std::filesystem::temp_directory_path() / "arc_bench_serve_e2e.gguf").string();
  ASSERT_EQ(testing::run_command({bin, "--log-level", "warn", "make-test-model", "--family",
                                  "qwen3moe", "--out", model, "--layers", "2", "--seed", "3"}),
            0);
  testing::EngineProcess engine;
  ASSERT_TRUE(
      engine.start({"--model", model, "--ctx-size", "1024", "--parallel", "4", "--threads", "2"}))
      << engine.error();
  std::string cmd = bin + " bench-serve --url http://127.0.0.1:" + std::to_string(engine.port()) +
                    " --profile custom --prompts prose --concurrency 1,2 --warmup 1 --runs 2"
                    " --max-tokens 16 --long-prompt-tokens 600 --timeout-s 60 --json 2>/dev/null";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  ASSERT_TRUE(pipe);
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, pipe.get())) out.append(buf, n);
  int rc = pclose(pipe.release());
  engine.stop();
  std::filesystem::remove(model);
  EXPECT_EQ(WEXITSTATUS(rc), 0) << out;

  std::istringstream lines(out);
  std::vector<json> rows;
  for (std::string line; std::getline(lines, line);) {
    auto j = json::parse(line, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << "not JSON: " << line;
    rows.push_back(j);
  }
  ASSERT_EQ(rows.size(), 3u) << out;  // prose@1, prose@2, prefill
  EXPECT_EQ(rows[0]["concurrency"], 1);
  EXPECT_EQ(rows[1]["concurrency"], 2);
  EXPECT_EQ(rows[2]["scenario"], "prefill");
  for (const auto& r : rows) {
    EXPECT_EQ(r["errors"], 0) << r.dump();
    EXPECT_GT(r["ttft_ms"]["median"].get<double>(), 0) << r.dump();
    EXPECT_EQ(r["token_counts"], "usage");  // the engine reports usage when asked
  }
  // ignore_eos holds every answer at max_tokens, counted from usage.
  EXPECT_EQ(rows[0]["output_tokens"], 16);
  EXPECT_EQ(rows[1]["total_output_tokens"], 2 * 2 * 16);
  EXPECT_GT(rows[2]["prompt_tokens"].get<double>(), 300);
  EXPECT_GT(rows[2]["prefill_tokens_per_s"]["median"].get<double>(), 0);
}

}  // namespace
}  // namespace arc
