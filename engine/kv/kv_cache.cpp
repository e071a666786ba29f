// Paged KV cache: block allocator and per-sequence block tables.
#include "arc/kv_cache.h"

#include "arc/kv_window.h"

#include <algorithm>
#include <iterator>
#include <string>

namespace arc {

BlockAllocator::BlockAllocator(int32_t n_blocks)
    : n_blocks_(n_blocks),
      ref_(static_cast<size_t>(n_blocks), 0),
      hash_(static_cast<size_t>(n_blocks), 0),
      tokens_(static_cast<size_t>(n_blocks)),
      lru_pos_(static_cast<size_t>(n_blocks)),
      in_lru_(static_cast<size_t>(n_blocks), false) {
  free_.reserve(static_cast<size_t>(n_blocks));
  for (int32_t b = n_blocks - 1; b >= 0; --b) free_.push_back(b);
}

void BlockAllocator::forget(int32_t block) {
  if (hash_[block] != 0) {
    auto it = by_hash_.find(hash_[block]);
    if (it != by_hash_.end() && it->second == block) by_hash_.erase(it);
    hash_[block] = 0;
    tokens_[block].clear();
  }
}

Result<int32_t> BlockAllocator::allocate() {
  int32_t b;
  if (!free_.empty()) {
    b = free_.back();
    free_.pop_back();
  } else if (!lru_.empty()) {
    b = lru_.front();
    lru_.pop_front();
    in_lru_[b] = false;
    forget(b);
  } else {
    return resource_exhausted("KV cache: no free blocks");
  }
  ref_[b] = 1;
  return b;
}

void BlockAllocator::retain(int32_t block) {
  if (ref_[block]++ == 0 && in_lru_[block]) {
    lru_.erase(lru_pos_[block]);
    in_lru_[block] = false;
  }
}

void BlockAllocator::release(int32_t block) {
  if (ref_[block] <= 0) return;
  if (--ref_[block] > 0) return;
  if (hash_[block] != 0) {
    lru_.push_back(block);
    lru_pos_[block] = std::prev(lru_.end());
    in_lru_[block] = true;
  } else {
    free_.push_back(block);
  }
}

void BlockAllocator::index(int32_t block, uint64_t hash, std::vector<int32_t> tokens) {
  if (hash == 0 || by_hash_.count(hash) != 0 || hash_[block] != 0) return;
  hash_[block] = hash;
  tokens_[block] = std::move(tokens);
  by_hash_.emplace(hash, block);
}

int32_t BlockAllocator::lookup(uint64_t hash, std::span<const int32_t> tokens) const {
  auto it = by_hash_.find(hash);
  if (it == by_hash_.end()) return -1;
  const auto& held = tokens_[it->second];
  // A 64-bit hash can collide; the stored tokens make a hit certain.
  if (!std::equal(held.begin(), held.end(), tokens.begin(), tokens.end())) return -1;
  return it->second;
}

uint64_t kv_block_hash(uint64_t parent, std::span<const int32_t> tokens) {
  // splitmix64-style mixing; 0 is reserved for "not indexed".
  uint64_t h = parent ^ 0x9e3779b97f4a7c15ULL;
  for (int32_t t : tokens) {
    h ^= static_cast<uint64_t>(static_cast<uint32_t>(t)) + 0x9e3779b97f4a7c15ULL + (h << 6) +
         (h >> 2);
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebULL;
    h ^= h >> 31;
  }
  return h == 0 ? 1 : h;
}

Result<std::unique_ptr<KvCache>> KvCache::create(Backend& backend, const KvCacheOptions& opt) {
  if (opt.n_layer <= 0 || opt.n_kv_head <= 0 || opt.head_dim <= 0 || opt.block_size <= 0 ||
      opt.n_blocks <= 0 || opt.n_blocks > (int64_t{1} << 30) / opt.block_size) {
    return invalid_argument(
        "KV cache: layers, heads, head dim, block size and block count must "
        "be positive (and blocks x block size < 2^30)");
  }
  if (opt.type != DType::F16 && opt.type != DType::F32) {
    return invalid_argument("KV cache type must be F16 or F32");
  }
  if (opt.n_swa_blocks > 0 && (opt.latent || opt.swa_window <= 0 ||
                               opt.swa_layers.size() != static_cast<size_t>(opt.n_layer) ||
                               opt.n_swa_blocks > (int64_t{1} << 30) / opt.block_size)) {
    return invalid_argument(
        "KV cache: a windowed pool needs a window, a flag per layer and no latent attention");
  }
  std::unique_ptr<KvCache> kv(new KvCache(opt));
  if (opt.n_swa_blocks > 0) {
    kv->swa_ = std::make_unique<WindowedBlocks>(static_cast<int32_t>(opt.n_swa_blocks),
                                                opt.block_size, opt.swa_window);
  }
  const bool hybrid = !opt.recurrent_layers.empty();
  if (hybrid) {
    if (opt.recurrent_layers.size() != static_cast<size_t>(opt.n_layer) || opt.latent ||
        opt.n_swa_blocks > 0) {
      return invalid_argument(
          "KV cache: recurrent layers need a flag per layer, and neither latent attention nor a "
          "windowed pool");
    }
    RecurrentStateOptions ro;
    kv->state_index_.assign(static_cast<size_t>(opt.n_layer), -1);
    for (int64_t l = 0; l < opt.n_layer; ++l) {
      if (opt.recurrent_layers[l] != 0) kv->state_index_[l] = ro.n_layers++;
    }
    ro.conv_floats = opt.state_conv_floats;
    ro.delta_floats = opt.state_delta_floats;
    ro.n_seqs = opt.state_seqs;
    ro.n_snapshots = opt.state_snapshots;
    ARC_ASSIGN_OR_RETURN(kv->state_, RecurrentState::create(backend, ro));
  }
  for (int64_t l = 0; l < opt.n_layer; ++l) {
    if (hybrid && opt.recurrent_layers[l] != 0) {  // no K/V in a recurrent layer
      kv->k_.push_back(nullptr);
      kv->v_.push_back(nullptr);
      continue;
    }
    const size_t bytes = kv->layer_bytes(l);
    ARC_ASSIGN_OR_RETURN(auto k, backend.alloc(bytes));
    kv->k_.push_back(std::move(k));
    if (opt.latent) continue;  // MLA: the latent row is both
    ARC_ASSIGN_OR_RETURN(auto v, backend.alloc(bytes));
    kv->v_.push_back(std::move(v));
  }
  return kv;
}

KvCache::KvCache(const KvCacheOptions& opt)
    : opt_(opt), alloc_(static_cast<int32_t>(opt.n_blocks)) {}

KvCache::~KvCache() = default;

size_t KvCache::layer_bytes() const {
  const size_t elem = opt_.type == DType::F16 ? 2 : 4;
  return static_cast<size_t>(opt_.n_blocks * opt_.block_size * opt_.n_kv_head * opt_.head_dim) *
         elem;
}

size_t KvCache::layer_bytes(int64_t layer) const {
  const size_t elem = opt_.type == DType::F16 ? 2 : 4;
  return static_cast<size_t>(layer_blocks(layer) * opt_.block_size * opt_.n_kv_head *
                             opt_.head_dim) *
         elem;
}

const std::vector<int32_t>& KvCache::window_blocks(int32_t seq) const {
  return swa_->table(seq);
}

int32_t KvCache::window_slot(int32_t seq, int64_t pos) const {
  return swa_->slot(seq, pos);
}

void KvCache::set_window_blocks(int32_t seq, std::span<const int32_t> blocks) {
  if (swa_ != nullptr && seq >= 0) swa_->set(seq, blocks);
}

int32_t KvCache::add_sequence() {
  for (size_t i = 0; i < live_.size(); ++i) {
    if (!live_[i]) {
      live_[i] = true;
      indexed_blocks_[i] = 0;
      chain_hash_[i] = 0;
      if (swa_) swa_->reset(static_cast<int32_t>(i));
      if (state_) (void)state_->acquire(static_cast<int32_t>(i));  // refused later if it failed
      return static_cast<int32_t>(i);
    }
  }
  live_.push_back(true);
  tables_.emplace_back();
  indexed_blocks_.push_back(0);
  chain_hash_.push_back(0);
  if (swa_) swa_->reset(static_cast<int32_t>(live_.size() - 1));
  if (state_) (void)state_->acquire(static_cast<int32_t>(live_.size() - 1));
  return static_cast<int32_t>(live_.size() - 1);
}

Status KvCache::reserve(int32_t seq, int64_t n_tokens) {
  if (seq < 0 || static_cast<size_t>(seq) >= live_.size() || !live_[seq]) {
    return invalid_argument("KV cache: unknown sequence " + std::to_string(seq));
  }
  std::vector<int32_t>& table = tables_[seq];
  const int64_t need = (n_tokens + opt_.block_size - 1) / opt_.block_size;
  const int64_t more = need - static_cast<int64_t>(table.size());
  if (more > alloc_.n_available()) {
    return resource_exhausted("KV cache full: sequence needs " + std::to_string(more) +
                              " more blocks, " + std::to_string(alloc_.n_available()) + " free");
  }
  if (swa_) {
    const int64_t w_more = swa_->missing(seq, need);
    if (w_more > swa_->n_available()) {
      return resource_exhausted("KV cache full: sequence needs " + std::to_string(w_more) +
                                " more sliding-window blocks, " +
                                std::to_string(swa_->n_available()) + " free");
    }
    swa_->grow(seq, need);
  }
  for (int64_t i = 0; i < more; ++i) table.push_back(*alloc_.allocate());
  return ok_status();
}

void KvCache::free_sequence(int32_t seq) {
  if (seq < 0 || static_cast<size_t>(seq) >= live_.size() || !live_[seq]) return;
  // Deepest blocks first, so the LRU evicts a prefix's tail before its root.
  for (auto it = tables_[seq].rbegin(); it != tables_[seq].rend(); ++it) alloc_.release(*it);
  tables_[seq].clear();
  if (swa_) swa_->free(seq);
  if (state_) state_->release(seq);
  indexed_blocks_[seq] = 0;
  chain_hash_[seq] = 0;
  live_[seq] = false;
}

void KvCache::set_blocks(int32_t seq, std::span<const int32_t> blocks) {
  if (seq < 0) return;
  while (live_.size() <= static_cast<size_t>(seq)) {
    live_.push_back(false);
    tables_.emplace_back();
    indexed_blocks_.push_back(0);
    chain_hash_.push_back(0);
  }
  live_[seq] = true;
  tables_[seq].assign(blocks.begin(), blocks.end());
}

int64_t KvCache::attach_cached_prefix(int32_t seq, std::span<const int32_t> tokens, uint64_t root) {
  if (seq < 0 || static_cast<size_t>(seq) >= live_.size() || !live_[seq] || !tables_[seq].empty() ||
      tokens.empty()) {
    return 0;
  }
  const int64_t bs = opt_.block_size;
  const int64_t n_full = (static_cast<int64_t>(tokens.size()) - 1) / bs;
  std::vector<uint64_t> hashes;  // [i] chain hash of the prefix up to and with block i
  std::vector<int32_t> found;
  uint64_t h = root;
  for (int64_t i = 0; i < n_full; ++i) {
    auto block_tokens = tokens.subspan(static_cast<size_t>(i * bs), static_cast<size_t>(bs));
    uint64_t next = kv_block_hash(h, block_tokens);
    int32_t b = alloc_.lookup(next, block_tokens);
    if (b < 0) break;
    hashes.push_back(next);
    found.push_back(b);
    h = next;
  }
  // With a windowed pool, only a prefix whose last window is cached there too.
  int64_t attached =
      swa_ ? swa_->usable_prefix(hashes, tokens) : static_cast<int64_t>(found.size());
  if (state_) {
    // The recurrent layers resume only where a snapshot of their state was filed: the deepest
    // such block boundary; the blocks past it are computed again (and their K/V rewritten).
    while (attached > 0 && !state_->has(hashes[static_cast<size_t>(attached - 1)])) --attached;
    if (attached > 0 &&
        !state_->restore(seq, hashes[static_cast<size_t>(attached - 1)], attached * bs)) {
      attached = 0;
    }
  }
  for (int64_t i = 0; i < attached; ++i) {
    alloc_.retain(found[static_cast<size_t>(i)]);
    tables_[seq].push_back(found[static_cast<size_t>(i)]);
  }
  if (swa_ && attached > 0) swa_->attach(seq, hashes, tokens, attached);
  indexed_blocks_[seq] = attached;
  chain_hash_[seq] = attached > 0 ? hashes[static_cast<size_t>(attached - 1)] : root;
  return attached * bs;
}

void KvCache::commit(int32_t seq, std::span<const int32_t> tokens, int64_t n_written) {
  if (seq < 0 || static_cast<size_t>(seq) >= live_.size() || !live_[seq]) return;
  const int64_t bs = opt_.block_size;
  n_written = std::min<int64_t>(n_written, static_cast<int64_t>(tokens.size()));
  const int64_t full = std::min<int64_t>(n_written / bs, static_cast<int64_t>(tables_[seq].size()));
  for (int64_t i = indexed_blocks_[seq]; i < full; ++i) {
    auto block_tokens = tokens.subspan(static_cast<size_t>(i * bs), static_cast<size_t>(bs));
    chain_hash_[seq] = kv_block_hash(chain_hash_[seq], block_tokens);
    alloc_.index(tables_[seq][static_cast<size_t>(i)], chain_hash_[seq],
                 std::vector<int32_t>(block_tokens.begin(), block_tokens.end()));
    if (swa_) swa_->index(seq, i, chain_hash_[seq], block_tokens);
    if (state_) state_->file(seq, i + 1, chain_hash_[seq]);
  }
  indexed_blocks_[seq] = std::max(indexed_blocks_[seq], full);
  // Blocks the next query's window no longer reaches go back to the windowed pool (cached, so
  // a later request with this prefix can still find them while they last).
  if (swa_) swa_->release_behind(seq, n_written);
}

int64_t KvCache::capacity(int32_t seq) const {
  return static_cast<int64_t>(tables_[seq].size()) * opt_.block_size;
}

int32_t KvCache::slot(int32_t seq, int64_t pos) const {
  const int32_t block = tables_[seq][static_cast<size_t>(pos / opt_.block_size)];
  return static_cast<int32_t>(block * opt_.block_size + pos % opt_.block_size);
}

}  // namespace arc
