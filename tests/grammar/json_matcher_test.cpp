// Grammar compilation and matching: hand-written valid and invalid documents per schema feature,
// and generated documents and their one-byte mutations checked against an independent JSON
// parser (nlohmann::json): whatever the parser refuses, the matcher must refuse too.
#include <random>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "grammar/json_schema.h"
#include "grammar/matcher.h"

namespace arc::grammar {
namespace {

using nlohmann::ordered_json;

bool matches(const std::shared_ptr<const Grammar>& g, std::string_view doc) {
  Matcher m(g);
  return m.advance(doc) && m.complete();
}

std::shared_ptr<const Grammar> schema(const std::string& text) {
  auto g = json_schema_grammar(ordered_json::parse(text));
  EXPECT_TRUE(g.ok()) << g.status().message();
  return std::make_shared<const Grammar>(g.ok() ? std::move(g).value() : Grammar{});
}

struct Case {
  const char* schema;
  std::vector<const char*> valid;
  std::vector<const char*> invalid;
};

TEST(JsonSchemaGrammar, FeatureCorpus) {
  const std::vector<Case> cases = {
      {R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string"}},
           "required":["a","b"],"additionalProperties":false})",
       {R"({"a":1,"b":"x"})", R"({ "a": -12, "b": "" })", "{\n  \"a\": 0,\n  \"b\": \"\\n\"\n}"},
       {R"({"b":"x","a":1})", R"({"a":1})", R"({"a":1,"b":"x","c":2})", R"({"a":01,"b":"x"})",
        R"({"a":1.5,"b":"x"})", R"({"a":1,"b":"x"} )", R"({"a":1,"b":"x",})", R"({"a":1,"b":x})",
        R"(  {"a":1,"b":"x"})", "{\"a\":1,\"b\":\"x\"\n\n}"}},
      // Optional properties, in order.
      {R"({"type":"object","properties":{"a":{"type":"boolean"},"b":{"type":"null"},
           "c":{"type":"number"}},"required":["b"]})",
       {R"({"b":null})", R"({"a":true,"b":null})", R"({"b":null,"c":1e5})",
        R"({"a":false,"b":null,"c":-0.25E-3})"},
       {R"({})", R"({"a":true})", R"({"b":null,"a":true})", R"({,"b":null})",
        R"({"b":null,"c":1.})", R"({"b":null,"c":.5})", R"({"b":null,"c":1e})"}},
      // Escapes and unicode in strings.
      {R"({"type":"string"})",
       {R"("")", R"("a\"b\\c\/d\b\f\n\r\t")", R"("\u00e9\u20AC")",
        "\"caf\xc3\xa9 \xe2\x82\xac "
        "\xf0\x9f\x98\x80\"",
        "\"\x7f\""},
       {R"("\u")", R"("\x41")", R"("\ud83d\ude00")", "\"\x01\"", "\"a\nb\"", "\"\xc3\"",
        "\"\xc0\xaf\"", "\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"", "\"\xff\"", R"("abc)", "'a'"}},
      // Lengths count characters, a multi-byte character or an escape as one.
      {R"({"type":"string","minLength":2,"maxLength":3})",
       {R"("ab")", R"("abc")", "\"\xc3\xa9\xc3\xa9\"", R"("\n\t")"},
       {R"("a")", R"("abcd")", "\"\xc3\xa9\""}},
      {R"({"type":"array","items":{"type":"integer"},"minItems":1,"maxItems":3})",
       {"[1]", "[1,2,3]", "[ 1 , 2 ]", "[\n  1,\n  2\n]"},
       {"[]", "[1,2,3,4]", "[1,]", "[,1]", "[1 2]", "[\"1\"]"}},
      {R"({"type":"array","items":{"type":"string"}})",
       {"[]", "[ ]", R"(["a","b"])"},
       {"[", R"(["a",])"}},
      {R"({"enum":["red","green",3,null,{"k":[1]}]})",
       {R"("red")", R"("green")", "3", "null", R"({"k":[1]})"},
       {R"("blue")", "4", R"("Red")", R"({"k":[2]})"}},
      {R"({"const":"fixed"})", {R"("fixed")"}, {R"("fixe")", R"("fixedd")"}},
      {R"({"anyOf":[{"type":"integer"},{"type":"string","maxLength":1}]})",
       {"12", R"("a")"},
       {"1.5", R"("ab")", "true"}},
      {R"({"type":["string","null"]})", {R"("x")", "null"}, {"1", "nul"}},
      {R"({"type":"integer","nullable":true})", {"5", "null"}, {"5.0", "\"5\""}},
      // Recursion through $defs.
      {R"({"$defs":{"node":{"type":"object","properties":{"v":{"type":"integer"},
            "next":{"anyOf":[{"$ref":"#/$defs/node"},{"type":"null"}]}},
            "required":["v","next"],"additionalProperties":false}},"$ref":"#/$defs/node"})",
       {R"({"v":1,"next":null})", R"({"v":1,"next":{"v":2,"next":{"v":3,"next":null}}})"},
       {R"({"v":1})", R"({"v":1,"next":{"v":2}})", R"({"v":1,"next":{}})"}},
      // "#" refers to the root.
      {R"({"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#"}}},
           "required":["kids"]})",
       {R"({"kids":[]})", R"({"kids":[{"kids":[]},{"kids":[{"kids":[]}]}]})"},
       {R"({"kids":[{}]})"}},
      {R"({"type":"string","format":"date-time"})",
       {R"("2024-02-28T23:59:59Z")", R"("2024-01-01T00:00:00.123+05:30")"},
       {R"("2024-13-01T00:00:00Z")", R"("2024-01-01 00:00:00Z")", R"("2024-01-01T00:00:00")"}},
      // Only dates that exist.
      {R"({"type":"string","format":"date"})",
       {R"("2024-01-31")", R"("0001-12-31")", R"("1999-04-30")", R"("2023-02-28")"},
       {R"("0000-01-01")", R"("2024-04-31")", R"("2023-02-29")", R"("2024-00-10")",
        R"("2024-01-00")", R"("2024-1-01")"}},
      {R"({"type":"string","format":"uuid"})",
       {R"("123e4567-e89b-12d3-a456-426614174000")"},
       {R"("123e4567e89b12d3a456426614174000")", R"("123e4567-e89b-12d3-a456-42661417400g")"}},
      // Objects without properties, and the empty schema: any JSON.
      {R"({"type":"object"})", {"{}", R"({"x":[1,{"y":null}],"z":"w"})"}, {"[]", "{"}},
      {R"({})", {"1", "[]", R"({"a":{"b":{"c":[true,false,null]}}})"}, {"", "tru", "[1,]"}},
  };
  for (const Case& c : cases) {
    auto g = schema(c.schema);
    for (const char* doc : c.valid) EXPECT_TRUE(matches(g, doc)) << c.schema << "\n  " << doc;
    for (const char* doc : c.invalid) EXPECT_FALSE(matches(g, doc)) << c.schema << "\n  " << doc;
  }
}

