// Prefix reuse: full blocks indexed by (parent hash, tokens), shared by reference, kept after
// their sequence ends and evicted least-recently-used.
#include <gtest/gtest.h>

#include <numeric>

#include "arc/kv_cache.h"

namespace arc {
namespace {

std::vector<int32_t> iota_tokens(int n, int start = 100) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  std::iota(t.begin(), t.end(), start);
  return t;
}

class PrefixCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    be_ = make_cpu_backend(1);
    auto kv = KvCache::create(*be_, {1, 1, 4, /*block_size=*/4, /*n_blocks=*/6, DType::F32});
    ASSERT_TRUE(kv.ok());
    kv_ = std::move(*kv);
  }
  // Runs a sequence over `tokens` as the scheduler would: attach, reserve, write, commit.
  int32_t run_sequence(const std::vector<int32_t>& tokens, int64_t* reused = nullptr) {
    int32_t s = kv_->add_sequence();
    int64_t hit = kv_->attach_cached_prefix(s, tokens);
    if (reused) *reused = hit;
    EXPECT_TRUE(kv_->reserve(s, static_cast<int64_t>(tokens.size())).ok());
    kv_->commit(s, tokens, static_cast<int64_t>(tokens.size()));
    return s;
  }
  std::unique_ptr<Backend> be_;
  std::unique_ptr<KvCache> kv_;
};

TEST_F(PrefixCacheTest, ReusesFullBlocksOfASharedPrefix) {
  auto a = iota_tokens(10);  // blocks [0..3] [4..7] full, [8..9] partial
  int64_t reused = -1;
  int32_t sa = run_sequence(a, &reused);
  EXPECT_EQ(reused, 0);
  // Same first 8 tokens, different tail: both full blocks are shared.
  auto b = a;
  b[9] = 7;
  int32_t sb = run_sequence(b, &reused);
  EXPECT_EQ(reused, 8);
  EXPECT_EQ(kv_->blocks(sb)[0], kv_->blocks(sa)[0]);
  EXPECT_EQ(kv_->blocks(sb)[1], kv_->blocks(sa)[1]);
  EXPECT_NE(kv_->blocks(sb)[2], kv_->blocks(sa)[2]);
  // A change in the first block shares nothing (the chain hash covers the whole prefix).
  auto c = a;
  c[0] = 1;
  int32_t sc = kv_->add_sequence();
  EXPECT_EQ(kv_->attach_cached_prefix(sc, c), 0);
  kv_->free_sequence(sc);
}

TEST_F(PrefixCacheTest, LeavesTheLastTokenToCompute) {
  auto a = iota_tokens(8);  // exactly two full blocks
  run_sequence(a);
  int32_t s = kv_->add_sequence();
  // The whole prompt is cached, but its last token's logits are needed: one block is reused.
  EXPECT_EQ(kv_->attach_cached_prefix(s, a), 4);
}

TEST_F(PrefixCacheTest, FinishedSequencesStayCachedUntilEvicted) {
  auto a = iota_tokens(8);
  int32_t sa = run_sequence(a);
  kv_->free_sequence(sa);
  EXPECT_EQ(kv_->n_free_blocks(), 6);  // cached blocks count as available
  EXPECT_EQ(kv_->n_cached_blocks(), 2);
  int64_t reused = -1;
  int32_t sb = run_sequence(iota_tokens(9), &reused);
  EXPECT_EQ(reused, 8);
  kv_->free_sequence(sb);
  // Filling the pool with unrelated sequences evicts the cached prefix.
  int32_t x = run_sequence(iota_tokens(24, 5000));
  EXPECT_EQ(kv_->n_free_blocks(), 0);
  kv_->free_sequence(x);
  int32_t sc = kv_->add_sequence();
  EXPECT_EQ(kv_->attach_cached_prefix(sc, iota_tokens(9)), 0);
}

TEST_F(PrefixCacheTest, SharedBlocksAreFreedOnlyByTheLastUser) {
  auto a = iota_tokens(9);
  int32_t sa = run_sequence(a);
  int32_t sb = run_sequence(a);
  const int32_t shared = kv_->blocks(sa)[0];
  ASSERT_EQ(kv_->blocks(sb)[0], shared);
  kv_->free_sequence(sa);
  // sb still holds the shared blocks: a new sequence cannot be handed them.
  int32_t big = kv_->add_sequence();
  EXPECT_FALSE(kv_->reserve(big, 6 * 4).ok());
  EXPECT_TRUE(kv_->reserve(big, (6 - 3) * 4).ok());
  for (int32_t b : kv_->blocks(big)) EXPECT_NE(b, shared);
}

TEST(KvBlockHash, DependsOnParentAndTokens) {
  std::vector<int32_t> t = {1, 2, 3, 4};
  EXPECT_EQ(kv_block_hash(0, t), kv_block_hash(0, t));
  EXPECT_NE(kv_block_hash(0, t), kv_block_hash(1, t));
  std::vector<int32_t> u = {1, 2, 4, 3};
  EXPECT_NE(kv_block_hash(0, t), kv_block_hash(0, u));
  EXPECT_NE(kv_block_hash(0, t), 0u);
}

}  // namespace
}  // namespace arc
