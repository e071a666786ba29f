#include <gtest/gtest.h>

#include <set>

#include "arc/kv_cache.h"

namespace arc {
namespace {

TEST(BlockAllocator, HandsOutEachBlockOnceAndReuses) {
  BlockAllocator a(3);
  std::set<int32_t> got;
  for (int i = 0; i < 3; ++i) got.insert(*a.allocate());
  EXPECT_EQ(got, (std::set<int32_t>{0, 1, 2}));
  EXPECT_FALSE(a.allocate().ok());
  a.release(1);
  EXPECT_EQ(*a.allocate(), 1);
}

TEST(KvCache, TablesAndSlots) {
  auto be = make_cpu_backend(1);
  auto kv = KvCache::create(*be, {2, 2, 8, 4, 5, DType::F16});
  ASSERT_TRUE(kv.ok());
  EXPECT_EQ((*kv)->layer_bytes(), size_t{5 * 4 * 2 * 8 * 2});
  int32_t a = (*kv)->add_sequence(), b = (*kv)->add_sequence();
  ASSERT_TRUE((*kv)->reserve(a, 5).ok());  // 2 blocks
  ASSERT_TRUE((*kv)->reserve(b, 4).ok());  // 1 block
  EXPECT_EQ((*kv)->capacity(a), 8);
  EXPECT_EQ((*kv)->n_free_blocks(), 2);
  const auto& ta = (*kv)->blocks(a);
  EXPECT_EQ((*kv)->slot(a, 6), ta[1] * 4 + 2);
  Status s = (*kv)->reserve(b, 13);  // needs 3 more, 2 free
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ((*kv)->blocks(b).size(), 1u);  // nothing allocated on failure
  (*kv)->free_sequence(a);
  EXPECT_EQ((*kv)->n_free_blocks(), 4);
  EXPECT_EQ((*kv)->add_sequence(), a);  // ids are reused
  EXPECT_FALSE((*kv)->reserve(99, 1).ok());
}

// A tensor-parallel worker's cache takes rank 0's tables as they are: slots follow them, and a
// sequence id beyond the known ones is created.
TEST(KvCache, SetBlocksFollowsAnotherCachesTables) {
  auto be = make_cpu_backend(1);
  auto kv = KvCache::create(*be, {1, 1, 8, 4, 6, DType::F32});
  ASSERT_TRUE(kv.ok());
  const std::vector<int32_t> table = {5, 0, 3};
  (*kv)->set_blocks(3, table);
  EXPECT_EQ((*kv)->blocks(3), table);
  EXPECT_EQ((*kv)->capacity(3), 12);
  EXPECT_EQ((*kv)->slot(3, 0), 20);                        // block 5, row 0
  EXPECT_EQ((*kv)->slot(3, 6), 2);                         // block 0, row 2
  EXPECT_EQ((*kv)->slot(3, 11), 15);                       // block 3, row 3
  (*kv)->set_blocks(3, std::vector<int32_t>{5, 0, 3, 1});  // the next step's longer table
  EXPECT_EQ((*kv)->slot(3, 12), 4);
  EXPECT_EQ((*kv)->blocks(0).size(), 0u);  // ids below it exist, empty
}

}  // namespace
}  // namespace arc