TEST(JsonSchemaGrammar, WhitespaceIsBounded) {
  auto g = std::make_shared<const Grammar>(json_any_grammar(false));
  EXPECT_TRUE(matches(g, "[\n" + std::string(20, ' ') + "1]"));
  EXPECT_FALSE(matches(g, "[\n" + std::string(21, ' ') + "1]"));
  EXPECT_FALSE(matches(g, "[  1]"));
  EXPECT_TRUE(matches(g, std::string(16, '9')));
  EXPECT_FALSE(matches(g, std::string(17, '9')));
}

TEST(JsonSchemaGrammar, DeepNesting) {
  auto g = std::make_shared<const Grammar>(json_any_grammar(false));
  std::string deep;
  for (int i = 0; i < 500; ++i) deep += i % 2 ? "{\"k\":" : "[";
  deep += "0";
  for (int i = 499; i >= 0; --i) deep += i % 2 ? "}" : "]";
  EXPECT_TRUE(matches(g, deep));
  EXPECT_FALSE(matches(g, deep.substr(0, deep.size() - 1)));
  EXPECT_FALSE(matches(g, deep + "]"));
}

TEST(JsonSchemaGrammar, JsonObjectModeWantsAnObject) {
  auto g = std::make_shared<const Grammar>(json_any_grammar(true));
  EXPECT_TRUE(matches(g, "{}"));
  EXPECT_TRUE(matches(g, R"({"a":[1,2,{"b":"c"}]})"));
  EXPECT_FALSE(matches(g, "[1]"));
  EXPECT_FALSE(matches(g, "\"s\""));
}

// Free text up to "</think>" (a reasoning block the prompt opened), then the document.
TEST(JsonSchemaGrammar, ReasoningPrefix) {
  GrammarBuilder b;
  JsonSchemaCompiler c(b);
  const Sym root = b.rule("root", {{b.until("think", "</think>"), c.any_object()}});
  auto g = std::make_shared<const Grammar>(std::move(b).build(root.arg));
  EXPECT_TRUE(matches(g, "</think>{}"));
  EXPECT_TRUE(matches(g, "let me see </thin </</think>{\"a\":1}"));
  EXPECT_TRUE(matches(g, "<<//think>>\n</think>{}"));
  EXPECT_FALSE(matches(g, "{}"));
  EXPECT_FALSE(matches(g, "</think>x{}"));
  EXPECT_FALSE(matches(g, "</thinK>{}"));
  // The reasoning ends at the first "</think>": what follows is the document.
  EXPECT_FALSE(matches(g, "a</think>b</think>{}"));
}

