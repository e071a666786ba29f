// Structured-output fields of requests (issue 39): response_format and forcing tool_choice become
// an OutputConstraint; wrong shapes are 400s naming the field; schemas keep the client's key
// order.
#include <gtest/gtest.h>

#include "anthropic_api.h"
#include "api_constraint.h"
#include "openai_api.h"

namespace arc {
namespace {

using nlohmann::json;
using Kind = OutputConstraint::Kind;

json chat(json extra) {
  json b = {{"model", "m"}, {"messages", json::array({{{"role", "user"}, {"content", "x"}}})}};
  for (auto& [k, v] : extra.items()) b[k] = v;
  return b;
}

const json kTools = json::array(
    {{{"type", "function"},
      {"function", {{"name", "a"}, {"strict", true}, {"parameters", {{"type", "object"}}}}}},
     {{"type", "function"}, {"function", {{"name", "b"}}}}});

TEST(OutputConstraintParse, ResponseFormat) {
  auto r = server::parse_openai_chat(chat({{"response_format", {{"type", "json_object"}}}}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->constraint.kind, Kind::kJsonObject);
  r = server::parse_openai_chat(chat({{"response_format", {{"type", "text"}}}}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->constraint.kind, Kind::kNone);
  r = server::parse_openai_chat(
      chat({{"response_format",
             {{"type", "json_schema"},
              {"json_schema", {{"name", "s"}, {"schema", {{"type", "integer"}}}}}}}}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->constraint.kind, Kind::kJsonSchema);
  EXPECT_EQ(r->constraint.schema.dump(), R"({"type":"integer"})");
  r = server::parse_openai_chat(chat({{"response_format", {{"type", "json_schema"}}}}));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("response_format.json_schema"), std::string::npos);
  auto c = server::parse_openai_completion(
      {{"prompt", "x"}, {"response_format", {{"type", "json_object"}}}});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->constraint.kind, Kind::kJsonObject);
}

TEST(OutputConstraintParse, ForcedToolCalls) {
  auto r = server::parse_openai_chat(chat({{"tools", kTools}, {"tool_choice", "required"}}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->constraint.kind, Kind::kToolCall);
  ASSERT_EQ(r->constraint.tools.size(), 2u);
  EXPECT_TRUE(r->constraint.tools[0].strict);
  EXPECT_FALSE(r->constraint.tools[1].strict);
  EXPECT_TRUE(r->constraint.tools[1].parameters.is_null());
  r = server::parse_openai_chat(chat(
      {{"tools", kTools}, {"tool_choice", {{"type", "function"}, {"function", {{"name", "b"}}}}}}));
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->constraint.tools.size(), 1u);
  EXPECT_EQ(r->constraint.tools[0].name, "b");
  // "auto" with a strict tool: the calls the model makes are constrained, its text is free.
  r = server::parse_openai_chat(chat({{"tools", kTools}, {"tool_choice", "auto"}}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->constraint.kind, Kind::kToolCall);
  EXPECT_TRUE(r->constraint.optional);
  EXPECT_EQ(r->constraint.tools.size(), 2u);
  json loose = kTools;
  loose[0]["function"]["strict"] = false;
  r = server::parse_openai_chat(chat({{"tools", loose}}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->constraint.kind, Kind::kNone);
  r = server::parse_openai_chat(chat({{"tools", kTools}, {"tool_choice", "none"}}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->constraint.kind, Kind::kNone);
  r = server::parse_openai_chat(
      chat({{"tools", kTools},
            {"tool_choice", {{"type", "function"}, {"function", {{"name", "zz"}}}}}}));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("\"zz\""), std::string::npos);
  r = server::parse_openai_chat(chat({{"tool_choice", "required"}}));
  EXPECT_FALSE(r.ok());
  r = server::parse_openai_chat(chat({{"tools", kTools}, {"tool_choice", "sometimes"}}));
  EXPECT_FALSE(r.ok());

  json body = {{"model", "m"},
               {"max_tokens", 5},
               {"messages", json::array({{{"role", "user"}, {"content", "x"}}})},
               {"tools", json::array({{{"name", "w"}, {"input_schema", {{"type", "object"}}}}})},
               {"tool_choice", {{"type", "tool"}, {"name", "w"}}}};
  auto a = server::parse_anthropic_messages(body, false);
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->constraint.kind, Kind::kToolCall);
  EXPECT_EQ(a->constraint.tools[0].name, "w");
}

TEST(OutputConstraintParse, SchemasKeepTheClientsKeyOrder) {
  const std::string raw =
      R"({"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":
      "json_schema","json_schema":{"name":"s","schema":{"type":"object","properties":{"zeta":
      {"type":"string"},"alpha":{"type":"integer"}}}}}})";
  auto r = server::parse_openai_chat(json::parse(raw));
  ASSERT_TRUE(r.ok());
  OutputConstraint c = r->constraint;
  EXPECT_EQ(c.schema["properties"].begin().key(), "alpha");  // json sorts keys
  server::with_schema_order(raw, /*anthropic=*/false, /*chat=*/true, c);
  EXPECT_EQ(c.schema["properties"].begin().key(), "zeta");
}

}  // namespace
}  // namespace arc
