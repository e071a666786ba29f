// bench-serve's method: warm-up, then scenarios of measured waves, summarised per scenario.
//
// Scenarios, in order:
//   1. every prompt set at the first listed concurrency (usually 1 stream),
//   2. the first prompt set at each further concurrency (the sweep: 4, 6, 8 streams),
//   3. "prefill": a long prompt (long_prompt_tokens, capped by the served context length), its
//      prompt tokens / TTFT; each request starts with a fresh nonce so no prefix cache helps.
// A scenario runs `runs` waves; a wave sends `concurrency` requests at once and its aggregate
// rate is all output tokens of the wave / its wall time (first send to last byte).
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "arc/bench/client.h"
#include "arc/bench/prompts.h"
#include "arc/bench/stats.h"
#include "arc/status.h"

namespace arc::bench {

struct BenchConfig {
  Endpoint endpoint;
  std::string model;              // empty: the first model GET /v1/models lists
  std::string profile = "seeds";  // recorded in the results
  std::vector<PromptSet> prompt_sets;
  std::vector<int> concurrency = {1, 4, 6, 8};
  int warmup = 3;  // requests before any measurement, sequential, first prompt set
  int runs = 6;    // measured waves per scenario
  int max_tokens = 450;
  double temperature = 0.6;
  bool ignore_eos = true;
  int64_t long_prompt_tokens = 32768;  // 0 skips the prefill scenario
  int prefill_max_tokens = 16;         // output tokens of each long-prompt request
};

// Checks the numbers of a config; the message names the flag to change.
Status validate(const BenchConfig& config);

struct ScenarioResult {
  std::string scenario;  // prompt-set name, or "prefill"
  int concurrency = 1;
  int runs = 0;      // waves measured
  int requests = 0;  // requests sent in those waves
  int errors = 0;    // requests that failed
  std::string first_error;
  Summary ttft_ms, tpot_ms, itl_ms, e2e_ms;
  Summary output_tokens_per_s;  // per request: (output tokens - 1) / (e2e - TTFT) = 1000/TPOT
  Summary total_tokens_per_s;   // per wave: all output tokens / wave wall time
  Summary prompt_tokens, output_tokens;  // per request
  Summary prefill_tokens_per_s;          // per request: prompt tokens / TTFT (prefill scenario)
  Summary host_us_per_token;  // per request, when the server reports it (Arclight's timings)
  int64_t total_output_tokens = 0;
  // Speculative decoding, from the usage blocks: drafts verified and accepted (0: none).
  int64_t draft_tokens = 0, accepted_tokens = 0;
  bool usage_reported = true;  // false: some token counts are streamed chunks, not usage
  std::string server, model, profile, started_at;
  double temperature = 0;
  int max_tokens = 0;
};

// Where results go as they are made; all callbacks are optional and run on the calling thread.
struct BenchCallbacks {
  std::function<void(std::string_view line)> progress;
  std::function<void(const ScenarioResult&)> result;
  const std::atomic<bool>* cancel = nullptr;
};

// Runs the whole method. Per-request failures are counted in the results; an error Status means
// the run could not start or had to stop (server unreachable during warm-up, every request of a
// scenario failed, cancelled) and says why; the results made before it were already delivered.
Result<std::vector<ScenarioResult>> run_bench(const BenchConfig& config,
                                              const BenchCallbacks& callbacks);

// One result as the JSON line bench-serve prints (schema in docs/bench-serve.md).
nlohmann::json to_json(const ScenarioResult& r);
nlohmann::json to_json(const Summary& s);

// The human-readable table of a run.
std::string format_table(const std::vector<ScenarioResult>& results);

// "2026-11-29T21:09:10Z"
std::string iso_time_now();

}  // namespace arc::bench
