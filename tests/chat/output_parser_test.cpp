// Output parsing: expected events are written by hand from each family's documented format;
// every chunking (each single split point, and byte by byte) must give the same events once
// adjacent deltas are joined, and no delta may end inside a UTF-8 character.
#include <gtest/gtest.h>

#include "arc/output_parser.h"
#include "output_parser_check.h"

namespace {

using namespace arc_test;

TEST(OutputParser, PlainTextPassesThrough) {
  check_every_chunking(opts(OutputSyntax::kPlain), "Zażółć gęślą jaźń < not a tag >",
                       {content("Zażółć gęślą jaźń < not a tag >")});
}

TEST(OutputParser, QwenThinkingThenContentAndTwoCalls) {
  const std::string text =
      "<think>\nThe user wants weather; I will call the tool.\n</think>\n\nLet me check.\n"
      "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Kraków\"}}\n"
      "</tool_call>\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>";
  check_every_chunking(
      opts(OutputSyntax::kQwen), text,
      {reasoning("The user wants weather; I will call the tool."), content("Let me check.\n"),
       call("get_weather", "{\"city\":\"Kraków\"}"), call("get_time", "{}")});
}

TEST(OutputParser, PromptOpenedThinkStartsInReasoning) {
  OutputParserOptions opt = opts(OutputSyntax::kQwen);
  opt.starts_in_reasoning = true;
  check_every_chunking(opt, "\nthinking é</think>\n\nanswer",
                       {reasoning("thinking é"), content("answer")});
  EXPECT_TRUE(arc::prompt_opens_reasoning("<|im_start|>assistant\n<think>\n"));
  EXPECT_FALSE(arc::prompt_opens_reasoning("<|im_start|>assistant\n<think>\n\n</think>\n\n"));
}

TEST(OutputParser, MalformedQwenCallsAreReported) {
  check_every_chunking(
      opts(OutputSyntax::kQwen), "a<tool_call>{\"name\": \"x\", </tool_call>b",
      {content("a"), error("<tool_call>{\"name\": \"x\", </tool_call>"), content("b")});
  check_every_chunking(opts(OutputSyntax::kQwen), "<tool_call>{\"arguments\": {}}</tool_call>",
                       {error("<tool_call>{\"arguments\": {}}</tool_call>")});
  // Cut off before the closing tag: still reported with everything the model wrote.
  check_every_chunking(opts(OutputSyntax::kQwen), "ok <tool_call>{\"name\": \"x\"",
                       {content("ok "), error("<tool_call>{\"name\": \"x\"")});
}

TEST(OutputParser, HeldPartialTagIsReleasedWhenItIsNotATag) {
  check_every_chunking(opts(OutputSyntax::kQwen), "x <tool_ca", {content("x <tool_ca")});
  check_every_chunking(opts(OutputSyntax::kQwen), "<thin", {content("<thin")});
}

TEST(OutputParser, Llama3JsonCall) {
  check_every_chunking(
      opts(OutputSyntax::kLlama3),
      " {\"name\": \"get_weather\", \"parameters\": {\"city\": \"Oslo\", \"n\": {\"a\": [1]}}}",
      {call("get_weather", "{\"city\":\"Oslo\",\"n\":{\"a\":[1]}}")});
  check_every_chunking(
      opts(OutputSyntax::kLlama3),
      "{\"name\": \"a\", \"parameters\": {}}; {\"name\": \"b\", \"parameters\": {\"s\": \"}\"}}",
      {call("a", "{}"), call("b", "{\"s\":\"}\"}")});
}

TEST(OutputParser, Llama3JsonThatIsNotACallIsContent) {
  check_every_chunking(opts(OutputSyntax::kLlama3), "{\"answer\": 42} done",
                       {content("{\"answer\": 42} done")});
  check_every_chunking(opts(OutputSyntax::kLlama3), "{\"name\": \"x\", \"parameters\": {",
                       {error("{\"name\": \"x\", \"parameters\": {")});
}

TEST(OutputParser, Llama3PythonTag) {
  check_every_chunking(opts(OutputSyntax::kLlama3),
                       "<|python_tag|>{\"name\": \"f\", \"parameters\": {\"x\": 1}}",
                       {call("f", "{\"x\":1}")});
  check_every_chunking(opts(OutputSyntax::kLlama3), "Sure.<|python_tag|>print(1)<|eom_id|>",
                       {content("Sure."), call("python", "{\"code\":\"print(1)\"}")});
}

TEST(OutputParser, DeepSeekV3Calls) {
  const std::string text =
      "Checking.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n"
      "```json\n{\"city\": \"Łódź\"}\n```<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>function"
      "<｜tool▁sep｜>get_time\n```json\n{}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
  check_every_chunking(
      opts(OutputSyntax::kDeepSeekV3), text,
      {content("Checking."), call("get_weather", "{\"city\":\"Łódź\"}"), call("get_time", "{}")});
}

TEST(OutputParser, DeepSeekMalformedCallReported) {
  const std::string bad =
      "<｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{oops\n```<｜tool▁call▁end｜>";
  check_every_chunking(opts(OutputSyntax::kDeepSeekV3),
                       "<｜tool▁calls▁begin｜>" + bad + "<｜tool▁calls▁end｜>", {error(bad)});
}

TEST(OutputParser, GptOssChannels) {
  const std::string text =
      "<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>commentary "
      "to=functions.get_weather <|constrain|>json<|message|>{\"city\":\"Bergen\"}<|call|>";
  check_every_chunking(opts(OutputSyntax::kGptOss), text,
                       {reasoning("Need weather."), call("get_weather", "{\"city\":\"Bergen\"}")});
  check_every_chunking(
      opts(OutputSyntax::kGptOss),
      "<|channel|>analysis<|message|>Simple.<|end|><|start|>assistant<|channel|>final<|message|>"
      "Hello ✓<|return|>",
      {reasoning("Simple."), content("Hello ✓")});
  // <|call|> is a stop token: the text may end right after the arguments.
  check_every_chunking(
      opts(OutputSyntax::kGptOss),
      "<|start|>assistant to=functions.f<|channel|>commentary json<|message|>{\"a\":1}",
      {call("f", "{\"a\":1}")});
  check_every_chunking(opts(OutputSyntax::kGptOss),
                       "<|channel|>commentary to=functions.f<|message|>not json<|call|>",
                       {error("to=functions.f<|message|>not json")});
}

TEST(OutputParser, SyntaxFromTemplate) {
  EXPECT_EQ(arc::output_syntax_for_template("{{ '<tool_call>' }}"), OutputSyntax::kQwen);
  EXPECT_EQ(arc::output_syntax_for_template("<|start_header_id|>"), OutputSyntax::kLlama3);
  EXPECT_EQ(arc::output_syntax_for_template("<｜tool▁calls▁begin｜>"), OutputSyntax::kDeepSeekV3);
  EXPECT_EQ(arc::output_syntax_for_template("<|channel|>final"), OutputSyntax::kGptOss);
  EXPECT_EQ(arc::output_syntax_for_template("<start_of_turn>"), OutputSyntax::kPlain);
}

}  // namespace
