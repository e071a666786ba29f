// BPE merging over token ids: a merge table keyed by the (left, right) id pair and the merge
// loop (lowest rank first, leftmost first among equal ranks — the Hugging Face order).
#pragma once

#include <cstdint>
#include <vector>

#include "arc/tokenizer.h"

namespace arc {

class BpeMerges {
 public:
  struct Merge {
    uint32_t rank;
    TokenId result;
  };

  void reserve(size_t n);
  // Keeps the first rank when a pair repeats (as the reference does).
  void add(TokenId left, TokenId right, uint32_t rank, TokenId result);
  const Merge* find(TokenId left, TokenId right) const;
  size_t size() const { return n_; }

  // Calls f(left, right, rank, result) for every merge, in no particular order.
  template <typename F>
  void for_each(F&& f) const {
    for (const Slot& s : slots_) {
      if (s.key == 0) continue;
      uint64_t k = s.key - 1;
      f(TokenId(k >> 32), TokenId(uint32_t(k)), s.merge.rank, s.merge.result);
    }
  }

  // Merges `ids` in place until no adjacent pair has a merge.
  void apply(std::vector<TokenId>& ids) const;

 private:
  // Open addressing, linear probing; key 0 marks an empty slot (pairs are stored as key+1).
  struct Slot {
    uint64_t key = 0;
    Merge merge{};
  };
  static uint64_t pack(TokenId l, TokenId r) {
    return ((uint64_t(uint32_t(l)) << 32) | uint32_t(r)) + 1;
  }
  static constexpr size_t kSmallWord = 48;
  void apply_small(std::vector<TokenId>& ids) const;
  void apply_large(std::vector<TokenId>& ids) const;  // heap + linked list: O(n log n)
  void grow();
  std::vector<Slot> slots_;
  size_t n_ = 0;
  uint64_t mask_ = 0;
};

}  // namespace arc
