// The seam between the HTTP server and the engine. The server parses and validates requests in
// each API's dialect, then talks to an InferenceService; the engine (scheduler, model, tokenizer,
// chat templates) implements it. Tests drive the server with a fake service.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "arc/status.h"

namespace arc {

enum class EngineState : int { kIdle = 0, kLoading = 1, kReady = 2, kError = 3 };
std::string_view engine_state_name(EngineState s);

struct SamplingParams {
  float temperature = 1.0f;  // 0: greedy
  int top_k = 0;             // 0: off
  float top_p = 1.0f;
  float min_p = 0.0f;
  float repetition_penalty = 1.0f;
  float presence_penalty = 0.0f;
  float frequency_penalty = 0.0f;
  std::optional<uint64_t> seed;
  int max_tokens = -1;  // -1: up to the context
  std::vector<std::string> stop;
  int top_logprobs = -1;  // -1: no logprobs; 0..20: chosen token (+ that many alternatives)
  bool ignore_eos = false;
};

// An image from a chat request: the encoded file as the client sent it (base64 decoded). Its
// format was sniffed from the bytes and checked against the declared media type; its pixels are
// decoded later, by the engine (arc/vision_image.h).
struct ImageInput {
  std::string media_type;      // image/png, image/jpeg or image/webp (the sniffed format)
  std::vector<uint8_t> bytes;  // the encoded file
};

// Structured output: what the generated text must be. The engine compiles it to a grammar
// (engine/grammar) and masks every sampled token with it; a schema it cannot enforce is refused
// (kInvalidArgument naming the keyword), never ignored.
struct OutputConstraint {
  enum class Kind : int {
    kNone = 0,
    kJsonObject = 1,  // any JSON object (response_format json_object)
    kJsonSchema = 2,  // a document valid against `schema`
    kToolCall = 3,    // one call of one of `tools`, in the model family's tool-call syntax
  };
  struct Tool {
    std::string name;
    nlohmann::ordered_json parameters;  // JSON Schema of the arguments; null: any object
    bool strict = false;  // false: a schema that cannot be enforced falls back to any object
  };
  Kind kind = Kind::kNone;
  nlohmann::ordered_json schema;  // kJsonSchema
  std::vector<Tool> tools;        // kToolCall
  // kToolCall: the model may also answer in text ("auto" with strict tools); only what follows
  // the family's call marker is constrained.
  bool optional = false;
  std::string where;  // the request field, for error messages
};

// A chat request after the dialect was parsed. `messages` is normalised to the OpenAI shape:
// [{role, content (string or [{type:text|image_url, ...}]), tool_calls?, tool_call_id?, name?}].
struct ChatRequest {
  nlohmann::json messages = nlohmann::json::array();
  nlohmann::json tools = nlohmann::json::array();  // OpenAI "tools" entries
  std::optional<bool> enable_thinking;
  // "low", "medium" or "high": the template variable reasoning_effort (gpt-oss); unset: the
  // template's default.
  std::optional<std::string> reasoning_effort;
  // Tokens of reasoning after which the engine closes the <think> block the template opened
  // (llama-server's thinking_budget_tokens, Anthropic's thinking.budget_tokens); unset: none.
  std::optional<int64_t> reasoning_budget;
  OutputConstraint constraint;  // response_format, or a forced (tool_choice) call
  SamplingParams sampling;
  std::string client;  // "openai" or "anthropic": for logs and metrics only
  // Images in the order their parts appear in `messages`. The server moves each data URI out of
  // its part: the k-th image part becomes {"type":"image_url","image_url":{"url":""},
  // "arc_image_index":k} (templates still see an image part; no megabytes of base64 in JSON).
  std::vector<ImageInput> images;
};

struct CompletionRequest {
  std::string prompt;
  std::optional<std::vector<int32_t>> prompt_tokens;  // instead of text
  bool echo = false;  // return the prompt (and its logprobs) before the completion
  SamplingParams sampling;
  OutputConstraint constraint;  // response_format (an extension of the legacy API)
};

struct Usage {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t cached_tokens = 0;  // prompt tokens served from the prefix cache
  // Speculative decoding: drafted tokens verified for this request, and those accepted.
  int64_t draft_tokens = 0;
  int64_t accepted_tokens = 0;
};

struct Timings {
  double queue_ms = 0;
  double ttft_ms = 0;  // from arrival to the first generated token
  double prefill_tokens_per_s = 0;
  double decode_tokens_per_s = 0;
  double total_ms = 0;
  // CPU time a generated token costs the request's own thread after the scheduler made it:
  // detokenizing, stop strings, output and tool-call parsing, logprob text, and the event sink
  // (JSON encoding of the chunk and its write). Runs beside the next forward step.
  double host_us_per_token = 0;
};

struct TokenLogprob {
  std::string token;  // its text (may be a partial UTF-8 sequence: see bytes)
  std::vector<uint8_t> bytes;
  float logprob = 0;
  std::vector<std::pair<std::string, float>> top;  // alternatives, best first
};

struct ToolCall {
  std::string id;
  std::string name;
  std::string arguments;  // JSON text
  std::string error;      // non-empty: the model produced a malformed call (raw text in arguments)
};

struct GenerationEvent {
  enum class Kind : int { kContent = 0, kReasoning = 1, kToolCall = 2, kFinish = 3 };
  Kind kind = Kind::kContent;
  std::string text;                    // kContent / kReasoning delta
  std::vector<TokenLogprob> logprobs;  // tokens behind this delta (when requested)
  ToolCall tool_call;                  // kToolCall
  // kFinish:
  std::string finish_reason;  // stop | length | tool_calls | cancelled | error
  std::string matched_stop;   // the stop string that ended it, when finish_reason == "stop"
  Usage usage;
  Timings timings;
  Status error;  // set when finish_reason == "error"
};

// Called for every event, in order, from the service's threads. Returning false means the
// client went away: the service cancels the request and frees what it held.
using EventSink = std::function<bool(const GenerationEvent&)>;

struct ModelInfo {
  std::string id;  // shown to clients as the model name
  std::string path;
  std::string architecture;
  int64_t context_length = 0;
  bool vision = false;
  bool tools = false;
  bool reasoning = false;
  std::string speculative = "none";  // the drafter decoding uses: none, ngram, draft, mtp
};

// Published on /engine/events. `type` is one of: load_progress, load_done, load_error, unloaded,
// stats, request, error, state.
struct EngineEvent {
  std::string type;
  nlohmann::json data;
};
using EngineEventSink = std::function<void(const EngineEvent&)>;

// A validated, tokenized request, ready to run. The service subclasses it.
class PreparedRequest {
 public:
  virtual ~PreparedRequest() = default;
  int64_t prompt_tokens = 0;
  // Prompt tokens and their text, for echo in the legacy completions API.
  std::vector<TokenLogprob> prompt_logprobs;
  std::string prompt_text;
};

class InferenceService {
 public:
  virtual ~InferenceService() = default;

