#include "arc/bench/runner.h"

#include <algorithm>
#include <latch>
#include <random>
#include <thread>

#include <fmt/format.h>

namespace arc::bench {
namespace {

using json = nlohmann::json;

// Chat templates add a few hundred tokens around the long prompt; stay this far below the
// served context so the request is not refused.
constexpr int64_t kTemplateReserve = 256;
constexpr int64_t kMinLongPromptTokens = 256;
// English prose is about 4 characters per token in the tokenizers of current models; the
// calibration request measures the real ratio.
constexpr double kCharsPerTokenGuess = 4.0;

// Per-request and per-wave samples of one scenario.
struct Samples {
  std::vector<double> ttft, tpot, itl, e2e, otps, prompt, output, prefill, wave_rate, host_us;
  int requests = 0;
  int errors = 0;
  std::string first_error;
  int64_t total_output = 0;
  int64_t accepted = 0, rejected = 0;  // speculative decoding's drafts
  bool usage_reported = true;

  void add(const RequestTiming& t) {
    ++requests;
    if (!t.ok) {
      ++errors;
      if (first_error.empty()) first_error = t.error;
      return;
    }
    ttft.push_back(t.ttft_ms);
    e2e.push_back(t.e2e_ms);
    itl.insert(itl.end(), t.itl_ms.begin(), t.itl_ms.end());
    if (auto tp = t.tpot_ms(); tp && *tp > 0) {
      tpot.push_back(*tp);
      otps.push_back(1000.0 / *tp);
    }
    output.push_back(static_cast<double>(t.output_tokens));
    if (t.host_us_per_token >= 0) host_us.push_back(t.host_us_per_token);
    total_output += t.output_tokens;
    accepted += t.accepted_prediction_tokens;
    rejected += t.rejected_prediction_tokens;
    usage_reported = usage_reported && t.usage_reported;
    if (t.prompt_tokens >= 0) {
      prompt.push_back(static_cast<double>(t.prompt_tokens));
      if (t.ttft_ms > 0) prefill.push_back(t.prompt_tokens / (t.ttft_ms / 1000.0));
    }
  }

  // One wave's aggregate rate: all output tokens / (first send .. last byte).
  void add_wave(const std::vector<RequestTiming>& wave) {
    if (wave.empty()) return;
    auto first = wave.front().sent;
    auto last = wave.front().finished;
    int64_t tokens = 0;
    for (const auto& t : wave) {
      first = std::min(first, t.sent);
      last = std::max(last, t.finished);
      if (t.ok) tokens += t.output_tokens;
    }
    double wall_s = std::chrono::duration<double>(last - first).count();
    if (tokens > 0 && wall_s > 0) wave_rate.push_back(static_cast<double>(tokens) / wall_s);
  }
};

std::string random_nonce(std::mt19937_64& rng) {
  return fmt::format("{:016x}", rng());
}

class Runner {
 public:
  Runner(const BenchConfig& cfg, const BenchCallbacks& cb)
      : cfg_(cfg), cb_(cb), rng_(std::random_device{}()) {}

  Result<std::vector<ScenarioResult>> run();

 private:
  void progress(const std::string& line) const {
    if (cb_.progress) cb_.progress(line);
  }
  bool cancelled() const { return cb_.cancel != nullptr && cb_.cancel->load(); }

  json body_for(const json& messages, int max_tokens) const {
    ChatParams p;
    p.model = model_;
    p.messages = messages;
    p.max_tokens = max_tokens;
    p.temperature = cfg_.temperature;
    p.ignore_eos = cfg_.ignore_eos;
    return make_chat_body(p);
  }

  // Sends the bodies at once (one thread each) and waits for all of them.
  std::vector<RequestTiming> wave(const std::vector<json>& bodies) const {
    std::vector<RequestTiming> out(bodies.size());
    std::latch start(static_cast<std::ptrdiff_t>(bodies.size()));
    std::vector<std::thread> threads;
    threads.reserve(bodies.size());
    for (size_t i = 0; i < bodies.size(); ++i) {
      threads.emplace_back([&, i] {
        start.arrive_and_wait();
        out[i] = stream_chat(cfg_.endpoint, bodies[i], cb_.cancel);
      });
    }
    for (auto& t : threads) t.join();
    return out;
  }

