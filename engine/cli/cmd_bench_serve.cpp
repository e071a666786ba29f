// arclight-engine bench-serve: measure any OpenAI-compatible server (Arclight, vLLM,
// llama-server, ...) with the seed documents' method. Progress goes to stderr; with --json each
// scenario's result is one JSON line on stdout (the app's Benchmark page reads them) and the
// table goes to stderr, otherwise the table goes to stdout.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "arc/bench/runner.h"
#include "commands.h"

namespace arc::cli {
namespace {

struct BenchServeOptions {
  std::string url;
  std::string api_key;
  std::string model;
  std::string profile = "seeds";
  std::vector<std::string> prompts = {"prose", "code", "json"};
  std::vector<int> concurrency = {1, 4, 6, 8};
  int warmup = 3;
  int runs = 6;
  int max_tokens = 450;
  double temperature = 0.6;
  int64_t long_prompt_tokens = 32768;
  double timeout_s = 300;
  bool json = false;
};

int run_bench_serve(const BenchServeOptions& o, const CLI::App& cmd) {
  if (o.profile != "seeds" && o.profile != "custom") {
    std::fprintf(stderr, "error: --profile must be 'seeds' or 'custom', not '%s'\n",
                 o.profile.c_str());
    return 2;
  }
  // The seeds profile is a fixed method so figures compare across engines and with the seed
  // documents; changing the method needs --profile custom.
  if (o.profile == "seeds") {
    for (const char* flag :
         {"--warmup", "--runs", "--max-tokens", "--temperature", "--concurrency"}) {
      if (cmd.count(flag) > 0) {
        std::fprintf(stderr,
                     "error: %s changes the seeds method (3 warm-ups, 6 runs, 450 tokens, "
                     "temperature 0.6, 1/4/6/8 streams); add --profile custom to change it\n",
                     flag);
        return 2;
      }
    }
  }
  bench::BenchConfig cfg;
  cfg.endpoint.url = o.url;
  cfg.endpoint.api_key = o.api_key;
  cfg.endpoint.timeout_s = o.timeout_s;
  cfg.model = o.model;
  cfg.profile = o.profile;
  cfg.concurrency = o.concurrency;
  cfg.warmup = o.warmup;
  cfg.runs = o.runs;
  cfg.max_tokens = o.max_tokens;
  cfg.temperature = o.temperature;
  cfg.long_prompt_tokens = o.long_prompt_tokens;
  for (const auto& name : o.prompts) {
    auto set = bench::load_prompt_set(name);
    if (!set.ok()) {
      std::fprintf(stderr, "error: %s\n", set.status().message().c_str());
      return 2;
    }
    cfg.prompt_sets.push_back(std::move(*set));
  }
  if (Status s = bench::validate(cfg); !s.ok()) {
    std::fprintf(stderr, "error: %s\n", s.message().c_str());
    return 2;
  }

  bench::BenchCallbacks cb;
  cb.progress = [](std::string_view line) {
    std::fprintf(stderr, "[bench] %.*s\n", static_cast<int>(line.size()), line.data());
    std::fflush(stderr);
  };
  std::string started_at = bench::iso_time_now();
  if (o.json) {
    cb.result = [](const bench::ScenarioResult& r) {
      std::string line =
          bench::to_json(r).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      std::fprintf(stdout, "%s\n", line.c_str());
      std::fflush(stdout);
    };
  }
  std::vector<bench::ScenarioResult> shown;
  auto collect = cb.result;
  cb.result = [&](const bench::ScenarioResult& r) {
    shown.push_back(r);
    if (collect) collect(r);
  };

  auto results = bench::run_bench(cfg, cb);
  if (!shown.empty()) {
    std::string table = bench::format_table(shown);
    std::fprintf(o.json ? stderr : stdout, "\n%s", table.c_str());
  }
  if (!results.ok()) {
    if (o.json) {
      // A fatal line the Benchmark page can show: it has "error" and no "scenario".
      nlohmann::json err = {{"error", results.status().message()},
                            {"server", o.url},
                            {"model", o.model},
                            {"profile", o.profile},
                            {"started_at", started_at}};
      std::fprintf(stdout, "%s\n",
                   err.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    }
    std::fprintf(stderr, "error: %s\n", results.status().message().c_str());
    return 1;
  }
  for (const auto& r : *results) {
    if (r.errors > 0) return 1;  // results printed, but the run was not clean
  }
  return 0;
}

}  // namespace

void add_bench_serve_command(CLI::App& app, CliContext& ctx) {
  auto opts = std::make_shared<BenchServeOptions>();
  auto* cmd = app.add_subcommand(
      "bench-serve",
      "Benchmark an OpenAI-compatible server (Arclight, vLLM, llama-server): TTFT, TPOT, "
      "inter-token latency, tokens/s over a concurrency sweep, prefill rate");
  cmd->add_option("--url", opts->url, "Server base URL, e.g. http://127.0.0.1:8080")->required();
  cmd->add_option("--api-key", opts->api_key, "Bearer token for the server");
  cmd->add_option("--model", opts->model, "Model name to request (default: the server's first)");
  cmd->add_option("--profile", opts->profile,
                  "seeds (the fixed method of the seed documents) or custom (flags change it)")
      ->capture_default_str();
  cmd->add_option("--prompts", opts->prompts,
                  "Prompt sets: prose, code, json or paths to prompt-set .json files")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--concurrency", opts->concurrency,
                  "Streams per wave; every prompt set runs at the first, the first set at the rest")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--warmup", opts->warmup, "Unmeasured requests first")->capture_default_str();
  cmd->add_option("--runs", opts->runs, "Measured waves per scenario")->capture_default_str();
  cmd->add_option("--max-tokens", opts->max_tokens, "Output tokens per answer")
      ->capture_default_str();
  cmd->add_option("--temperature", opts->temperature, "Sampling temperature")
      ->capture_default_str();
  cmd->add_option("--long-prompt-tokens", opts->long_prompt_tokens,
                  "Prompt size of the prefill measurement, capped by the served context; 0 skips "
                  "it")
      ->capture_default_str();
  cmd->add_option("--timeout-s", opts->timeout_s, "Limit for each request, connect to last byte")
      ->capture_default_str();
  cmd->add_flag("--json", opts->json, "Results as JSON lines on stdout (the table goes to stderr)");
  cmd->callback([opts, cmd, &ctx] { ctx.exit_code = run_bench_serve(*opts, *cmd); });
}

}  // namespace arc::cli
