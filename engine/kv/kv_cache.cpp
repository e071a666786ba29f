// Paged KV cache: block allocator and per-sequence block tables.
#include "arc/kv_cache.h"

#include <algorithm>
#include <string>

namespace arc {

BlockAllocator::BlockAllocator(int32_t n_blocks) : n_blocks_(n_blocks) {
  free_.reserve(static_cast<size_t>(n_blocks));
  for (int32_t b = n_blocks - 1; b >= 0; --b) free_.push_back(b);
}

Result<int32_t> BlockAllocator::allocate() {
  if (free_.empty()) return resource_exhausted("KV cache: no free blocks");
  int32_t b = free_.back();
  free_.pop_back();
  return b;
}

void BlockAllocator::release(int32_t block) {
  free_.push_back(block);
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
  std::unique_ptr<KvCache> kv(new KvCache(opt));
  const size_t bytes = kv->layer_bytes();
  for (int64_t l = 0; l < opt.n_layer; ++l) {
    ARC_ASSIGN_OR_RETURN(auto k, backend.alloc(bytes));
    ARC_ASSIGN_OR_RETURN(auto v, backend.alloc(bytes));
    kv->k_.push_back(std::move(k));
    kv->v_.push_back(std::move(v));
  }
  return kv;
}

size_t KvCache::layer_bytes() const {
  const size_t elem = opt_.type == DType::F16 ? 2 : 4;
  return static_cast<size_t>(opt_.n_blocks * opt_.block_size * opt_.n_kv_head * opt_.head_dim) *
         elem;
}

int32_t KvCache::add_sequence() {
  for (size_t i = 0; i < live_.size(); ++i) {
    if (!live_[i]) {
      live_[i] = true;
      return static_cast<int32_t>(i);
    }
  }
  live_.push_back(true);
  tables_.emplace_back();
  return static_cast<int32_t>(live_.size() - 1);
}

Status KvCache::reserve(int32_t seq, int64_t n_tokens) {
  if (seq < 0 || static_cast<size_t>(seq) >= live_.size() || !live_[seq]) {
    return invalid_argument("KV cache: unknown sequence " + std::to_string(seq));
  }
  std::vector<int32_t>& table = tables_[seq];
  const int64_t need = (n_tokens + opt_.block_size - 1) / opt_.block_size;
  const int64_t more = need - static_cast<int64_t>(table.size());
  if (more <= 0) return ok_status();
  if (more > alloc_.n_free()) {
    return resource_exhausted("KV cache full: sequence needs " + std::to_string(more) +
                              " more blocks, " + std::to_string(alloc_.n_free()) + " free");
  }
  for (int64_t i = 0; i < more; ++i) table.push_back(*alloc_.allocate());
  return ok_status();
}

void KvCache::free_sequence(int32_t seq) {
  if (seq < 0 || static_cast<size_t>(seq) >= live_.size() || !live_[seq]) return;
  for (int32_t b : tables_[seq]) alloc_.release(b);
  tables_[seq].clear();
  live_[seq] = false;
}

int64_t KvCache::capacity(int32_t seq) const {
  return static_cast<int64_t>(tables_[seq].size()) * opt_.block_size;
}

int32_t KvCache::slot(int32_t seq, int64_t pos) const {
  const int32_t block = tables_[seq][static_cast<size_t>(pos / opt_.block_size)];
  return static_cast<int32_t>(block * opt_.block_size + pos % opt_.block_size);
}

}  // namespace arc
