// Encoding rules on small hand-made vocabularies (expected ids worked out by hand).
#include <gtest/gtest.h>

#include <thread>

#include "arc/tokenizer.h"
#include "tiny_tokenizers.h"

namespace arc {
namespace {

std::vector<TokenId> enc(const Tokenizer& t, std::string_view s, EncodeOptions o = {}) {
  auto r = t.encode(s, o);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? *r : std::vector<TokenId>{};
}

TEST(TokenizerUnit, ByteLevelMergesByRank) {
  auto t = Tokenizer::from_json(test::tiny_byte_level_json());
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->model(), TokenizerModel::kByteLevelBpe);
  EXPECT_EQ(t->pre_tokenizer_name(), "gpt2");
  // "hello" -> he ll o -> hell o; " world" -> Ġw o r l d.
  EXPECT_EQ(enc(*t, "hello world"), (std::vector<TokenId>{258, 'o', 259, 'o', 'r', 'l', 'd'}));
  EXPECT_EQ(t->decode(enc(*t, "hello world")), "hello world");
  // Bytes outside ASCII are single byte tokens when nothing merges them.
  EXPECT_EQ(enc(*t, "\xC3\xA9"), (std::vector<TokenId>{0xC3, 0xA9}));
}

TEST(TokenizerUnit, AddedTokensMatchedInsideText) {
  auto t = Tokenizer::from_json(test::tiny_byte_level_json());
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(enc(*t, "hi<|end|>"), (std::vector<TokenId>{'h', 'i', 260}));
  EXPECT_EQ(enc(*t, "<tool>he"), (std::vector<TokenId>{261, 256}));
  EncodeOptions plain;
  plain.parse_special = false;
  // The special token is text now; the non-special added token still matches.
  EXPECT_EQ(enc(*t, "hi<|end|>", plain),
            (std::vector<TokenId>{'h', 'i', '<', '|', 'e', 'n', 'd', '|', '>'}));
  EXPECT_EQ(enc(*t, "<tool>", plain), (std::vector<TokenId>{261}));
  EXPECT_TRUE(t->is_special(260));
  EXPECT_FALSE(t->is_special(261));
  EXPECT_EQ(t->decode(std::vector<TokenId>{'h', 260, 'i'}), "h<|end|>i");
  EXPECT_EQ(t->decode(std::vector<TokenId>{'h', 260, 'i'}, /*skip_special=*/true), "hi");
}

TEST(TokenizerUnit, SentencePieceByteFallbackAndSpaces) {
  auto t =
      Tokenizer::from_json(test::tiny_sentencepiece_json(),
                           R"({"add_bos_token": true, "bos_token": "<s>", "eos_token": "</s>"})");
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->model(), TokenizerModel::kSentencePiece);
  EXPECT_EQ(enc(*t, "ab"), (std::vector<TokenId>{264}));            // ▁ab
  EXPECT_EQ(enc(*t, "ba"), (std::vector<TokenId>{259, 261, 260}));  // ▁ b a
  EXPECT_EQ(enc(*t, "a a"), (std::vector<TokenId>{262, 262}));      // ▁a ▁a
  // é is not in the vocabulary: its two bytes.
  EXPECT_EQ(enc(*t, "\xC3\xA9"), (std::vector<TokenId>{259, 3 + 0xC3, 3 + 0xA9}));
  EXPECT_EQ(t->decode(std::vector<TokenId>{259, 3 + 0xC3, 3 + 0xA9}), "\xC3\xA9");
  EXPECT_EQ(t->decode(std::vector<TokenId>{264, 262}), "ab a");  // leading space stripped once
  EXPECT_EQ(t->bos_id(), 1);
  EXPECT_EQ(t->eos_id(), 2);
  EXPECT_TRUE(t->add_bos_by_default());
  EXPECT_EQ(enc(*t, "ab", t->default_encode_options()), (std::vector<TokenId>{1, 264}));
  EncodeOptions both;
  both.add_bos = both.add_eos = true;
  EXPECT_EQ(enc(*t, "ab", both), (std::vector<TokenId>{1, 264, 2}));
}

TEST(TokenizerUnit, InvalidUtf8IsRejected) {
  auto t = Tokenizer::from_json(test::tiny_byte_level_json());
  ASSERT_TRUE(t.ok());
  auto r = t->encode("ab\xC3(");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("offset 2"), std::string::npos) << r.status().message();
}

TEST(TokenizerUnit, Utf8SanitizeFollowsWhatwg) {
  std::string out;
  // Truncated 3-byte sequence before 'A': one U+FFFD; lone continuation byte: one U+FFFD.
  EXPECT_EQ(utf8_sanitize("\xE2\x82"
                          "A\x80",
                          true, out),
            4u);
  EXPECT_EQ(out,
            "\xEF\xBF\xBD"
            "A"
            "\xEF\xBF\xBD");
  out.clear();
  // Incomplete at the end and not final: held back.
  EXPECT_EQ(utf8_sanitize("x\xF0\x9F\x98", false, out), 1u);
  EXPECT_EQ(out, "x");
  out.clear();
  // Surrogates (ED A0 80) are invalid: each byte is its own maximal subpart.
  utf8_sanitize("\xED\xA0\x80", true, out);
  EXPECT_EQ(out, "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
}

}  // namespace
}  // namespace arc

namespace arc {
namespace {

// Megabyte-long runs (one giant word, one giant whitespace run) neither fail nor take long.
TEST(TokenizerUnit, HugeRunsOfOneCharacterClass) {
  auto t = Tokenizer::from_json(test::tiny_byte_level_json());
  ASSERT_TRUE(t.ok());
  for (std::string text :
       {std::string(1 << 20, 'a'), std::string(1 << 20, ' ') + "x", std::string(1 << 19, '\n')}) {
    auto ids = t->encode(text);
    ASSERT_TRUE(ids.ok()) << ids.status().to_string();
    EXPECT_EQ(t->decode(*ids), text);
  }
}

}  // namespace
}  // namespace arc

namespace arc {
namespace {

// One tokenizer shared by threads (the word cache is the shared state) gives the same ids.
TEST(TokenizerUnit, ConcurrentEncodeAgrees) {
  auto t = Tokenizer::from_json(test::tiny_byte_level_json());
  ASSERT_TRUE(t.ok());
  const std::vector<std::string> texts = {"hello world hell", "well, hello there",
                                          "wow \xC3\xA9t\xC3\xA9 hello", "<|end|> hello<tool>"};
  std::vector<std::vector<TokenId>> want;
  for (const auto& s : texts) want.push_back(*t->encode(s));
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (int k = 0; k < 4; ++k) {
    threads.emplace_back([&, k] {
      for (int rep = 0; rep < 300; ++rep) {
        size_t i = size_t(rep + k) % texts.size();
        auto ids = t->encode(texts[i]);
        if (!ids.ok() || *ids != want[i]) ++mismatches[size_t(k)];
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int m : mismatches) EXPECT_EQ(m, 0);
}

}  // namespace
}  // namespace arc
