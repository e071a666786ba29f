// Forced tool calls in each family's syntax: the grammar must accept the call exactly as the
// family's real chat template writes it into the history (the reference renderings in
// tests/data/chat_templates), refuse wrong names, missing required arguments and values of the
// wrong type, and whatever it accepts must parse (OutputParser) into that call.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "arc/output_parser.h"
#include "grammar/matcher.h"
#include "sched/tool_call_grammar.h"

namespace arc {
namespace {

using nlohmann::ordered_json;

std::string rendered_roundtrip(const char* family) {
  std::ifstream f(std::filesystem::path(ARC_TEST_DATA_DIR) / "chat_templates" / family /
                  "cases.json");
  std::stringstream ss;
  ss << f.rdbuf();
  const ordered_json cases = ordered_json::parse(ss.str());
  for (const auto& c : cases["cases"]) {
    if (c["name"] == "tool_call_roundtrip") return c["rendered"].get<std::string>();
  }
  return "";
}

// The call text between (and including) the markers, from a rendering.
std::string call_in(const std::string& rendered, const std::string& open,
                    const std::string& close) {
  size_t a = rendered.rfind(open);
  size_t b = rendered.find(close, a);
  if (a == std::string::npos || b == std::string::npos) return "";
  return rendered.substr(a, b + close.size() - a);
}

struct Forced {
  std::shared_ptr<const grammar::Grammar> g;
  bool accepts(std::string_view doc) const {
    grammar::Matcher m(g);
    return m.advance(doc) && m.complete();
  }
};

// get_weather(city: string of at most 10 characters (required), unit: "c"|"f", days: integer,
// note: any text), as the fixtures' tool plus a typed and an unbounded parameter.
OutputConstraint weather_call() {
  OutputConstraint c;
  c.kind = OutputConstraint::Kind::kToolCall;
  c.tools.push_back({"get_weather", ordered_json::parse(R"({"type": "object", "properties": {
      "city": {"type": "string", "maxLength": 10}, "unit": {"enum": ["c", "f"]},
      "days": {"type": "integer"}, "note": {"type": "string"}}, "required": ["city"]})"),
                     true});
  return c;
}

Forced forced(OutputSyntax syntax) {
  grammar::GrammarBuilder b;
  grammar::JsonSchemaCompiler jc(b);
  auto call = tool_call_grammar(b, jc, weather_call(), syntax, false);
  EXPECT_TRUE(call.ok()) << call.status().message();
  const grammar::Sym root = b.rule("root", {grammar::one(*call)});
  return {std::make_shared<const grammar::Grammar>(std::move(b).build(root.arg))};
}

void expect_parses(OutputSyntax syntax, const std::string& doc, const std::string& args) {
  OutputParserOptions o;
  o.syntax = syntax;
  o.tools = ordered_json::array(
      {{{"type", "function"},
        {"function",
         {{"name", "get_weather"}, {"parameters", weather_call().tools[0].parameters}}}}});
  OutputParser p(o);
  auto ev = p.feed(doc);
  for (auto& e : p.finish()) ev.push_back(e);
  ASSERT_EQ(ev.size(), 1u) << doc;
  EXPECT_EQ(ev[0].kind, OutputEvent::Kind::kToolCall) << ev[0].error;
  EXPECT_EQ(ev[0].name, "get_weather");
  EXPECT_EQ(ev[0].arguments, args);
}

TEST(ToolCallGrammar, Glm) {
  Forced f = forced(OutputSyntax::kGlm45);
  const std::string from_template =
      call_in(rendered_roundtrip("glm46"), "<tool_call>", "</tool_call>");
  ASSERT_FALSE(from_template.empty());
  EXPECT_TRUE(f.accepts(from_template)) << from_template;
  const std::string typed =
      "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>New\nYork</arg_value>\n"
      "<arg_key>unit</arg_key>\n<arg_value>f</arg_value>\n<arg_key>days</arg_key>\n"
      "<arg_value>3</arg_value>\n</tool_call>";
  EXPECT_TRUE(f.accepts(typed));
  expect_parses(OutputSyntax::kGlm45, typed, R"({"city":"New\nYork","unit":"f","days":3})");
  // Bounded text: at most 10 characters, no '<'; unbounded text takes anything but its end tag.
  EXPECT_FALSE(
      f.accepts("<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>"
                "Ouagadougou</arg_value>\n</tool_call>"));
  EXPECT_FALSE(
      f.accepts("<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>a<b"
                "</arg_value>\n</tool_call>"));
  const std::string note =
      "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Łódź</arg_value>\n"
      "<arg_key>note</arg_key>\n<arg_value>if (a < b) {}</arg_value>\n</tool_call>";
  EXPECT_TRUE(f.accepts(note));
  expect_parses(OutputSyntax::kGlm45, note, R"({"city":"Łódź","note":"if (a < b) {}"})");
  EXPECT_FALSE(f.accepts("<tool_call>get_time\n</tool_call>"));
  EXPECT_FALSE(f.accepts("<tool_call>get_weather\n</tool_call>"));  // city is required
  EXPECT_FALSE(
      f.accepts("<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>x"
                "</arg_value>\n<arg_key>days</arg_key>\n<arg_value>three</arg_value>\n"
                "</tool_call>"));
  EXPECT_FALSE(
      f.accepts("<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>x"
                "</arg_value>\n<arg_key>unit</arg_key>\n<arg_value>k</arg_value>\n"
                "</tool_call>"));
}

