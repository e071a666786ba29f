// The whole method against the fake server: scenarios, concurrency waves running in parallel,
// the prefill measurement, failures, and the CLI's JSON lines.
#include <cstdio>
#include <memory>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "arc/bench/runner.h"
#include "fake_openai_server.h"

namespace arc::bench {
namespace {

using arc::testing::FakeOpenAiServer;
using json = nlohmann::json;

BenchConfig small_config(const std::string& url) {
  BenchConfig c;
  c.endpoint = {url, "", 10};
  c.profile = "custom";
  auto set = parse_prompt_set(
      R"({"name":"mini","prompts":["one two three four","five six seven"]})", "test");
  EXPECT_TRUE(set.ok());
  c.prompt_sets = {*set};
  c.concurrency = {1, 4};
  c.warmup = 1;
  c.runs = 2;
  c.max_tokens = 10;
  c.long_prompt_tokens = 0;
  return c;
}

TEST(BenchRunner, ConcurrencyWaveRunsInParallel) {
  FakeOpenAiServer server;
  server.start();
  std::vector<std::string> progress;
  std::vector<ScenarioResult> delivered;
  BenchCallbacks cb;
  cb.progress = [&](std::string_view l) { progress.emplace_back(l); };
  cb.result = [&](const ScenarioResult& r) { delivered.push_back(r); };
  auto results = run_bench(small_config(server.url()), cb);
  ASSERT_TRUE(results.ok()) << results.status().to_string();
  ASSERT_EQ(results->size(), 2u);
  ASSERT_EQ(delivered.size(), 2u);
  EXPECT_EQ(server.requests.load(), 1 + 2 + 2 * 4);  // warm-up, 2 single runs, 2 waves of 4

  const ScenarioResult& one = (*results)[0];
  EXPECT_EQ(one.scenario, "mini");
  EXPECT_EQ(one.concurrency, 1);
  EXPECT_EQ(one.runs, 2);
  EXPECT_EQ(one.requests, 2);
  EXPECT_EQ(one.errors, 0);
  EXPECT_EQ(one.model, "fake-model");  // from GET /v1/models
  EXPECT_EQ(one.output_tokens.median, 10);
  EXPECT_GE(one.ttft_ms.median, 195);
  EXPECT_LE(one.ttft_ms.median, 350);
  EXPECT_GE(one.tpot_ms.median, 19);
  EXPECT_LE(one.tpot_ms.median, 40);
  EXPECT_EQ(one.itl_ms.count, 2u * 9u);
  // Decode rate per stream = 1000 / TPOT: about 50 tok/s.
  EXPECT_NEAR(one.output_tokens_per_s.max, 1000 / one.tpot_ms.min, 1e-6);
  EXPECT_NEAR(one.output_tokens_per_s.min, 1000 / one.tpot_ms.max, 1e-6);
  EXPECT_GE(one.output_tokens_per_s.median, 25);
  EXPECT_LE(one.output_tokens_per_s.median, 1000.0 / 19);

  const ScenarioResult& four = (*results)[1];
  EXPECT_EQ(four.concurrency, 4);
  EXPECT_EQ(four.requests, 8);
  EXPECT_EQ(four.errors, 0);
  EXPECT_EQ(four.total_output_tokens, 80);
  EXPECT_EQ(server.max_active.load(), 4);
  // One stream takes ~0.38 s for 10 tokens; 4 in parallel take about as long, so the wave's
  // aggregate rate is well above 2.5x a single stream's (it would be 1x if they ran in series).
  EXPECT_GT(four.total_tokens_per_s.median, 2.5 * one.total_tokens_per_s.median);
  EXPECT_LT(four.e2e_ms.median, 2 * one.e2e_ms.median);

  EXPECT_FALSE(progress.empty());
  auto j = to_json(four);
  for (const char* key : {"scenario", "concurrency", "runs", "ttft_ms", "tpot_ms", "itl_ms",
                          "e2e_ms", "output_tokens_per_s", "total_tokens_per_s", "prompt_tokens",
                          "output_tokens", "errors", "server", "model", "started_at"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["ttft_ms"]["median"], four.ttft_ms.median);
  EXPECT_FALSE(j.contains("first_error"));
  EXPECT_NE(format_table(*results).find("mini"), std::string::npos);
}

TEST(BenchRunner, PrefillUsesCalibratedLongPromptsWithFreshPrefixes) {
  FakeOpenAiServer server;
  server.first_delay_ms = 50;
  server.gap_ms = 1;
  server.n_tokens = 4;
  server.context_length = 3000;
  server.start();
  BenchConfig c = small_config(server.url());
  c.concurrency = {1};
  c.warmup = 0;
  c.runs = 3;
  c.long_prompt_tokens = 32768;  // capped by the served context: 3000 - 16 - 256 = 2728
  auto results = run_bench(c, {});
  ASSERT_TRUE(results.ok()) << results.status().to_string();
  ASSERT_EQ(results->size(), 2u);
  const ScenarioResult& p = (*results)[1];
  EXPECT_EQ(p.scenario, "prefill");
  EXPECT_EQ(p.errors, 0);
  EXPECT_EQ(p.requests, 3);
  EXPECT_NEAR(p.prompt_tokens.median, 2728, 2728 * 0.05);
  // prompt tokens / TTFT, checked against the reported medians of both.
  ASSERT_EQ(p.prefill_tokens_per_s.count, 3u);
  EXPECT_NEAR(p.prefill_tokens_per_s.median, p.prompt_tokens.median / (p.ttft_ms.median / 1000),
              p.prefill_tokens_per_s.median * 0.15);
  EXPECT_TRUE(to_json(p).contains("prefill_tokens_per_s"));
  // Calibration + 3 runs after the 3 single-stream runs; no two long prompts share a start.
  auto bodies = server.bodies();
  ASSERT_EQ(bodies.size(), 3u + 4u);
  std::set<std::string> starts;
  for (size_t i = 3; i < bodies.size(); ++i) {
    starts.insert(bodies[i]["messages"][0]["content"].get<std::string>().substr(0, 60));
  }
  EXPECT_EQ(starts.size(), 4u);
  EXPECT_EQ(bodies[3]["max_tokens"], 1);   // calibration
  EXPECT_EQ(bodies[4]["max_tokens"], 16);  // measured
}

TEST(BenchRunner, UnreachableServerStopsWithAClearError) {
  int port;
  {
    FakeOpenAiServer server;
    port = server.start();
  }
  std::vector<ScenarioResult> delivered;
  BenchCallbacks cb;
  cb.result = [&](const ScenarioResult& r) { delivered.push_back(r); };
  auto results = run_bench(small_config("http://127.0.0.1:" + std::to_string(port)), cb);
  ASSERT_FALSE(results.ok());
  EXPECT_NE(results.status().message().find("warm-up"), std::string::npos);
  EXPECT_NE(results.status().message().find("could not connect"), std::string::npos);
  EXPECT_TRUE(delivered.empty());
}

TEST(BenchRunner, ServerErrorsAreCountedPerScenario) {
  FakeOpenAiServer server;
  server.mode = FakeOpenAiServer::Mode::kHttp500;
  server.start();
  BenchConfig c = small_config(server.url());
  c.warmup = 0;
  std::vector<ScenarioResult> delivered;
  BenchCallbacks cb;
  cb.result = [&](const ScenarioResult& r) { delivered.push_back(r); };
  auto results = run_bench(c, cb);
  ASSERT_FALSE(results.ok());  // every request of the first scenario failed: stop there
  ASSERT_EQ(delivered.size(), 1u);
  EXPECT_EQ(delivered[0].requests, 2);
  EXPECT_EQ(delivered[0].errors, 2);
  EXPECT_EQ(delivered[0].first_error, "HTTP 500: boom: the fake failed");
  EXPECT_EQ(delivered[0].ttft_ms.count, 0u);
  auto j = to_json(delivered[0]);
  EXPECT_TRUE(j["ttft_ms"].is_null());
  EXPECT_EQ(j["first_error"], "HTTP 500: boom: the fake failed");
}

TEST(BenchRunner, InvalidConfigIsRefused) {
  BenchConfig c = small_config("http://127.0.0.1:1");
  c.runs = 0;
  auto r = run_bench(c, {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--runs"), std::string::npos);
}

// The CLI: JSON lines on stdout, one per scenario, and the seeds profile guarding its method.
TEST(BenchServeCli, PrintsOneJsonLinePerScenario) {
  FakeOpenAiServer server;
  server.first_delay_ms = 20;
  server.gap_ms = 2;
  server.n_tokens = 8;
  server.start();
  std::string cmd = std::string(ARC_BIN_DIR) + "/arclight-engine bench-serve --url " +
                    server.url() +
                    " --profile custom --prompts prose,code --concurrency 1,2 --warmup 1 --runs 2"
                    " --max-tokens 8 --long-prompt-tokens 0 --timeout-s 10 --json 2>/dev/null";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  ASSERT_TRUE(pipe);
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, pipe.get())) out.append(buf, n);
  int rc = pclose(pipe.release());
  EXPECT_EQ(rc, 0);
  std::istringstream lines(out);
  std::vector<json> rows;
  for (std::string line; std::getline(lines, line);) {
    auto j = json::parse(line, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << "not JSON: " << line;
    rows.push_back(j);
  }
  ASSERT_EQ(rows.size(), 3u);  // prose@1, code@1, prose@2
  EXPECT_EQ(rows[0]["scenario"], "prose");
  EXPECT_EQ(rows[1]["scenario"], "code");
  EXPECT_EQ(rows[2]["scenario"], "prose");
  EXPECT_EQ(rows[2]["concurrency"], 2);
  EXPECT_EQ(rows[0]["output_tokens"], 8);
  EXPECT_EQ(rows[0]["server"], server.url());
  EXPECT_EQ(rows[0]["model"], "fake-model");
  EXPECT_EQ(rows[0]["errors"], 0);
  // The built-in sets really were sent: the code set's system prompt reached the server.
  bool saw_code_system = false;
  for (const auto& b : server.bodies()) {
    if (b["messages"][0]["role"] == "system") saw_code_system = true;
  }
  EXPECT_TRUE(saw_code_system);

  std::string seeds = std::string(ARC_BIN_DIR) + "/arclight-engine bench-serve --url " +
                      server.url() + " --runs 2 >/dev/null 2>&1";
  int seeds_rc = std::system(seeds.c_str());
  EXPECT_EQ(WEXITSTATUS(seeds_rc), 2);  // the seeds method cannot be changed silently
}

}  // namespace
}  // namespace arc::bench
