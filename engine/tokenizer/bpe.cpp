#include "bpe.h"

#include <algorithm>
#include <queue>

namespace arc {

namespace {

uint64_t mix(uint64_t k) {
  // splitmix64 finaliser: pairs of small ids must spread over the whole table.
  k ^= k >> 30;
  k *= 0xbf58476d1ce4e5b9ULL;
  k ^= k >> 27;
  k *= 0x94d049bb133111ebULL;
  k ^= k >> 31;
  return k;
}

}  // namespace

void BpeMerges::reserve(size_t n) {
  size_t cap = 16;
  while (cap < n * 2) cap <<= 1;
  if (cap <= slots_.size()) return;
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(cap, Slot{});
  mask_ = cap - 1;
  n_ = 0;
  for (const Slot& s : old) {
    if (s.key == 0) continue;
    uint64_t h = mix(s.key) & mask_;
    while (slots_[h].key != 0) h = (h + 1) & mask_;
    slots_[h] = s;
    ++n_;
  }
}

void BpeMerges::grow() {
  reserve(std::max<size_t>(16, n_ * 2 + 2));
}

void BpeMerges::add(TokenId left, TokenId right, uint32_t rank, TokenId result) {
  if ((n_ + 1) * 2 > slots_.size()) grow();
  uint64_t key = pack(left, right);
  uint64_t h = mix(key) & mask_;
  while (slots_[h].key != 0) {
    if (slots_[h].key == key) return;  // first rank wins
    h = (h + 1) & mask_;
  }
  slots_[h].key = key;
  slots_[h].merge = Merge{rank, result};
  ++n_;
}

const BpeMerges::Merge* BpeMerges::find(TokenId left, TokenId right) const {
  if (n_ == 0) return nullptr;
  uint64_t key = pack(left, right);
  uint64_t h = mix(key) & mask_;
  while (true) {
    const Slot& s = slots_[h];
    if (s.key == key) return &s.merge;
    if (s.key == 0) return nullptr;
    h = (h + 1) & mask_;
  }
}

void BpeMerges::apply(std::vector<TokenId>& ids) const {
  const size_t n = ids.size();
  if (n < 2 || n_ == 0) return;
  if (n == 2) {
    if (const Merge* m = find(ids[0], ids[1])) ids = {m->result};
    return;
  }
  if (n <= kSmallWord) {
    apply_small(ids);
    return;
  }
  apply_large(ids);
}

// Short words (almost all of them): the rank of each adjacent pair kept in an array; each round
// scans it for the lowest (leftmost on ties), merges, and looks up only the two new pairs. No
// allocation; O(n^2) scanning is cheaper than a heap at these sizes.
void BpeMerges::apply_small(std::vector<TokenId>& ids) const {
  constexpr uint32_t kNone = UINT32_MAX;
  size_t n = ids.size();
  TokenId sym[kSmallWord];
  uint32_t rank[kSmallWord];   // rank[i]: merge rank of (sym[i], sym[i+1]); kNone when none
  TokenId result[kSmallWord];  // result[i]: the merged token of that pair
  auto look = [&](size_t i) {
    const Merge* m = find(sym[i], sym[i + 1]);
    rank[i] = m ? m->rank : kNone;
    result[i] = m ? m->result : -1;
  };
  for (size_t i = 0; i < n; ++i) sym[i] = ids[i];
  for (size_t i = 0; i + 1 < n; ++i) look(i);
  while (n > 1) {
    size_t best = 0;
    for (size_t i = 1; i + 1 < n; ++i) {
      if (rank[i] < rank[best]) best = i;
    }
    if (rank[best] == kNone) break;
    sym[best] = result[best];
    // Close the gap left by sym[best + 1].
    for (size_t i = best + 1; i + 1 < n; ++i) {
      sym[i] = sym[i + 1];
      rank[i] = rank[i + 1];
      result[i] = result[i + 1];
    }
    --n;
    if (best > 0) look(best - 1);
    if (best + 1 < n) look(best);
  }
  ids.assign(sym, sym + n);
}

void BpeMerges::apply_large(std::vector<TokenId>& ids) const {
  const size_t n = ids.size();
  // Doubly linked list over the symbols; a merged-away symbol gets id -1.
  struct Sym {
    TokenId id;
    int32_t prev, next;
  };
  std::vector<Sym> sym(n);
  for (size_t i = 0; i < n; ++i) {
    sym[i] = Sym{ids[i], int32_t(i) - 1, i + 1 < n ? int32_t(i + 1) : -1};
  }
  struct Cand {
    uint32_t rank;
    int32_t pos;
    TokenId left, right;
    bool operator>(const Cand& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
  };
  std::priority_queue<Cand, std::vector<Cand>, std::greater<>> heap;
  auto push = [&](int32_t pos) {
    if (pos < 0) return;
    int32_t nx = sym[pos].next;
    if (nx < 0) return;
    if (const Merge* m = find(sym[pos].id, sym[nx].id)) {
      heap.push(Cand{m->rank, pos, sym[pos].id, sym[nx].id});
    }
  };
  for (int32_t i = 0; i + 1 < int32_t(n); ++i) push(i);
  while (!heap.empty()) {
    Cand c = heap.top();
    heap.pop();
    Sym& s = sym[c.pos];
    // Stale candidates: the left symbol was merged away or changed, or its right neighbour did.
    if (s.id != c.left || s.next < 0 || sym[s.next].id != c.right) continue;
    const Merge* m = find(c.left, c.right);
    int32_t gone = s.next;
    s.id = m->result;
    s.next = sym[gone].next;
    if (s.next >= 0) sym[s.next].prev = c.pos;
    sym[gone].id = -1;
    push(s.prev);
    push(c.pos);
  }
  ids.clear();
  for (int32_t i = 0; i >= 0; i = sym[i].next) ids.push_back(sym[i].id);
}

}  // namespace arc
