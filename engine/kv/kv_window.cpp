// Windowed KV for sliding-window layers: the block tables and pool of those layers (kv_window.h).
#include "arc/kv_window.h"

#include <algorithm>

namespace arc {

WindowedBlocks::WindowedBlocks(int32_t n_blocks, int64_t block_size, int64_t window)
    : block_size_(block_size), window_(window), alloc_(n_blocks) {}

int64_t WindowedBlocks::floor_for(int64_t n_written) const {
  return std::max<int64_t>(0, n_written - window_ + 1) / block_size_;
}

void WindowedBlocks::ensure(int32_t seq) {
  while (tables_.size() <= static_cast<size_t>(seq)) {
    tables_.emplace_back();
    floor_.push_back(0);
  }
}

void WindowedBlocks::reset(int32_t seq) {
  ensure(seq);
  free(seq);
}

int64_t WindowedBlocks::missing(int32_t seq, int64_t need) const {
  const auto& t = tables_[static_cast<size_t>(seq)];
  // Entries below the floor are never filled again; the table grows from its end.
  const int64_t from = std::max(static_cast<int64_t>(t.size()), floor_[static_cast<size_t>(seq)]);
  return std::max<int64_t>(0, need - from);
}

void WindowedBlocks::grow(int32_t seq, int64_t need) {
  auto& t = tables_[static_cast<size_t>(seq)];
  const int64_t fl = floor_[static_cast<size_t>(seq)];
  while (static_cast<int64_t>(t.size()) < need) {
    const bool behind = static_cast<int64_t>(t.size()) < fl;
    t.push_back(behind ? kNoBlock : *alloc_.allocate());
  }
}

void WindowedBlocks::free(int32_t seq) {
  if (static_cast<size_t>(seq) >= tables_.size()) return;
  // Oldest first: the LRU then evicts a finished sequence's older blocks before its last window,
  // the part a follow-up request (the same conversation, one turn on) can reuse.
  for (int32_t& b : tables_[static_cast<size_t>(seq)]) {
    if (b != kNoBlock) alloc_.release(b);
    b = kNoBlock;
  }
  tables_[static_cast<size_t>(seq)].clear();
  floor_[static_cast<size_t>(seq)] = 0;
}

void WindowedBlocks::set(int32_t seq, std::span<const int32_t> blocks) {
  ensure(seq);
  tables_[static_cast<size_t>(seq)].assign(blocks.begin(), blocks.end());
}

int64_t WindowedBlocks::usable_prefix(std::span<const uint64_t> hashes,
                                      std::span<const int32_t> tokens) const {
  const auto cached = [&](int64_t i) {
    auto block_tokens =
        tokens.subspan(static_cast<size_t>(i * block_size_), static_cast<size_t>(block_size_));
    return alloc_.lookup(hashes[static_cast<size_t>(i)], block_tokens) >= 0;
  };
  // Scanning down from the longest prefix: a missing entry rules out every prefix whose window
  // holds it, so the next candidate ends just below it (each entry is looked up at most once).
  int64_t n = static_cast<int64_t>(hashes.size());
  while (n > 0) {
    const int64_t lo = floor_for(n * block_size_);
    int64_t i = n;
    while (i > lo && cached(i - 1)) --i;
    if (i <= lo) return n;
    n = i - 1;
  }
  return 0;
}

void WindowedBlocks::attach(int32_t seq, std::span<const uint64_t> hashes,
                            std::span<const int32_t> tokens, int64_t n) {
  ensure(seq);
  auto& t = tables_[static_cast<size_t>(seq)];
  const int64_t lo = floor_for(n * block_size_);
  t.assign(static_cast<size_t>(n), kNoBlock);
  for (int64_t i = lo; i < n; ++i) {
    auto block_tokens =
        tokens.subspan(static_cast<size_t>(i * block_size_), static_cast<size_t>(block_size_));
    const int32_t b = alloc_.lookup(hashes[static_cast<size_t>(i)], block_tokens);
    alloc_.retain(b);  // usable_prefix(n) found every one of them
    t[static_cast<size_t>(i)] = b;
  }
  floor_[static_cast<size_t>(seq)] = lo;
}

void WindowedBlocks::index(int32_t seq, int64_t i, uint64_t hash,
                           std::span<const int32_t> block_tokens) {
  const auto& t = tables_[static_cast<size_t>(seq)];
  if (i >= static_cast<int64_t>(t.size()) || t[static_cast<size_t>(i)] == kNoBlock) return;
  alloc_.index(t[static_cast<size_t>(i)], hash,
               std::vector<int32_t>(block_tokens.begin(), block_tokens.end()));
}

void WindowedBlocks::release_behind(int32_t seq, int64_t n_written) {
  auto& t = tables_[static_cast<size_t>(seq)];
  int64_t& fl = floor_[static_cast<size_t>(seq)];
  const int64_t to = std::min<int64_t>(floor_for(n_written), static_cast<int64_t>(t.size()));
  for (int64_t i = fl; i < to; ++i) {
    if (t[static_cast<size_t>(i)] != kNoBlock) alloc_.release(t[static_cast<size_t>(i)]);
    t[static_cast<size_t>(i)] = kNoBlock;
  }
  fl = std::max(fl, to);
}

int32_t WindowedBlocks::slot(int32_t seq, int64_t pos) const {
  const auto& t = tables_[static_cast<size_t>(seq)];
  const int64_t i = pos / block_size_;
  if (i >= static_cast<int64_t>(t.size()) || t[static_cast<size_t>(i)] == kNoBlock) return -1;
  return static_cast<int32_t>(t[static_cast<size_t>(i)] * block_size_ + pos % block_size_);
}

int64_t windowed_pool_blocks(int64_t window, int64_t block_size, int64_t max_parallel,
                             int64_t max_batch_tokens, int64_t full_blocks) {
  const int64_t bs = std::max<int64_t>(block_size, 1);
  const int64_t per_seq = (window - 1 + bs - 1) / bs + 2;
  const int64_t step = (max_batch_tokens + bs - 1) / bs + max_parallel;
  const int64_t need = 2 * (max_parallel * per_seq + step);
  return std::min(need, full_blocks);
}

int64_t sliding_layer_count(const ModelConfig& c) {
  if (c.mla() || c.sliding_window <= 0) return 0;
  int64_t n = 0;
  for (int64_t l = 0; l < c.n_layer; ++l) n += c.layer_is_swa(l) ? 1 : 0;
  return n;
}

KvCacheOptions with_windowed_pool(KvCacheOptions o, const ModelConfig& c, int64_t n_swa_blocks) {
  if (sliding_layer_count(c) == 0 || n_swa_blocks <= 0) return o;
  o.swa_window = c.sliding_window;
  o.n_swa_blocks = n_swa_blocks;
  o.swa_layers.assign(static_cast<size_t>(c.n_layer), 0);
  for (int64_t l = 0; l < c.n_layer; ++l) o.swa_layers[static_cast<size_t>(l)] = c.layer_is_swa(l);
  return o;
}

uint64_t kv_pool_bytes(const ModelConfig& c, DType type, int64_t full_tokens, int64_t swa_tokens) {
  const uint64_t elem = type == DType::F16 ? 2 : 4;
  const uint64_t per_layer = static_cast<uint64_t>(c.kv_values_per_token() / c.n_layer) * elem;
  const auto swa = static_cast<uint64_t>(sliding_layer_count(c));
  const auto full = static_cast<uint64_t>(c.n_layer) - swa;
  return per_layer *
         (full * static_cast<uint64_t>(full_tokens) + swa * static_cast<uint64_t>(swa_tokens));
}

}  // namespace arc
