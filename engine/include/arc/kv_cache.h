// Paged KV cache: a pool of fixed-size blocks per layer, handed out to sequences through
// per-sequence block tables. Position p of a sequence lives in block table[p / block_size], row
// p % block_size; its slot (what kv_store writes) is block * block_size + row.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "arc/backend.h"
#include "arc/kernels/dtype.h"
#include "arc/model_config.h"
#include "arc/recurrent_state.h"
#include "arc/status.h"

namespace arc {

// Block pool with reference counts and a prefix index. A block is free, in use by one or more
// sequences (shared prefix blocks), or cached: unreferenced but still holding the K/V of a
// hashed, full block that a later request with the same prefix can reuse. Cached blocks are
// evicted least-recently-used when the free list runs dry.
class BlockAllocator {
 public:
  explicit BlockAllocator(int32_t n_blocks);
  // A free block, else the least recently used cached one (its hash is dropped).
  Result<int32_t> allocate();
  void retain(int32_t block);
  // Drops one reference; at zero the block becomes cached (hashed) or free.
  void release(int32_t block);
  int32_t n_available() const { return static_cast<int32_t>(free_.size() + lru_.size()); }
  int32_t n_free() const { return n_available(); }
  int32_t n_cached() const { return static_cast<int32_t>(lru_.size()); }
  int32_t n_blocks() const { return n_blocks_; }
  int32_t refs(int32_t block) const { return ref_[block]; }

  // Prefix index: full blocks by the hash of (parent hash, their tokens).
  void index(int32_t block, uint64_t hash, std::vector<int32_t> tokens);
  // The block holding exactly `tokens` after the prefix with hash `parent` (hash = hash of
  // both), or -1.
  int32_t lookup(uint64_t hash, std::span<const int32_t> tokens) const;
  bool indexed(uint64_t hash) const { return by_hash_.count(hash) != 0; }

 private:
  void forget(int32_t block);
  int32_t n_blocks_;
  std::vector<int32_t> free_;  // a stack; the back is handed out next
  std::vector<int32_t> ref_;
  std::vector<uint64_t> hash_;                // 0: not indexed
  std::vector<std::vector<int32_t>> tokens_;  // tokens of an indexed block (verifies hits)
  std::unordered_map<uint64_t, int32_t> by_hash_;
  std::list<int32_t> lru_;  // cached blocks, least recently used first
  std::vector<std::list<int32_t>::iterator> lru_pos_;
  std::vector<bool> in_lru_;
};

// Chain hash of a full block: parent hash and the block's token ids.
uint64_t kv_block_hash(uint64_t parent, std::span<const int32_t> tokens);

struct KvCacheOptions {
  int64_t n_layer = 0;
  int64_t n_kv_head = 0;
  int64_t head_dim = 0;
  int64_t block_size = 16;
  int64_t n_blocks = 0;
  DType type = DType::F16;  // F16 or F32
  // Multi-head latent attention: one pool per layer of head_dim values per token (the latent and
  // the rope key, kernels/mla.h), n_kv_head 1, and no V pool.
  bool latent = false;
  // Sliding-window layers in a windowed pool (arc/kv_window.h): the layers marked in swa_layers
  // keep their K/V in a pool of n_swa_blocks blocks that holds only each sequence's last
  // swa_window positions. 0 / empty: every layer in the main pool (the window is then only a
  // mask, as before).
  int64_t swa_window = 0;
  int64_t n_swa_blocks = 0;
  std::vector<uint8_t> swa_layers;  // [n_layer] 1: a sliding-window layer
  // Hybrid models (qwen3next): the layers marked here are Gated DeltaNet layers with no K/V
  // pool; their per-sequence recurrent state and its prefix snapshots live in a RecurrentState
  // (arc/recurrent_state.h) of state_seqs live slots and state_snapshots snapshot slots.
  std::vector<uint8_t> recurrent_layers;  // [n_layer] 1: a recurrent layer; empty: none
  int64_t state_conv_floats = 0;
  int64_t state_delta_floats = 0;
  int64_t state_seqs = 0;
  int64_t state_snapshots = 0;
};

// Default live state slots and snapshot slots of a hybrid model's cache (the server sizes them
// from --parallel, sched/model_loader.cpp). Qwen3-Next-80B's state is 79 MB a slot.
inline constexpr int64_t kDefaultStateSeqs = 16;
inline constexpr int64_t kDefaultStateSnapshots = 16;

// The pool a model needs: K and V of n_kv_head x head_dim per token and layer, or for MLA one
// row of kv_lora_rank + rot_dim.
inline KvCacheOptions kv_cache_options(const ModelConfig& c, int64_t block_size, int64_t n_blocks,
                                       DType type) {
  KvCacheOptions o{c.n_layer, c.n_kv_head, c.head_dim, block_size, n_blocks, type};
  if (c.mla()) {
    o.n_kv_head = 1;
    o.head_dim = c.kv_lora_rank + c.rot_dim;
    o.latent = true;
  }
  if (c.hybrid()) {
    o.recurrent_layers.resize(static_cast<size_t>(c.n_layer));
    for (int64_t l = 0; l < c.n_layer; ++l) o.recurrent_layers[l] = c.layer_recurrent(l) ? 1 : 0;
    o.state_conv_floats = c.ssm_conv_state_floats();
    o.state_delta_floats = c.ssm_delta_state_floats();
    o.state_seqs = kDefaultStateSeqs;
    o.state_snapshots = kDefaultStateSnapshots;
  }
  return o;
}

class WindowedBlocks;

class KvCache {
 public:
  static Result<std::unique_ptr<KvCache>> create(Backend& backend, const KvCacheOptions& opt);
  ~KvCache();