TEST(ToolCallGrammar, Qwen3Coder) {
  Forced f = forced(OutputSyntax::kQwen3Coder);
  const std::string from_template =
      call_in(rendered_roundtrip("qwen3_coder"), "<tool_call>", "</tool_call>");
  ASSERT_FALSE(from_template.empty());
  EXPECT_TRUE(f.accepts(from_template)) << from_template;
  const std::string typed =
      "<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n"
      "<parameter=days>\n-2\n</parameter>\n</function>\n</tool_call>";
  EXPECT_TRUE(f.accepts(typed));
  expect_parses(OutputSyntax::kQwen3Coder, typed, R"({"city":"Oslo","days":-2})");
  EXPECT_FALSE(f.accepts("<tool_call>\n<function=get_weather>\n</function>\n</tool_call>"));
  EXPECT_FALSE(
      f.accepts("<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n"
                "</parameter>\n<parameter=days>\n2.5\n</parameter>\n</function>\n"
                "</tool_call>"));
}

TEST(ToolCallGrammar, MiniMax) {
  Forced f = forced(OutputSyntax::kMiniMaxM2);
  const std::string from_template =
      call_in(rendered_roundtrip("minimax_m2"), "<minimax:tool_call>", "</minimax:tool_call>");
  ASSERT_FALSE(from_template.empty());
  EXPECT_TRUE(f.accepts(from_template)) << from_template;
  const std::string typed =
      "<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Łódź"
      "</parameter>\n<parameter name=\"unit\">c</parameter>\n</invoke>\n</minimax:tool_call>";
  EXPECT_TRUE(f.accepts(typed));
  expect_parses(OutputSyntax::kMiniMaxM2, typed, R"({"city":"Łódź","unit":"c"})");
  EXPECT_FALSE(
      f.accepts("<minimax:tool_call>\n<invoke name=\"get_weather\">\n</invoke>\n"
                "</minimax:tool_call>"));
}

TEST(ToolCallGrammar, Harmony) {
  Forced f = forced(OutputSyntax::kGptOss);
  const std::string call =
      "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
      "{\"city\": \"Bergen\", \"days\": 2}";
  EXPECT_TRUE(f.accepts(call));
  // A forced call comes at once (no analysis message first).
  EXPECT_FALSE(
      f.accepts("<|channel|>analysis<|message|>Need the weather.<|end|>"
                "<|start|>assistant" +
                call));
  expect_parses(OutputSyntax::kGptOss, call, R"({"city":"Bergen","days":2})");
  EXPECT_FALSE(f.accepts("<|channel|>final<|message|>Hi"));
  EXPECT_FALSE(
      f.accepts("<|channel|>commentary to=functions.get_weather <|constrain|>json"
                "<|message|>{\"days\": 2}"));
}

TEST(ToolCallGrammar, MarkersAndSupport) {
  EXPECT_EQ(tool_call_marker(OutputSyntax::kGlm45), "<tool_call>");
  EXPECT_EQ(tool_call_marker(OutputSyntax::kMiniMaxM2), "<minimax:tool_call>");
  EXPECT_EQ(tool_call_marker(OutputSyntax::kGptOss), "");
  EXPECT_TRUE(tool_call_grammar_supported(OutputSyntax::kQwen3Coder));
  EXPECT_FALSE(tool_call_grammar_supported(OutputSyntax::kKimiK2));
}

}  // namespace
}  // namespace arc
