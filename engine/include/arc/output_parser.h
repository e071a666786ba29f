// Parsing model output back into structure, streaming-safe: reasoning kept apart from content,
// tool calls turned into name + JSON arguments. Text arrives in arbitrary chunks (a chunk may end
// inside a tag or inside a multi-byte character); the parser never emits text that might still
// turn out to be the start of a tag, and every chunking of the same text gives the same events
// once adjacent deltas of one kind are joined. A malformed tool call is reported as an error
// event carrying the raw text, never dropped.
//
//   arc::OutputParser p({arc::OutputSyntax::kQwen});
//   for (auto& chunk : stream) for (auto& ev : p.feed(chunk)) handle(ev);
//   for (auto& ev : p.finish()) handle(ev);
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace arc {

// How a model family marks tool calls (and, for gpt-oss, reasoning).
enum class OutputSyntax : int {
  kPlain = 0,   // content only (plus <think> tags when enabled)
  kQwen = 1,    // <tool_call>{"name":..., "arguments":...}</tool_call>
  kLlama3 = 2,  // a bare {"name":..., "parameters":...} reply, or <|python_tag|>...
  kDeepSeekV3 =
      3,  // <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json ...
  kGptOss = 4,  // Harmony: <|channel|>analysis|commentary|final, to=functions.NAME
  // <tool_call>NAME\n<arg_key>K</arg_key>\n<arg_value>V</arg_value>\n</tool_call> (GLM-4.5/4.6)
  kGlm45 = 5,
  // <minimax:tool_call>\n<invoke name="N">\n<parameter name="K">V</parameter>\n</invoke>\n
  // </minimax:tool_call>, with <think> blocks anywhere in the reply (MiniMax-M2)
  kMiniMaxM2 = 6,
  // <tool_call>\n<function=N>\n<parameter=K>\nV\n</parameter>\n</function>\n</tool_call>
  kQwen3Coder = 7,
  // <|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:IDX
  // <|tool_call_argument_begin|>{...}<|tool_call_end|>...<|tool_calls_section_end|> (Kimi-K2)
  kKimiK2 = 8,
};

// "qwen", "glm-4.5", ...: for logs and /engine/status.
const char* output_syntax_name(OutputSyntax syntax);

struct OutputParserOptions {
  OutputSyntax syntax = OutputSyntax::kPlain;
  // Recognise <think>...</think> at the start of the output. Unset: on for plain, Qwen and
  // DeepSeek; off for Llama 3 and gpt-oss (which has channels).
  std::optional<bool> think_tags;
  // The prompt already opened <think> (Qwen3 / DeepSeek R1 templates): output starts as reasoning.
  bool starts_in_reasoning = false;
  size_t max_tool_call_bytes = 1u << 20;  // a call longer than this is reported as malformed
  // The request's tools (OpenAI form: [{"type":"function","function":{"name","parameters"}}]).
  // XML-style calls (GLM, MiniMax, Qwen3-Coder) write every argument as text: a value is kept as
  // a string unless its parameter's schema says it is not one, and then read as JSON.
  nlohmann::ordered_json tools;
};

struct OutputEvent {
  enum class Kind : int {
    kContent = 0,        // text: a content delta
    kReasoning = 1,      // text: a reasoning delta
    kToolCall = 2,       // name + arguments (JSON text); text: the raw call
    kToolCallError = 3,  // text: the raw text of the malformed call; error: what is wrong
  };
  Kind kind;
  std::string text;
  std::string name;
  std::string arguments;
  std::string error;

  bool operator==(const OutputEvent& o) const {
    return kind == o.kind && text == o.text && name == o.name && arguments == o.arguments &&
           error == o.error;
  }
};

class OutputParser {
 public:
  explicit OutputParser(OutputParserOptions options = {});
  ~OutputParser();
  OutputParser(OutputParser&&) noexcept;
  OutputParser& operator=(OutputParser&&) noexcept;

  // Adds generated text; returns the events that are now certain.
  std::vector<OutputEvent> feed(std::string_view chunk);
  // The output is complete: flushes held text and reports unterminated calls.
  std::vector<OutputEvent> finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The syntax a chat template's model speaks, guessed from the template's own markers.
OutputSyntax output_syntax_for_template(std::string_view template_source);
// Whether a control token with this text must reach the parser of `syntax` (its markers are
// special tokens in some vocabularies); other control tokens are hidden from the text.
bool output_syntax_reads_token(OutputSyntax syntax, std::string_view token_text);
// True when a rendered prompt ends inside an opened <think> block (thinking on).
bool prompt_opens_reasoning(std::string_view rendered_prompt);

// Joins adjacent content/reasoning deltas: the chunking-independent form of an event list.
std::vector<OutputEvent> merge_deltas(const std::vector<OutputEvent>& events);

}  // namespace arc