  const KvCacheOptions& options() const { return opt_; }
  // Bytes of one layer's K (or V, or latent) pool: n_blocks * block_size * n_kv_head * head_dim
  // values, in the order of the backend's layout (kernels::KvLayout).
  size_t layer_bytes() const;
  // The same for `layer`: a windowed layer's pool has n_swa_blocks blocks.
  size_t layer_bytes(int64_t layer) const;
  void* k(int64_t layer) { return k_[layer] ? k_[layer]->data() : nullptr; }
  void* v(int64_t layer) { return opt_.latent || !v_[layer] ? nullptr : v_[layer]->data(); }

  // Hybrid models: the recurrent state (null otherwise) and a recurrent layer's pools.
  RecurrentState* state() { return state_.get(); }
  const RecurrentState* state() const { return state_.get(); }
  float* conv_states(int64_t layer) { return state_->conv(state_index_[layer]); }
  float* delta_states(int64_t layer) { return state_->delta(state_index_[layer]); }
  // Whether add_sequence() can give a new sequence a recurrent state slot (always without one).
  bool can_add_sequence() const { return state_ == nullptr || state_->has_free_slot(); }

  // Sequences: ids are small integers reused after free. With a recurrent state the sequence
  // also gets a zeroed state slot (none left: its steps are refused; see can_add_sequence()).
  int32_t add_sequence();
  // Prefix reuse for a new (empty) sequence: attaches the cached full blocks that hold the
  // longest block-aligned prefix of `tokens`, always leaving at least one token to compute (its
  // logits are needed). Returns the number of tokens covered (a multiple of block_size).
  // `root`: the hash the block chain starts from, here and in the sequence's commits (0 for the
  // token prefix itself; a drafter's pool whose positions depend on more than their tokens
  // folds that in, sched/mtp_drafter.h). With a recurrent state only a prefix that ends where a
  // state snapshot was filed is attached (the deepest such), and the snapshot is restored.
  int64_t attach_cached_prefix(int32_t seq, std::span<const int32_t> tokens, uint64_t root = 0);
  // Indexes the full blocks of `seq` whose K/V is written: positions [0, n_written) hold
  // `tokens[0, n_written)`. Later requests with the same prefix can then reuse them.
  void commit(int32_t seq, std::span<const int32_t> tokens, int64_t n_written);
  // Makes room for positions [0, n_tokens) of `seq`; fails (allocating nothing) when the pool
  // is short.
  Status reserve(int32_t seq, int64_t n_tokens);
  void free_sequence(int32_t seq);
  // Tensor-parallel workers: `seq`'s block table becomes `blocks` (the sequence is created when
  // new), bypassing the allocator. Rank 0 decides every block (prefix reuse, eviction,
  // preemption) and sends the tables of each step's sequences; a worker only stores K/V there.
  void set_blocks(int32_t seq, std::span<const int32_t> blocks);
  const std::vector<int32_t>& blocks(int32_t seq) const { return tables_[seq]; }
  int64_t capacity(int32_t seq) const;  // positions reserved
  int32_t slot(int32_t seq, int64_t pos) const;
  // Blocks a new sequence can get (free or evictable cached ones).
  int32_t n_free_blocks() const { return alloc_.n_available(); }
  int32_t n_cached_blocks() const { return alloc_.n_cached(); }
  int32_t n_used_blocks() const { return alloc_.n_blocks() - alloc_.n_available(); }

  // Windowed pool of the sliding-window layers (null without one). Its tables have the same
  // length as blocks(seq), with WindowedBlocks::kNoBlock behind the window.
  const WindowedBlocks* window() const { return swa_.get(); }
  bool layer_windowed(int64_t layer) const {
    return swa_ != nullptr && opt_.swa_layers[static_cast<size_t>(layer)] != 0;
  }
  // Blocks in `layer`'s pool.
  int64_t layer_blocks(int64_t layer) const {
    return layer_windowed(layer) ? opt_.n_swa_blocks : opt_.n_blocks;
  }
  const std::vector<int32_t>& window_blocks(int32_t seq) const;
  // Slot of `pos` in the windowed pool, -1 when that block is behind the window.
  int32_t window_slot(int32_t seq, int64_t pos) const;
  // Tensor-parallel workers: the windowed table rank 0 sent.
  void set_window_blocks(int32_t seq, std::span<const int32_t> blocks);

 private:
  explicit KvCache(const KvCacheOptions& opt);
  KvCacheOptions opt_;
  BlockAllocator alloc_;
  std::vector<std::unique_ptr<DeviceBuffer>> k_, v_;  // [n_layer]
  std::vector<std::vector<int32_t>> tables_;          // [seq] -> block ids
  std::vector<bool> live_;
  std::vector<int64_t> indexed_blocks_;    // [seq] leading blocks already in the prefix index
  std::vector<uint64_t> chain_hash_;       // [seq] hash of those blocks
  std::unique_ptr<WindowedBlocks> swa_;    // null: no windowed pool
  std::unique_ptr<RecurrentState> state_;  // null: no recurrent layers
  std::vector<int64_t> state_index_;       // [n_layer] index among the recurrent layers or -1
};

}  // namespace arc
