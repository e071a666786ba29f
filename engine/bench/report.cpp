// bench-serve's output: one JSON line per scenario, and a table for people.
#include <ctime>

#include <fmt/format.h>

#include "arc/bench/runner.h"

namespace arc::bench {

using json = nlohmann::json;

std::string iso_time_now() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

json to_json(const Summary& s) {
  if (s.count == 0) return nullptr;
  return {{"median", s.median}, {"mean", s.mean}, {"min", s.min}, {"max", s.max},
          {"p50", s.median},    {"p90", s.p90},   {"p99", s.p99}, {"count", s.count}};
}

json to_json(const ScenarioResult& r) {
  json j = {
      {"scenario", r.scenario},
      {"concurrency", r.concurrency},
      {"runs", r.runs},
      {"requests", r.requests},
      {"ttft_ms", to_json(r.ttft_ms)},
      {"tpot_ms", to_json(r.tpot_ms)},
      {"itl_ms", to_json(r.itl_ms)},
      {"e2e_ms", to_json(r.e2e_ms)},
      {"output_tokens_per_s", to_json(r.output_tokens_per_s)},
      {"total_tokens_per_s",
       r.total_tokens_per_s.count > 0 ? json(r.total_tokens_per_s.median) : json(nullptr)},
      {"total_tokens_per_s_stats", to_json(r.total_tokens_per_s)},
      {"prompt_tokens", r.prompt_tokens.count > 0 ? json(r.prompt_tokens.median) : json(nullptr)},
      {"output_tokens", r.output_tokens.count > 0 ? json(r.output_tokens.median) : json(nullptr)},
      {"total_output_tokens", r.total_output_tokens},
      {"token_counts", r.usage_reported ? "usage" : "chunks"},
      {"errors", r.errors},
      {"server", r.server},
      {"model", r.model},
      {"profile", r.profile},
      {"temperature", r.temperature},
      {"max_tokens", r.max_tokens},
      {"started_at", r.started_at}};
  if (r.scenario == "prefill") j["prefill_tokens_per_s"] = to_json(r.prefill_tokens_per_s);
  if (r.host_us_per_token.count > 0) j["server_host_us_per_token"] = to_json(r.host_us_per_token);
  if (!r.first_error.empty()) j["first_error"] = r.first_error;
  if (r.draft_tokens > 0) {
    j["speculative"] = {{"draft_tokens", r.draft_tokens},
                        {"accepted_tokens", r.accepted_tokens},
                        {"acceptance_rate", static_cast<double>(r.accepted_tokens) /
                                                static_cast<double>(r.draft_tokens)}};
  }
  return j;
}

namespace {

// "48.2 (45.1-50.3)": median with min and max, the seeds' way of quoting a series.
std::string med_range(const Summary& s, int decimals) {
  if (s.count == 0) return "-";
  return fmt::format("{:.{}f} ({:.{}f}-{:.{}f})", s.median, decimals, s.min, decimals, s.max,
                     decimals);
}

std::string med(const Summary& s, int decimals) {
  return s.count == 0 ? "-" : fmt::format("{:.{}f}", s.median, decimals);
}

}  // namespace

std::string format_table(const std::vector<ScenarioResult>& results) {
  std::string out = fmt::format("{:<10} {:>4} {:>7} {:>22} {:>8} {:>9} {:>9} {:>22} {:>10}\n",
                                "scenario", "conc", "ok/req", "TTFT ms med (min-max)", "TPOT ms",
                                "ITL p90", "e2e s", "tok/s/stream (min-max)", "total t/s");
  for (const auto& r : results) {
    Summary e2e_s = r.e2e_ms;
    e2e_s.median /= 1000;
    out += fmt::format("{:<10} {:>4} {:>7} {:>22} {:>8} {:>9} {:>9} {:>22} {:>10}\n", r.scenario,
                       r.concurrency, fmt::format("{}/{}", r.requests - r.errors, r.requests),
                       med_range(r.ttft_ms, 0), med(r.tpot_ms, 1),
                       r.itl_ms.count ? fmt::format("{:.1f}", r.itl_ms.p90) : "-", med(e2e_s, 2),
                       med_range(r.output_tokens_per_s, 1), med(r.total_tokens_per_s, 1));
    if (r.scenario == "prefill" && r.prefill_tokens_per_s.count > 0) {
      out += fmt::format("{:<10} prefill {} prompt tokens at {} tok/s (median, min-max)\n", "",
                         med(r.prompt_tokens, 0), med_range(r.prefill_tokens_per_s, 0));
    }
    if (r.host_us_per_token.count > 0 && r.tpot_ms.count > 0) {
      out += fmt::format(
          "{:<10} server host work {:.0f} us/token (median; max {:.0f}): {:.1f}% of "
          "TPOT\n",
          "", r.host_us_per_token.median, r.host_us_per_token.max,
          r.host_us_per_token.median / (10.0 * r.tpot_ms.median));
    }
    if (r.draft_tokens > 0) {
      out += fmt::format(
          "{:<10} speculative: {:.0f}% of {} drafted tokens accepted\n", "",
          100.0 * static_cast<double>(r.accepted_tokens) / static_cast<double>(r.draft_tokens),
          r.draft_tokens);
    }
    if (!r.first_error.empty()) {
      out += fmt::format("{:<10} {} errors; first: {}\n", "", r.errors, r.first_error);
    }
  }
  return out;
}

}  // namespace arc::bench
