// Streaming detokenization: every way of cutting multi-byte text into tokens gives the same text,
// and no chunk ever ends inside a character.
#include <gtest/gtest.h>

#include "arc/tokenizer.h"
#include "fixture_tokenizers.h"
#include "tiny_tokenizers.h"

namespace arc {
namespace {

const char* const kTexts[] = {
    "Zażółć gęślą jaźń",
    "Ça va? Où est l'hôtel? Naïve café",
    "你好，世界！今天天气很好。",
    "こんにちは世界",
    "Emoji: 😀 👍🏽 👨\u200d👩\u200d👧 🇵🇱 ❤️",
    "mixed: a é 中 😀 𝑥² ok",
};

// Independent check: true when s is complete, valid UTF-8 (no character cut off).
bool valid_utf8(const std::string& s) {
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = s[i];
    int n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (int k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    }
    i += n;
  }
  return true;
}

// Feeds ids[0..split), checks the output so far, then the rest; returns the whole text.
std::string stream(const Tokenizer& t, const std::vector<TokenId>& ids, size_t split) {
  StreamingDetokenizer d(t);
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) {
    std::string chunk = d.feed(ids[i]);
    EXPECT_TRUE(valid_utf8(chunk)) << "token " << i;
    out += chunk;
    if (i + 1 == split) {
      EXPECT_TRUE(valid_utf8(out)) << "split " << split;
    }
  }
  std::string tail = d.flush();
  EXPECT_TRUE(valid_utf8(tail));
  return out + tail;
}

// One token per byte: every character is cut at every one of its byte boundaries.
TEST(StreamingDetokenizer, ByteTokensNeverEmitPartialCharacters) {
  auto t = Tokenizer::from_json(test::tiny_byte_level_json());
  ASSERT_TRUE(t.ok());
  for (const char* text : kTexts) {
    std::string s = text;
    std::vector<TokenId> ids;
    for (unsigned char c : s) ids.push_back(c);  // the tiny vocabulary's byte tokens are 0..255
    for (size_t split = 0; split <= ids.size(); ++split) {
      EXPECT_EQ(stream(*t, ids, split), s) << text << " split " << split;
    }
    EXPECT_EQ(t->decode(ids), s);
  }
}

TEST(StreamingDetokenizer, ByteFallbackTokensAndLeadingSpace) {
  auto t = Tokenizer::from_json(test::tiny_sentencepiece_json());
  ASSERT_TRUE(t.ok());
  for (const char* text : kTexts) {
    std::string s = text;
    auto ids = t->encode(s);
    ASSERT_TRUE(ids.ok());
    for (size_t split = 0; split <= ids->size(); ++split) {
      EXPECT_EQ(stream(*t, *ids, split), s) << text << " split " << split;
    }
  }
}

TEST(StreamingDetokenizer, InvalidBytesBecomeReplacementOnlyWhenFinal) {
  auto t = Tokenizer::from_json(test::tiny_byte_level_json());
  ASSERT_TRUE(t.ok());
  StreamingDetokenizer d(*t);
  EXPECT_EQ(d.feed(0xE2), "");
  EXPECT_EQ(d.feed(0x82), "");  // could still become €
  EXPECT_EQ(d.feed('A'),
            "\xEF\xBF\xBD"
            "A");  // no longer can
  EXPECT_EQ(d.feed(0xF0), "");
  EXPECT_EQ(d.feed(0x9F), "");
  EXPECT_EQ(d.flush(), "\xEF\xBF\xBD");  // the stream ended inside a character
  EXPECT_EQ(d.feed(0xE2), "");
  EXPECT_EQ(d.feed(0x82), "");
  EXPECT_EQ(d.feed(0xAC), "\xE2\x82\xAC");  // €
  EXPECT_EQ(d.flush(), "");
}

// The real vocabularies: streaming equals decode at every split of their own encodings.
TEST(StreamingDetokenizer, FixtureVocabularies) {
  if (!test::have_tokenizer_fixtures()) {
    GTEST_SKIP() << "shared fixtures not found at " << test::tokenizer_fixture_dir();
  }
  for (const char* name : {"qwen3", "llama2", "gptoss"}) {
    const Tokenizer* t = test::fixture_tokenizer(name);
    ASSERT_NE(t, nullptr) << name;
    for (const char* text : kTexts) {
      auto ids = t->encode(text);
      ASSERT_TRUE(ids.ok());
      std::string want = t->decode(*ids);
      for (size_t split = 0; split <= ids->size(); ++split) {
        EXPECT_EQ(stream(*t, *ids, split), want) << name << ": " << text;
      }
    }
  }
}

}  // namespace
}  // namespace arc
