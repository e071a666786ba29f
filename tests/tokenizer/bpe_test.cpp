// The BPE merge loop (short-word scan and long-word heap) against a naive reference.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "../engine/tokenizer/bpe.h"
#include "arc/tokenizer.h"

namespace arc {
namespace {

// Reference: rescan every adjacent pair each round, merge the lowest rank (leftmost on ties).
std::vector<TokenId> naive_bpe(
    std::vector<TokenId> ids,
    const std::map<std::pair<TokenId, TokenId>, std::pair<uint32_t, TokenId>>& m) {
  while (true) {
    size_t best = SIZE_MAX;
    uint32_t best_rank = UINT32_MAX;
    for (size_t i = 0; i + 1 < ids.size(); ++i) {
      auto it = m.find({ids[i], ids[i + 1]});
      if (it != m.end() && it->second.first < best_rank) {
        best_rank = it->second.first;
        best = i;
      }
    }
    if (best == SIZE_MAX) return ids;
    ids[best] = m.at({ids[best], ids[best + 1]}).second;
    ids.erase(ids.begin() + long(best) + 1);
  }
}

TEST(Bpe, MatchesNaiveReferenceOnRandomTables) {
  std::mt19937 rng(7);
  for (int table = 0; table < 20; ++table) {
    // Alphabet 0..5; merged tokens 100+ (which may merge again).
    std::map<std::pair<TokenId, TokenId>, std::pair<uint32_t, TokenId>> ref;
    BpeMerges merges;
    std::vector<TokenId> known = {0, 1, 2, 3, 4, 5};
    for (uint32_t r = 0; r < 40; ++r) {
      TokenId a = known[rng() % known.size()], b = known[rng() % known.size()];
      if (ref.count({a, b})) continue;
      TokenId res = TokenId(100 + r);
      ref[{a, b}] = {r, res};
      merges.add(a, b, r, res);
      known.push_back(res);
    }
    for (size_t len : {2, 3, 5, 8, 17, 47, 48, 49, 120, 400}) {
      std::vector<TokenId> ids(len);
      for (auto& x : ids) x = TokenId(rng() % 6);
      std::vector<TokenId> got = ids;
      merges.apply(got);
      EXPECT_EQ(got, naive_bpe(ids, ref)) << "table " << table << " length " << len;
    }
  }
}

TEST(Bpe, FirstRankOfARepeatedPairWins) {
  BpeMerges m;
  m.add(1, 2, 0, 10);
  m.add(1, 2, 5, 11);
  ASSERT_NE(m.find(1, 2), nullptr);
  EXPECT_EQ(m.find(1, 2)->result, 10);
  EXPECT_EQ(m.find(2, 1), nullptr);
}

TEST(EscapeTokenText, ReadableAndEscaped) {
  EXPECT_EQ(escape_token_text("a b"), "a b");
  EXPECT_EQ(escape_token_text("\n\t\r\\\""), "\\n\\t\\r\\\\\\\"");
  EXPECT_EQ(escape_token_text("\xC3\xA9"), "\xC3\xA9");    // é stays é
  EXPECT_EQ(escape_token_text("\xF0\x9F"), "\\xF0\\x9F");  // half an emoji
  EXPECT_EQ(escape_token_text("\x01\x7F"), "\\x01\\x7F");
  EXPECT_EQ(escape_token_text("x\xE4\xB8\x96y"), "x\xE4\xB8\x96y");  // 世
}

}  // namespace
}  // namespace arc
