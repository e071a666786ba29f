// One streamed chat completion against an OpenAI-compatible server, timed the way serving
// benchmarks time it: send -> first token (TTFT), the gaps between streamed chunks (ITL), send
// -> last byte (end-to-end). Works with Arclight, vLLM, llama-server, SGLang and anything else
// that speaks POST /v1/chat/completions with "stream": true.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "arc/status.h"

namespace arc::bench {

using Clock = std::chrono::steady_clock;

struct Endpoint {
  // Base URL: "http://host:port", optionally with a path prefix; a trailing "/v1" is accepted
  // (OpenAI SDK style) and not doubled.
  std::string url;
  std::string api_key;     // sent as "Authorization: Bearer <key>" when not empty
  double timeout_s = 300;  // whole-request limit, connect to last byte
};

// The parts of a base URL that httplib::Client wants.
struct ParsedUrl {
  std::string scheme_host_port;  // "http://127.0.0.1:8080"
  std::string path_prefix;       // "" or "/proxy" (no trailing '/', no "/v1")
};
Result<ParsedUrl> parse_base_url(const std::string& url);

struct ChatParams {
  std::string model;        // may be empty (llama-server serves whatever it loaded)
  nlohmann::json messages;  // OpenAI messages array
  int max_tokens = 450;
  double temperature = 0.6;
  // "ignore_eos": true keeps answers at max_tokens so runs are comparable. vLLM, SGLang and
  // Arclight honour it; servers that do not know the field ignore it (OpenAI-style servers
  // accept unknown fields), in which case answers may stop early.
  bool ignore_eos = true;
};

// The request body: stream on, usage in the last chunk (stream_options.include_usage).
nlohmann::json make_chat_body(const ChatParams& params);

struct RequestTiming {
  bool ok = false;
  std::string error;  // when !ok: what went wrong, for a person ("HTTP 500: ...", "timed out ...")
  Clock::time_point sent;      // just before the request was written
  Clock::time_point finished;  // last byte received (or the failure)
  double ttft_ms = -1;  // send -> first non-empty content or reasoning delta; -1 when none came
  double e2e_ms = 0;    // send -> end of stream
  std::vector<double> itl_ms;  // gaps between consecutive token-carrying chunks
  int64_t prompt_tokens = -1;  // usage.prompt_tokens; -1 when the server sent no usage
  int64_t output_tokens = 0;   // usage.completion_tokens, else the number of token chunks
  int64_t token_chunks = 0;    // chunks that carried content or reasoning text
  bool usage_reported = false;
  // Speculative decoding (usage.completion_tokens_details, where the server reports it).
  int64_t accepted_prediction_tokens = 0;
  int64_t rejected_prediction_tokens = 0;
  std::string finish_reason;
  // Arclight's timings.host_us_per_token (the server's own per-token host work); -1 when the
  // server reports none.
  double host_us_per_token = -1;

  // (e2e - TTFT) / (output_tokens - 1): time per output token after the first; nullopt when
  // fewer than two tokens came.
  std::optional<double> tpot_ms() const;
};

// Streams one chat completion. Never throws and never waits past endpoint.timeout_s (a watchdog
// aborts the socket); cancel (may be null) aborts early when set.
RequestTiming stream_chat(const Endpoint& endpoint, const nlohmann::json& body,
                          const std::atomic<bool>* cancel = nullptr);

// What GET /v1/models says about the server.
struct ServerInfo {
  std::vector<std::string> model_ids;
  // The served context length when the server reports it: meta.context_length (Arclight),
  // max_model_len (vLLM), meta.n_ctx (llama-server); 0 when unknown.
  int64_t context_length = 0;
};
Result<ServerInfo> fetch_server_info(const Endpoint& endpoint, const std::string& model);

}  // namespace arc::bench