  virtual EngineState state() const = 0;
  virtual std::optional<ModelInfo> model() const = 0;

  // Two steps so that a refused request gets a proper 4xx before any byte is streamed:
  // prepare() tokenizes and checks the request (no model loaded, prompt longer than the
  // context, images to a model without vision, ...); run() then blocks until the request
  // finished, was cancelled or failed, and its last event is kFinish.
  virtual Result<std::shared_ptr<PreparedRequest>> prepare_chat(const ChatRequest& request) = 0;
  virtual Result<std::shared_ptr<PreparedRequest>> prepare_completion(
      const CompletionRequest& request) = 0;
  virtual Status run(const std::shared_ptr<PreparedRequest>& request, const EventSink& sink) = 0;
  // Prompt tokens of a chat request, without the context check.
  virtual Result<int64_t> count_chat_tokens(const ChatRequest& request) = 0;

  // Control plane.
  virtual nlohmann::json status() const = 0;
  virtual Status load(const nlohmann::json& options) = 0;  // starts loading; progress as events
  virtual Status unload() = 0;
  // Stops a load in progress (POST /engine/load/cancel): the model that was serving before it
  // comes back. Services that load instantly keep this default.
  virtual Status cancel_load() { return failed_precondition("no model is loading"); }
  virtual nlohmann::json local_models() const = 0;
  virtual Result<nlohmann::json> fit(const nlohmann::json& request) const = 0;
  virtual std::string metrics_text() const = 0;  // Prometheus text exposition

  // Cluster page: every rank's node probe with the rank -> host mapping (GET /engine/cluster),
  // and a timed all-reduce across the ranks (POST /engine/link-test). Services without ranks
  // keep these defaults.
  virtual Result<nlohmann::json> cluster() {
    return unimplemented("this engine does not report its cluster");
  }
  virtual Result<nlohmann::json> link_test(const nlohmann::json& request) {
    (void)request;
    return unimplemented("this engine has no link test");
  }

  // The server subscribes once; the service calls it for every engine event.
  virtual void set_event_sink(EngineEventSink sink) = 0;
};

}  // namespace arc
