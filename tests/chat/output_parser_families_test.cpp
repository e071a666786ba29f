// Output parsing of the tool-call formats of GLM-4.5/4.6, MiniMax-M2, Qwen3-Coder, Kimi-K2 and
// DeepSeek-V3.1, and more of gpt-oss's Harmony. Expected events are written by hand from each
// family's published chat template (the calls as the template writes them into the history);
// every chunking must give the same events (output_parser_check.h).
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "arc/output_parser.h"
#include "output_parser_check.h"

namespace {

using namespace arc_test;
using json = nlohmann::ordered_json;

// get_weather(city: string, days: integer, opts: object, unit: "c"|"f"); get_time().
json weather_tools() {
  return json::parse(R"([
    {"type": "function", "function": {"name": "get_weather", "parameters": {
      "type": "object", "properties": {
        "city": {"type": "string"}, "days": {"type": "integer"}, "opts": {"type": "object"},
        "unit": {"type": "string", "enum": ["c", "f"]}}}}},
    {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}}])");
}

OutputParserOptions with_tools(OutputSyntax s, bool starts_in_reasoning = false) {
  OutputParserOptions o = opts(s);
  o.tools = weather_tools();
  o.starts_in_reasoning = starts_in_reasoning;
  return o;
}

TEST(OutputParserGlm, ThinkingContentAndTwoTypedCalls) {
  const std::string text =
      "\n<think>Need weather.</think>\nChecking both.\n<tool_call>get_weather\n"
      "<arg_key>city</arg_key>\n<arg_value>Kraków</arg_value>\n<arg_key>days</arg_key>\n"
      "<arg_value>3</arg_value>\n</tool_call>\n<tool_call>get_weather\n<arg_key>city</arg_key>\n"
      "<arg_value>42</arg_value>\n<arg_key>opts</arg_key>\n<arg_value>{\"a\": [1, 2]}</arg_value>\n"
      "</tool_call>";
  // "42" stays a string (city is a string); days and opts are read as JSON by their schema.
  check_every_chunking(with_tools(OutputSyntax::kGlm45), text,
                       {reasoning("Need weather."), content("Checking both.\n"),
                        call("get_weather", R"({"city":"Kraków","days":3})"),
                        call("get_weather", R"({"city":"42","opts":{"a":[1,2]}})")});
}

TEST(OutputParserGlm, ValuesWithoutSchemaStayStrings) {
  // An undeclared tool, a value that does not parse as its schema's type, a call without
  // arguments (with and without a newline after the name).
  check_every_chunking(with_tools(OutputSyntax::kGlm45),
                       "<tool_call>lookup\n<arg_key>n</arg_key>\n<arg_value>5</arg_value>\n"
                       "</tool_call><tool_call>get_weather\n<arg_key>days</arg_key>\n<arg_value>"
                       "three</arg_value>\n</tool_call><tool_call>get_time\n</tool_call>"
                       "<tool_call>get_time</tool_call>",
                       {call("lookup", R"({"n":"5"})"), call("get_weather", R"({"days":"three"})"),
                        call("get_time", "{}"), call("get_time", "{}")});
}

TEST(OutputParserGlm, MalformedCallsAreReportedWithTheirText) {
  const std::string bad =
      "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_val>x</arg_value>\n</tool_call>";
  check_every_chunking(with_tools(OutputSyntax::kGlm45), "a" + bad + "b",
                       {content("a"), error(bad), content("b")});
  const std::string twice =
      "<tool_call>f\n<arg_key>k</arg_key><arg_value>1</arg_value><arg_key>k</arg_key>"
      "<arg_value>2</arg_value></tool_call>";
  check_every_chunking(with_tools(OutputSyntax::kGlm45), twice, {error(twice)});
  check_every_chunking(with_tools(OutputSyntax::kGlm45),
                       "<tool_call>\n<arg_key>k</arg_key>"
                       "<arg_value>1</arg_value></tool_call>",
                       {error("<tool_call>\n<arg_key>k</arg_key><arg_value>1</arg_value>"
                              "</tool_call>")});
  // Cut off inside the call: everything the model wrote comes back.
  check_every_chunking(with_tools(OutputSyntax::kGlm45), "x<tool_call>get_weather\n<arg_key>ci",
                       {content("x"), error("<tool_call>get_weather\n<arg_key>ci")});
}

