// The windowed pool of sliding-window layers (arc/kv_window.h): a sequence holds only the blocks
// of its last window there, released blocks stay cached for prefix reuse, and a cached prefix is
// reused only as far as its window's blocks are cached too.
#include <gtest/gtest.h>

#include <numeric>

#include "arc/kv_window.h"

namespace arc {
namespace {

std::vector<int32_t> iota_tokens(int n, int start = 100) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  std::iota(t.begin(), t.end(), start);
  return t;
}

// Two layers, the first a sliding-window layer over 6 positions; blocks of 4.
KvCacheOptions options(int64_t n_blocks, int64_t n_swa_blocks) {
  KvCacheOptions o{2, 1, 4, /*block_size=*/4, n_blocks, DType::F32};
  o.swa_window = 6;
  o.n_swa_blocks = n_swa_blocks;
  o.swa_layers = {1, 0};
  return o;
}

class KvWindowTest : public ::testing::Test {
 protected:
  void make(int64_t n_blocks, int64_t n_swa_blocks) {
    be_ = make_cpu_backend(1);
    auto kv = KvCache::create(*be_, options(n_blocks, n_swa_blocks));
    ASSERT_TRUE(kv.ok()) << kv.status().to_string();
    kv_ = std::move(*kv);
  }
  // As the scheduler runs a sequence: attach, then steps of `chunk` tokens (reserve, commit).
  int32_t run(const std::vector<int32_t>& tokens, int64_t chunk, int64_t* reused = nullptr) {
    const int32_t s = kv_->add_sequence();
    int64_t done = kv_->attach_cached_prefix(s, tokens);
    if (reused) *reused = done;
    const auto n = static_cast<int64_t>(tokens.size());
    while (done < n) {
      const int64_t to = std::min(n, done + chunk);
      EXPECT_TRUE(kv_->reserve(s, to).ok()) << "at " << to;
      // Every position of the step has a slot in the windowed pool.
      for (int64_t p = done; p < to; ++p) EXPECT_GE(kv_->window_slot(s, p), 0) << p;
      done = to;
      kv_->commit(s, tokens, done);
      // Held: from the block of the first position the next query sees, to the end.
      const auto& w = kv_->window_blocks(s);
      const int64_t first = std::max<int64_t>(0, done - 6 + 1) / 4;
      for (int64_t i = 0; i < static_cast<int64_t>(w.size()); ++i) {
        EXPECT_EQ(w[static_cast<size_t>(i)] == WindowedBlocks::kNoBlock, i < first)
            << "entry " << i << " after " << done;
      }
    }
    return s;
  }
  std::unique_ptr<Backend> be_;
  std::unique_ptr<KvCache> kv_;
};

TEST_F(KvWindowTest, LayerPoolsHaveTheirOwnSizes) {
  make(20, 5);
  EXPECT_TRUE(kv_->layer_windowed(0));
  EXPECT_FALSE(kv_->layer_windowed(1));
  EXPECT_EQ(kv_->layer_blocks(0), 5);
  EXPECT_EQ(kv_->layer_blocks(1), 20);
  EXPECT_EQ(kv_->layer_bytes(0), size_t{5 * 4 * 1 * 4 * 4});
  EXPECT_EQ(kv_->layer_bytes(1), size_t{20 * 4 * 1 * 4 * 4});
}

TEST_F(KvWindowTest, BadOptionsAreRefused) {
  be_ = make_cpu_backend(1);
  KvCacheOptions o = options(8, 4);
  o.swa_layers = {1};  // one flag for two layers
  EXPECT_FALSE(KvCache::create(*be_, o).ok());
  o = options(8, 4);
  o.swa_window = 0;
  EXPECT_FALSE(KvCache::create(*be_, o).ok());
}

TEST_F(KvWindowTest, LongSequenceHoldsOnlyItsWindow) {
  // 100 tokens one at a time through a windowed pool of 4 blocks: the window of 6 positions
  // plus the block being written never needs more than 3.
  make(30, 4);
  const auto toks = iota_tokens(100);
  const int32_t s = run(toks, 1);
  EXPECT_EQ(kv_->blocks(s).size(), 25u);
  EXPECT_EQ(kv_->window_blocks(s).size(), 25u);
  EXPECT_LE(kv_->window()->n_used(), 3);
  // Released blocks are cached (hashed), not lost: the pool is full of reusable windows.
  EXPECT_EQ(kv_->window()->n_used() + kv_->window()->n_cached(), 4);
  kv_->free_sequence(s);
  EXPECT_EQ(kv_->window()->n_used(), 0);
  EXPECT_EQ(kv_->n_used_blocks(), 0);
}

TEST_F(KvWindowTest, ChunkedPrefillReservesTheChunkAndReleasesBehind) {
  make(30, 8);
  const int32_t s = run(iota_tokens(45), 9);
  // After 45 positions the next query sees 40..45: blocks 10 and 11 only.
  EXPECT_EQ(kv_->window()->n_used(), 2);
  kv_->free_sequence(s);
}

TEST_F(KvWindowTest, ShortWindowPoolRefusesWithoutAllocating) {
  make(30, 2);
  const int32_t s = kv_->add_sequence();
  const int32_t free_before = kv_->n_free_blocks();
  const Status st = kv_->reserve(s, 12);  // 3 windowed blocks, 2 in the pool
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(st.message().find("sliding-window"), std::string::npos) << st.to_string();
  EXPECT_EQ(kv_->n_free_blocks(), free_before);
  EXPECT_EQ(kv_->window()->n_used(), 0);
  EXPECT_TRUE(kv_->reserve(s, 8).ok());
}

TEST_F(KvWindowTest, PrefixPastTheWindowIsReusedWithItsWindowBlocks) {
  make(40, 12);
  const auto a = iota_tokens(30);
  const int32_t sa = run(a, 4);
  kv_->free_sequence(sa);
  // The same 28 tokens, then others: 7 full blocks shared; the first query (position 28) sees
  // 23..28, so blocks 5 and 6 must come from the windowed cache.
  auto b = iota_tokens(28);
  for (int32_t t : {900, 901, 902, 903, 904}) b.push_back(t);
  int64_t reused = -1;
  const int32_t sb = run(b, 4, &reused);
  EXPECT_EQ(reused, 28);
  kv_->free_sequence(sb);
}

TEST_F(KvWindowTest, EvictedWindowShortensOrStopsReuse) {
  // A windowed pool of 4 blocks: a long second sequence evicts the first one's cached windows.
  make(60, 4);
  const auto a = iota_tokens(40);
  kv_->free_sequence(run(a, 4));
  // An unrelated sequence of 20 tokens takes every windowed block in turn.
  kv_->free_sequence(run(iota_tokens(20, 5000), 4));
  // a's full-attention blocks are all still cached, but none of its windows: no reuse at all
  // (reusing them would leave the sliding-window layers without the keys they need).
  auto b = a;
  b.push_back(7);
  int64_t reused = -1;
  kv_->free_sequence(run(b, 4, &reused));
  EXPECT_EQ(reused, 0);

  // A pool just large enough: c's run evicts only its own oldest windowed block (entry 0), so
  // the window of its whole prefix (entries 4 and 5) is still cached for d.
  make(60, 5);
  const auto c = iota_tokens(24, 300);
  kv_->free_sequence(run(c, 4));
  auto d = c;
  d.push_back(1);
  const int32_t sd = kv_->add_sequence();
  EXPECT_EQ(kv_->attach_cached_prefix(sd, d), 24);
  kv_->free_sequence(sd);
}

TEST(KvWindowPool, SizeCoversWindowsAndOneStep) {
  // gpt-oss: window 128, blocks of 16, 4 parallel sequences, 512 tokens a step:
  // per sequence ceil(127/16) + 2 = 10 blocks, the step 32 + 4: 2 x (40 + 36) = 152.
  EXPECT_EQ(windowed_pool_blocks(128, 16, 4, 512, 100000), 152);
  EXPECT_EQ(windowed_pool_blocks(128, 16, 4, 512, 100), 100);  // never above the main pool
}

TEST(KvWindowPool, BytesCountFullLayersOverTheContextAndWindowedOnesOverThePool) {
  // gpt-oss-120b: 36 layers, 18 sliding (the even ones), 8 KV heads of 64, F16 K and V:
  // 8 x 64 x 2 x 2 = 2048 bytes per layer and token.
  ModelConfig c;
  c.n_layer = 36;
  c.n_kv_head = 8;
  c.head_dim = 64;
  c.sliding_window = 128;
  c.swa_period = 2;
  EXPECT_EQ(sliding_layer_count(c), 18);
  // 128K context, a windowed pool of 152 blocks of 16: 18 x 131072 x 2048 + 18 x 2432 x 2048.
  EXPECT_EQ(kv_pool_bytes(c, DType::F16, 131072, 152 * 16),
            uint64_t{4831838208} + uint64_t{89653248});
  // gpt-oss-20b: 24 layers, 12 sliding.
  c.n_layer = 24;
  EXPECT_EQ(sliding_layer_count(c), 12);
  EXPECT_EQ(kv_pool_bytes(c, DType::F16, 131072, 152 * 16),
            uint64_t{3221225472} + uint64_t{59768832});
  const KvCacheOptions o = with_windowed_pool(kv_cache_options(c, 16, 100, DType::F16), c, 152);
  EXPECT_EQ(o.swa_window, 128);
  ASSERT_EQ(o.swa_layers.size(), 24u);
  EXPECT_EQ(o.swa_layers[0], 1);
  EXPECT_EQ(o.swa_layers[1], 0);
  c.sliding_window = 0;  // no sliding layers: no windowed pool
  EXPECT_EQ(with_windowed_pool(kv_cache_options(c, 16, 100, DType::F16), c, 152).n_swa_blocks, 0);
}

}  // namespace
}  // namespace arc
