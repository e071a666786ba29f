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

namespace arc {

// How a model family marks tool calls (and, for gpt-oss, reasoning).
enum class OutputSyntax : int {
  kPlain = 0,   // content only (plus <think> tags when enabled)
  kQwen = 1,    // <tool_call>{"name":..., "arguments":...}</tool_call>
  kLlama3 = 2,  // a bare {"name":..., "parameters":...} reply, or <|python_tag|>...
  kDeepSeekV3 =
      3,  // <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json ...
  kGptOss = 4,  // Harmony: <|channel|>analysis|commentary|final, to=functions.NAME
};

struct OutputParserOptions {
  OutputSyntax syntax = OutputSyntax::kPlain;
  // Recognise <think>...</think> at the start of the output. Unset: on for plain, Qwen and
  // DeepSeek; off for Llama 3 and gpt-oss (which has channels).
  std::optional<bool> think_tags;
  // The prompt already opened <think> (Qwen3 / DeepSeek R1 templates): output starts as reasoning.
  bool starts_in_reasoning = false;
  size_t max_tool_call_bytes = 1u << 20;  // a call longer than this is reported as malformed
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
// True when a rendered prompt ends inside an opened <think> block (thinking on).
bool prompt_opens_reasoning(std::string_view rendered_prompt);

// Joins adjacent content/reasoning deltas: the chunking-independent form of an event list.
std::vector<OutputEvent> merge_deltas(const std::vector<OutputEvent>& events);

}  // namespace arc
