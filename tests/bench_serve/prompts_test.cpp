// The built-in prompt sets and the prompt-set file format.
#include <gtest/gtest.h>

#include "arc/bench/prompts.h"

namespace arc::bench {
namespace {

TEST(BenchPrompts, BuiltinSetsHaveEightPrompts) {
  for (const auto& name : builtin_prompt_set_names()) {
    auto set = load_prompt_set(name);
    ASSERT_TRUE(set.ok()) << set.status().to_string();
    EXPECT_EQ(set->name, name);
    EXPECT_GE(set->conversations.size(), 8u) << name;
    for (const auto& conv : set->conversations) {
      ASSERT_TRUE(conv.is_array());
      EXPECT_EQ(conv.back()["role"], "user");
      EXPECT_GT(conv.back()["content"].get<std::string>().size(), 80u);
    }
  }
  // The code and JSON sets carry a system prompt that sets the output kind.
  auto json_set = load_prompt_set("json");
  ASSERT_TRUE(json_set.ok());
  EXPECT_EQ(json_set->conversations[0][0]["role"], "system");
}

TEST(BenchPrompts, FileFormatAndErrors) {
  auto ok = parse_prompt_set(
      R"({"name":"mine","system":"be brief","prompts":["a", {"prompt":"b"},
         {"messages":[{"role":"user","content":"c"}]}]})",
      "test");
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  ASSERT_EQ(ok->conversations.size(), 3u);
  EXPECT_EQ(ok->conversations[1][0]["content"], "be brief");
  EXPECT_EQ(ok->conversations[1][1]["content"], "b");
  EXPECT_EQ(ok->conversations[2][1]["content"], "c");

  EXPECT_FALSE(parse_prompt_set("not json", "x").ok());
  EXPECT_FALSE(parse_prompt_set(R"({"prompts":[]})", "x").ok());
  EXPECT_FALSE(parse_prompt_set(R"({"prompts":[{"nothing":1}]})", "x").ok());
  EXPECT_FALSE(parse_prompt_set(R"({"prompts":[{"messages":[{"content":"no role"}]}]})", "x").ok());
  auto missing = load_prompt_set("poetry");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("prose, code and json"), std::string::npos);
  EXPECT_FALSE(load_prompt_set("/nonexistent/set.json").ok());
}

TEST(BenchPrompts, LongPromptSizeAndNonce) {
  auto text = builtin_long_context();
  ASSERT_TRUE(text.ok()) << text.status().to_string();
  std::string a = build_long_prompt(*text, 100000, "aaaa");
  std::string b = build_long_prompt(*text, 100000, "bbbb");
  EXPECT_GE(a.size(), 100000u);
  EXPECT_LT(a.size(), 100000u + 2000u);         // overshoots by at most one section
  EXPECT_NE(a.substr(0, 40), b.substr(0, 40));  // different from the first bytes on
  EXPECT_EQ(a.substr(a.size() - text->question.size()), text->question);
}

}  // namespace
}  // namespace arc::bench
