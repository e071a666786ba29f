// Paged KV cache: a pool of fixed-size blocks per layer, handed out to sequences through
// per-sequence block tables. Position p of a sequence lives in block table[p / block_size], row
// p % block_size; its slot (what kv_store writes) is block * block_size + row.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "arc/backend.h"
#include "arc/kernels/dtype.h"
#include "arc/status.h"

namespace arc {

// Free list of block ids [0, n_blocks). Lowest ids first, so runs are reproducible.
class BlockAllocator {
 public:
  explicit BlockAllocator(int32_t n_blocks);
  Result<int32_t> allocate();
  void release(int32_t block);
  int32_t n_free() const { return static_cast<int32_t>(free_.size()); }
  int32_t n_blocks() const { return n_blocks_; }

 private:
  int32_t n_blocks_;
  std::vector<int32_t> free_;  // a stack; the back is handed out next
};

struct KvCacheOptions {
  int64_t n_layer = 0;
  int64_t n_kv_head = 0;
  int64_t head_dim = 0;
  int64_t block_size = 16;
  int64_t n_blocks = 0;
  DType type = DType::F16;  // F16 or F32
};

class KvCache {
 public:
  static Result<std::unique_ptr<KvCache>> create(Backend& backend, const KvCacheOptions& opt);

  const KvCacheOptions& options() const { return opt_; }
  // Bytes of one layer's K (or V) pool: [n_blocks, block_size, n_kv_head, head_dim].
  size_t layer_bytes() const;
  void* k(int64_t layer) { return k_[layer]->data(); }
  void* v(int64_t layer) { return v_[layer]->data(); }

  // Sequences: ids are small integers reused after free.
  int32_t add_sequence();
  // Makes room for positions [0, n_tokens) of `seq`; fails (allocating nothing) when the pool
  // is short.
  Status reserve(int32_t seq, int64_t n_tokens);
  void free_sequence(int32_t seq);
  const std::vector<int32_t>& blocks(int32_t seq) const { return tables_[seq]; }
  int64_t capacity(int32_t seq) const;  // positions reserved
  int32_t slot(int32_t seq, int64_t pos) const;
  int32_t n_free_blocks() const { return alloc_.n_free(); }

 private:
  KvCache(const KvCacheOptions& opt) : opt_(opt), alloc_(static_cast<int32_t>(opt.n_blocks)) {}
  KvCacheOptions opt_;
  BlockAllocator alloc_;
  std::vector<std::unique_ptr<DeviceBuffer>> k_, v_;  // [n_layer]
  std::vector<std::vector<int32_t>> tables_;          // [seq] -> block ids
  std::vector<bool> live_;
};

}  // namespace arc