TEST(OutputParserQwen3Coder, CallsWithTypedAndMultiLineValues) {
  const std::string text =
      "I'll check.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nNew York\n"
      "</parameter>\n<parameter=days>\n2\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n"
      "<function=get_weather>\n<parameter=city>\nline 1\nline 2\n</parameter>\n</function>\n"
      "</tool_call>";
  check_every_chunking(
      with_tools(OutputSyntax::kQwen3Coder), text,
      {content("I'll check.\n"), call("get_weather", R"({"city":"New York","days":2})"),
       call("get_weather", R"({"city":"line 1\nline 2"})")});
}

TEST(OutputParserQwen3Coder, MalformedCallsAreReported) {
  const std::string no_close =
      "<tool_call>\n<function=get_weather>\n<parameter=city>\nX\n</function>\n</tool_call>";
  check_every_chunking(with_tools(OutputSyntax::kQwen3Coder), no_close, {error(no_close)});
  const std::string json_style = "<tool_call>\n{\"name\": \"get_time\"}\n</tool_call>";
  check_every_chunking(with_tools(OutputSyntax::kQwen3Coder), "ok " + json_style,
                       {content("ok "), error(json_style)});
}

TEST(OutputParserMiniMax, PromptOpenedThinkThenContentAndTwoInvokes) {
  const std::string text =
      "The user wants weather.\n</think>\n\nLet me look.\n<minimax:tool_call>\n"
      "<invoke name=\"get_weather\">\n<parameter name=\"city\">Oslo</parameter>\n"
      "<parameter name=\"days\">2</parameter>\n</invoke>\n<invoke name=\"get_weather\">\n"
      "<parameter name=\"city\">Bergen</parameter>\n</invoke>\n</minimax:tool_call>";
  check_every_chunking(with_tools(OutputSyntax::kMiniMaxM2, true), text,
                       {reasoning("The user wants weather."), content("Let me look.\n"),
                        call("get_weather", R"({"city":"Oslo","days":2})"),
                        call("get_weather", R"({"city":"Bergen"})")});
}

TEST(OutputParserMiniMax, InterleavedThinkBlocks) {
  check_every_chunking(
      with_tools(OutputSyntax::kMiniMaxM2, true),
      "plan</think>\nStep one.\n<think>\nreconsider ✓\n</think>\nStep two.",
      {reasoning("plan"), content("Step one.\n"), reasoning("reconsider ✓"), content("Step two.")});
}

TEST(OutputParserMiniMax, MalformedInvokeAfterAGoodOne) {
  const std::string bad = "<invoke name=\"get_weather\">\n<parameter name=\"city\">X</invoke>\n";
  check_every_chunking(
      with_tools(OutputSyntax::kMiniMaxM2),
      "<minimax:tool_call>\n<invoke name=\"get_time\">\n</invoke>\n" + bad + "</minimax:tool_call>",
      {call("get_time", "{}"), error(bad)});
  const std::string empty = "<minimax:tool_call>\n</minimax:tool_call>";
  check_every_chunking(with_tools(OutputSyntax::kMiniMaxM2), empty, {error(empty)});
}

TEST(OutputParserKimi, SectionWithTwoCalls) {
  const std::string text =
      "Sure.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
      "<|tool_call_argument_begin|>{\"city\": \"Oslo\"}<|tool_call_end|><|tool_call_begin|>"
      "functions.get_time:1<|tool_call_argument_begin|>{}<|tool_call_end|>"
      "<|tool_calls_section_end|>";
  check_every_chunking(
      opts(OutputSyntax::kKimiK2), text,
      {content("Sure."), call("get_weather", R"({"city":"Oslo"})"), call("get_time", "{}")});
  const std::string bad =
      "<|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{oops<|tool_call_end|>";
  check_every_chunking(opts(OutputSyntax::kKimiK2),
                       "<|tool_calls_section_begin|>" + bad + "<|tool_calls_section_end|>",
                       {error(bad)});
}