// Free text in which a marker opens a constrained part (strict tools with tool_choice auto):
// the text may end anywhere, calls may repeat.
TEST(JsonSchemaGrammar, FreeTextWithConstrainedCalls) {
  GrammarBuilder b;
  JsonSchemaCompiler c(b);
  auto args = c.value(ordered_json::parse(R"({"type":"object","properties":{"n":{"type":"integer"}},
      "required":["n"]})"),
                      "tools");
  ASSERT_TRUE(args.ok());
  const Sym call = b.rule("call", {cat({b.literal("\n"), one(*args), b.literal("</call>")})});
  const Sym root = b.rule("root", {{b.until("text", "<call>", {call}, /*free_text=*/true)}});
  auto g = std::make_shared<const Grammar>(std::move(b).build(root.arg));
  EXPECT_TRUE(matches(g, ""));
  EXPECT_TRUE(matches(g, "just text, <cal and <ca> too"));
  EXPECT_TRUE(matches(g, "<call>\n{\"n\":1}</call>"));
  EXPECT_TRUE(matches(g, "a <<call>\n{\"n\":1}</call> b <call>\n{\"n\":-2}</call>"));
  EXPECT_FALSE(matches(g, "<call>\n{\"n\":\"x\"}</call>"));
  EXPECT_FALSE(matches(g, "<call>\n{}</call>"));
  EXPECT_FALSE(matches(g, "<call>\n{\"n\":1}"));  // a call must be closed
}

TEST(JsonSchemaGrammar, UnsupportedKeywordsAreNamed) {
  const std::vector<std::pair<const char*, const char*>> cases = {
      {R"({"type":"string","pattern":"^a"})", "'pattern'"},
      {R"({"type":"object","properties":{"x":{"type":"integer","minimum":3}}})", "'minimum'"},
      {R"({"type":"object","patternProperties":{}})", "'patternProperties'"},
      {R"({"oneOf":[{"type":"string"}]})", "'oneOf'"},
      {R"({"type":"string","format":"email"})", "\"email\""},
      {R"({"$ref":"#/$defs/missing"})", "missing"},
      {R"({"$ref":"http://example.com/s.json"})", "$ref"},
      {R"({"type":"object","additionalProperties":{"type":"string"}})", "'additionalProperties'"},
      {R"({"type":"object","properties":{"a":{}},"required":["b"]})", "\"b\""},
      {R"({"type":"strin"})", "\"strin\""},
      {R"({"type":"array","prefixItems":[]})", "'prefixItems'"},
      {R"({"type":"array","maxItems":1,"minItems":2})", "'maxItems'"},
  };
  for (const auto& [text, needle] : cases) {
    auto g = json_schema_grammar(ordered_json::parse(text), "response_format");
    ASSERT_FALSE(g.ok()) << text;
    EXPECT_NE(g.status().message().find(needle), std::string::npos) << g.status().message();
    EXPECT_NE(g.status().message().find("response_format"), std::string::npos);
  }
}

// Random JSON within the grammar's limits (compact or spaced), for the oracle tests.
std::string random_json(std::mt19937& rng, int depth) {
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  static const char* kStrings[] = {"",    "a",   "\\\"",         "\\u00e9",         "\xc3\xa9",
                                   "x y", "\\n", "\xe2\x82\xac", "\xf0\x9f\x98\x80"};
  static const char* kNumbers[] = {"0", "-0", "12", "-3.25", "1e9", "2.5E-3", "7e+2"};
  const int kind = depth > 4 ? 2 + pick(4) : pick(6);
  const char* sp = pick(3) == 0 ? " " : "";
  switch (kind) {
    case 0: {
      std::string s = "{";
      const int n = pick(4);
      for (int i = 0; i < n; ++i) {
        if (i) s += std::string(",") + sp;
        s += "\"" + std::string(kStrings[pick(9)]) + "\":" + sp + random_json(rng, depth + 1);
      }
      return s + "}";
    }
    case 1: {
      std::string s = "[";
      const int n = pick(4);
      for (int i = 0; i < n; ++i)
        s += (i ? std::string(",") + sp : "") + random_json(rng, depth + 1);
      return s + "]";
    }
    case 2:
      return "\"" + std::string(kStrings[pick(9)]) + "\"";
    case 3:
      return kNumbers[pick(7)];
    case 4:
      return pick(2) ? "true" : "false";
    default:
      return "null";
  }
}

TEST(JsonSchemaGrammar, AgreesWithAnIndependentParser) {
  auto g = std::make_shared<const Grammar>(json_any_grammar(false));
  std::mt19937 rng(7);
  const std::string alphabet = "{}[],:\" \n0123456789.eE+-tfnulrsa\\\xc3\xa9";
  int refused_by_parser = 0;
  for (int i = 0; i < 400; ++i) {
    const std::string doc = random_json(rng, 0);
    ASSERT_TRUE(nlohmann::json::accept(doc)) << doc;
    ASSERT_TRUE(matches(g, doc)) << doc;
    // One-byte mutations: whatever the parser refuses the matcher must refuse.
    for (int k = 0; k < 20; ++k) {
      std::string m = doc;
      const size_t at = rng() % (m.size() + 1);
      const char c = alphabet[rng() % alphabet.size()];
      switch (rng() % 3) {
        case 0:
          if (at < m.size()) m.erase(at, 1);
          break;
        case 1:
          m.insert(at, 1, c);
          break;
        default:
          if (at < m.size()) m[at] = c;
      }
      if (!nlohmann::json::accept(m)) {
        ++refused_by_parser;
        EXPECT_FALSE(matches(g, m)) << m;
      }
    }
  }
  EXPECT_GT(refused_by_parser, 1000);
}

}  // namespace
}  // namespace arc::grammar
