// Every case of the five reference vocabularies: ids and decoded text equal to transformers.js.
#include <gtest/gtest.h>

#include "fixture_tokenizers.h"

namespace arc {
namespace {

class FixtureTest : public ::testing::TestWithParam<const char*> {};

TEST_P(FixtureTest, EncodeAndDecodeMatchReference) {
  if (!test::have_tokenizer_fixtures()) {
    GTEST_SKIP() << "shared fixtures not found at " << test::tokenizer_fixture_dir();
  }
  const std::string name = GetParam();
  const Tokenizer* tok = test::fixture_tokenizer(name);
  ASSERT_NE(tok, nullptr);
  auto cases = test::fixture_cases(name);
  ASSERT_EQ(cases.size(), 50u);
  int n = 0;
  for (const auto& c : cases) {
    const std::string text = c["text"].get<std::string>();
    const std::vector<TokenId> want = c["ids"].get<std::vector<TokenId>>();
    auto got = tok->encode(text);
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    EXPECT_EQ(*got, want) << name << " case " << n << ": " << text;
    EXPECT_EQ(tok->decode(want), c["decoded"].get<std::string>()) << name << " case " << n;
    ++n;
  }
}

INSTANTIATE_TEST_SUITE_P(Vocabularies, FixtureTest, ::testing::ValuesIn(test::kFixtureNames),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
}  // namespace arc