TEST(OutputParserDeepSeekV31, ReasoningThenCall) {
  const std::string text =
      "Paris, then.</think>Calling.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather"
      "<｜tool▁sep｜>{\"city\": \"Paris\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
  OutputParserOptions o = opts(OutputSyntax::kDeepSeekV3);
  o.starts_in_reasoning = true;
  check_every_chunking(
      o, text,
      {reasoning("Paris, then."), content("Calling."), call("get_weather", R"({"city":"Paris"})")});
}

TEST(OutputParserHarmony, ReasoningPreambleTwoCallsAndFinal) {
  // The recipient before or after the channel; <|constrain|> in the header.
  const std::string text =
      "<|channel|>analysis<|message|>Two cities.<|end|><|start|>assistant<|channel|>commentary"
      "<|message|>Looking both up.<|end|><|start|>assistant<|channel|>commentary "
      "to=functions.get_weather <|constrain|>json<|message|>{\"city\":\"Oslo\"}<|call|>"
      "<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>"
      "{\"city\":\"Rome\"}<|call|><|start|>assistant<|channel|>final<|message|>Done.<|return|>";
  check_every_chunking(opts(OutputSyntax::kGptOss), text,
                       {reasoning("Two cities."), content("Looking both up."),
                        call("get_weather", R"({"city":"Oslo"})"),
                        call("get_weather", R"({"city":"Rome"})"), content("Done.")});
}

std::string template_source(const char* name) {
  std::ifstream f(std::filesystem::path(ARC_TEST_DATA_DIR) / "chat_templates" / name /
                  "chat_template.jinja");
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(OutputParserFamilies, SyntaxFromTheRealTemplates) {
  EXPECT_EQ(arc::output_syntax_for_template(template_source("gptoss")), OutputSyntax::kGptOss);
  EXPECT_EQ(arc::output_syntax_for_template(template_source("glm46")), OutputSyntax::kGlm45);
  EXPECT_EQ(arc::output_syntax_for_template(template_source("minimax_m2")),
            OutputSyntax::kMiniMaxM2);
  EXPECT_EQ(arc::output_syntax_for_template(template_source("qwen3_coder")),
            OutputSyntax::kQwen3Coder);
  EXPECT_EQ(arc::output_syntax_for_template(template_source("kimi_k2")), OutputSyntax::kKimiK2);
  EXPECT_EQ(arc::output_syntax_for_template(template_source("deepseek_v31")),
            OutputSyntax::kDeepSeekV3);
  EXPECT_EQ(arc::output_syntax_for_template(template_source("qwen3")), OutputSyntax::kQwen);
  EXPECT_EQ(arc::output_syntax_for_template(template_source("llama3")), OutputSyntax::kLlama3);
  EXPECT_STREQ(arc::output_syntax_name(OutputSyntax::kGlm45), "glm-4.5");
}

TEST(OutputParserFamilies, MarkerTokensReachTheParser) {
  EXPECT_TRUE(arc::output_syntax_reads_token(OutputSyntax::kGlm45, "<arg_key>"));
  EXPECT_TRUE(arc::output_syntax_reads_token(OutputSyntax::kMiniMaxM2, "<minimax:tool_call>"));
  EXPECT_TRUE(arc::output_syntax_reads_token(OutputSyntax::kKimiK2, "<|tool_call_begin|>"));
  EXPECT_TRUE(arc::output_syntax_reads_token(OutputSyntax::kGptOss, "<|channel|>"));
  EXPECT_TRUE(arc::output_syntax_reads_token(OutputSyntax::kPlain, "<think>"));
  EXPECT_FALSE(arc::output_syntax_reads_token(OutputSyntax::kGlm45, "<|user|>"));
  EXPECT_FALSE(arc::output_syntax_reads_token(OutputSyntax::kQwen, "<|im_end|>"));
}

}  // namespace