  ScenarioResult make_result(const std::string& name, int concurrency, int waves,
                             const std::string& started_at, const Samples& s) const;
  Status deliver(const ScenarioResult& r, std::vector<ScenarioResult>& all) const;
  Status warm_up();
  ScenarioResult chat_scenario(const PromptSet& set, int concurrency);
  ScenarioResult prefill_scenario();

  // The long prompt's size: the asked size, capped by the served context when it is known.
  int64_t long_prompt_target() const {
    int64_t target = cfg_.long_prompt_tokens;
    if (context_length_ > 0) {
      target = std::min(target, context_length_ - cfg_.prefill_max_tokens - kTemplateReserve);
    }
    return target;
  }

  const BenchConfig& cfg_;
  const BenchCallbacks& cb_;
  std::string model_;
  int64_t context_length_ = 0;
  std::mt19937_64 rng_;
  size_t prompt_cursor_ = 0;  // rotates through a set so streams of a wave differ
};

ScenarioResult Runner::make_result(const std::string& name, int concurrency, int waves,
                                   const std::string& started_at, const Samples& s) const {
  ScenarioResult r;
  r.scenario = name;
  r.concurrency = concurrency;
  r.runs = waves;
  r.requests = s.requests;
  r.errors = s.errors;
  r.first_error = s.first_error;
  r.ttft_ms = summarize(s.ttft);
  r.tpot_ms = summarize(s.tpot);
  r.itl_ms = summarize(s.itl);
  r.e2e_ms = summarize(s.e2e);
  r.output_tokens_per_s = summarize(s.otps);
  r.total_tokens_per_s = summarize(s.wave_rate);
  r.prompt_tokens = summarize(s.prompt);
  r.output_tokens = summarize(s.output);
  r.prefill_tokens_per_s = summarize(s.prefill);
  r.host_us_per_token = summarize(s.host_us);
  r.total_output_tokens = s.total_output;
  r.draft_tokens = s.accepted + s.rejected;
  r.accepted_tokens = s.accepted;
  r.usage_reported = s.usage_reported;
  r.server = cfg_.endpoint.url;
  r.model = model_;
  r.profile = cfg_.profile;
  r.started_at = started_at;
  r.temperature = cfg_.temperature;
  r.max_tokens = name == "prefill" ? cfg_.prefill_max_tokens : cfg_.max_tokens;
  return r;
}

Status Runner::deliver(const ScenarioResult& r, std::vector<ScenarioResult>& all) const {
  all.push_back(r);
  if (cb_.result) cb_.result(r);
  if (cancelled()) return arc::cancelled("the benchmark was cancelled");
  if (r.requests > 0 && r.errors == r.requests) {
    return unavailable(
        fmt::format("stopping: all {} requests of scenario '{}' (concurrency {}) "
                    "failed; first error: {}",
                    r.requests, r.scenario, r.concurrency, r.first_error));
  }
  return ok_status();
}

Status Runner::warm_up() {
  const PromptSet& set = cfg_.prompt_sets.front();
  int failed = 0;
  std::string first_error;
  for (int i = 0; i < cfg_.warmup && !cancelled(); ++i) {
    const json& conv = set.conversations[static_cast<size_t>(i) % set.conversations.size()];
    auto t = stream_chat(cfg_.endpoint, body_for(conv, cfg_.max_tokens), cb_.cancel);
    if (t.ok) {
      progress(fmt::format("warm-up {}/{}: {} tokens in {:.1f} s", i + 1, cfg_.warmup,
                           t.output_tokens, t.e2e_ms / 1000));
    } else {
      ++failed;
      if (first_error.empty()) first_error = t.error;
      progress(fmt::format("warm-up {}/{} failed: {}", i + 1, cfg_.warmup, t.error));
    }
  }
  if (cancelled()) return arc::cancelled("the benchmark was cancelled");
  if (cfg_.warmup > 0 && failed == cfg_.warmup) {
    return unavailable(fmt::format("all {} warm-up requests to {} failed; first error: {}",
                                   cfg_.warmup, cfg_.endpoint.url, first_error));
  }
  return ok_status();
}

ScenarioResult Runner::chat_scenario(const PromptSet& set, int concurrency) {
  std::string started_at = iso_time_now();
  Samples s;
  int waves = 0;
  for (int run = 0; run < cfg_.runs && !cancelled(); ++run) {
    std::vector<json> bodies;
    for (int i = 0; i < concurrency; ++i) {
      const json& conv = set.conversations[prompt_cursor_++ % set.conversations.size()];
      bodies.push_back(body_for(conv, cfg_.max_tokens));
    }
    auto results = wave(bodies);
    ++waves;
    for (const auto& t : results) s.add(t);
    s.add_wave(results);
    int wave_errors = 0;
    int64_t tokens = 0;
    for (const auto& t : results) {
      if (t.ok)
        tokens += t.output_tokens;
      else
        ++wave_errors;
    }
    std::string head = fmt::format("{} c={} run {}/{}:", set.name, concurrency, run + 1, cfg_.runs);
    if (concurrency == 1 && results[0].ok) {
      const auto& t = results[0];
      auto tp = t.tpot_ms();
      progress(fmt::format("{} {} tokens, TTFT {:.0f} ms, {:.1f} tok/s", head, t.output_tokens,
                           t.ttft_ms, tp && *tp > 0 ? 1000.0 / *tp : 0.0));
    } else if (concurrency == 1) {
      progress(fmt::format("{} failed: {}", head, results[0].error));
    } else {
      double rate = s.wave_rate.empty() || tokens == 0 ? 0.0 : s.wave_rate.back();
      progress(fmt::format("{} {} tokens, {:.1f} tok/s total, {} errors", head, tokens, rate,
                           wave_errors));
    }
  }
  return make_result(set.name, concurrency, waves, started_at, s);
}

ScenarioResult Runner::prefill_scenario() {
  std::string started_at = iso_time_now();
  Samples s;
  int64_t target = long_prompt_target();
  auto text = builtin_long_context();
  if (!text.ok()) {
    RequestTiming failed;
    failed.error = text.status().message();
    s.add(failed);
    return make_result("prefill", 1, 0, started_at, s);
  }
  // Calibrate characters per token with one unmeasured request (it is also the long path's
  // warm-up); halve the size when the server refuses the prompt as too long.
  auto chars = static_cast<size_t>(static_cast<double>(target) * kCharsPerTokenGuess);
  for (int attempt = 0; attempt < 4 && !cancelled(); ++attempt) {
    std::string prompt = build_long_prompt(*text, chars, "calibration-" + random_nonce(rng_));
    json messages = json::array({{{"role", "user"}, {"content", prompt}}});
    auto t = stream_chat(cfg_.endpoint, body_for(messages, 1), cb_.cancel);
    if (t.ok && t.prompt_tokens > 0) {
      double ratio = static_cast<double>(chars) / static_cast<double>(t.prompt_tokens);
      chars = static_cast<size_t>(static_cast<double>(target) * ratio * 0.99);
      progress(fmt::format("prefill calibration: {} prompt tokens in {:.1f} s; aiming at {} tokens",
                           t.prompt_tokens, t.ttft_ms / 1000, target));
      break;
    }
    if (t.ok) {
      progress("prefill calibration: the server reports no usage; using the 4 chars/token guess");
      break;
    }
    bool too_long = t.error.rfind("HTTP 400", 0) == 0 || t.error.rfind("HTTP 413", 0) == 0;
    if (!too_long || attempt == 3) {
      s.add(t);
      return make_result("prefill", 1, 0, started_at, s);
    }
    chars /= 2;
    target /= 2;
    progress(fmt::format("prefill calibration refused ({}); retrying at about {} tokens", t.error,
                         target));
  }
  int waves = 0;
  for (int run = 0; run < cfg_.runs && !cancelled(); ++run) {
    std::string prompt = build_long_prompt(*text, chars, random_nonce(rng_));
    json messages = json::array({{{"role", "user"}, {"content", prompt}}});
    auto t = stream_chat(cfg_.endpoint, body_for(messages, cfg_.prefill_max_tokens), cb_.cancel);
    ++waves;
    s.add(t);
    s.add_wave({t});
    if (t.ok) {
      progress(fmt::format("prefill run {}/{}: {} prompt tokens, TTFT {:.0f} ms, {:.0f} tok/s",
                           run + 1, cfg_.runs, t.prompt_tokens, t.ttft_ms,
                           s.prefill.empty() ? 0.0 : s.prefill.back()));
    } else {
      progress(fmt::format("prefill run {}/{} failed: {}", run + 1, cfg_.runs, t.error));
    }
  }
  return make_result("prefill", 1, waves, started_at, s);
}

Result<std::vector<ScenarioResult>> Runner::run() {
  ARC_RETURN_IF_ERROR(validate(cfg_));
  model_ = cfg_.model;
  auto info = fetch_server_info(cfg_.endpoint, cfg_.model);
  if (info.ok()) {
    context_length_ = info->context_length;
    if (model_.empty() && !info->model_ids.empty()) model_ = info->model_ids.front();
    progress(fmt::format("server {}: model '{}', context {}", cfg_.endpoint.url, model_,
                         context_length_ > 0 ? std::to_string(context_length_) : "unknown"));
  } else {
    progress("warning: " + info.status().message());
  }
  std::vector<ScenarioResult> all;
  ARC_RETURN_IF_ERROR(warm_up());

  for (const auto& set : cfg_.prompt_sets) {
    ARC_RETURN_IF_ERROR(deliver(chat_scenario(set, cfg_.concurrency.front()), all));
  }
  for (size_t i = 1; i < cfg_.concurrency.size(); ++i) {
    ARC_RETURN_IF_ERROR(deliver(chat_scenario(cfg_.prompt_sets.front(), cfg_.concurrency[i]), all));
  }
  if (cfg_.long_prompt_tokens > 0) {
    if (long_prompt_target() < kMinLongPromptTokens) {
      progress(
          fmt::format("skipping prefill: the served context ({} tokens) is too short for a "
                      "long-prompt measurement",
                      context_length_));
    } else {
      ARC_RETURN_IF_ERROR(deliver(prefill_scenario(), all));
    }
  }
  return all;
}

}  // namespace

Status validate(const BenchConfig& c) {
  if (c.endpoint.url.empty()) return invalid_argument("--url is required");
  // The Result itself: the macro would keep a reference to .status() of a dead temporary.
  ARC_RETURN_IF_ERROR(parse_base_url(c.endpoint.url));
  if (c.prompt_sets.empty()) return invalid_argument("--prompts names no prompt set");
  for (const auto& s : c.prompt_sets) {
    if (s.conversations.empty()) return invalid_argument("prompt set '" + s.name + "' is empty");
  }
  if (c.concurrency.empty()) return invalid_argument("--concurrency names no stream count");
  for (int n : c.concurrency) {
    if (n < 1 || n > 1024) return invalid_argument("--concurrency values must be 1..1024");
  }
  if (c.warmup < 0) return invalid_argument("--warmup must be 0 or more");
  if (c.runs < 1) return invalid_argument("--runs must be at least 1");
  if (c.max_tokens < 1) return invalid_argument("--max-tokens must be at least 1");
  if (c.temperature < 0 || c.temperature > 2) {
    return invalid_argument("--temperature must be between 0 and 2");
  }
  if (c.long_prompt_tokens < 0) return invalid_argument("--long-prompt-tokens must be 0 or more");
  if (!(c.endpoint.timeout_s > 0)) return invalid_argument("--timeout-s must be positive");
  return ok_status();
}

Result<std::vector<ScenarioResult>> run_bench(const BenchConfig& config,
                                              const BenchCallbacks& callbacks) {
  Runner runner(config, callbacks);
  return runner.run();
}

}  // namespace arc::bench
