// Windowed KV for sliding-window layers (gpt-oss: every other layer attends to the last 128
// positions). Those layers get their own block pool and per-sequence block tables: a table keeps
// the logical layout of the full-attention one (entry i holds positions [i * block_size,
// (i + 1) * block_size)), but entries that fell behind the window are released and left empty
// (kNoBlock), so a sequence holds only about window / block_size blocks there whatever its
// length. The attention kernels never read positions outside the window, so the holes are
// never read.
//
// Prefix reuse stays exact: windowed blocks are indexed under the same chain hash as the
// full-attention block at the same index, and a cached prefix of n blocks is reused only when
// the windowed blocks covering its last window are cached too (else a shorter prefix whose
// window is, else none).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "arc/kv_cache.h"

namespace arc {

class WindowedBlocks {
 public:
  static constexpr int32_t kNoBlock = -1;

  WindowedBlocks(int32_t n_blocks, int64_t block_size, int64_t window);

  int64_t window() const { return window_; }
  // The first table entry still needed once positions [0, n_written) are written: the next
  // query (position >= n_written) sees keys from n_written - window + 1 on.
  int64_t floor_for(int64_t n_written) const;

  // Sequence bookkeeping (ids are KvCache's).
  void reset(int32_t seq);
  // Blocks that reserve(seq, need) would take from the pool.
  int64_t missing(int32_t seq, int64_t need) const;
  int32_t n_available() const { return alloc_.n_available(); }
  // Extends seq's table to `need` entries (after missing() was checked).
  void grow(int32_t seq, int64_t need);
  void free(int32_t seq);
  // Tensor-parallel workers: the table as rank 0 decided it (kNoBlock entries allowed).
  void set(int32_t seq, std::span<const int32_t> blocks);

  // Prefix reuse. `hashes[i]` is the chain hash of full block i of the prompt, `tokens` the
  // prompt. The largest n <= hashes.size() whose window blocks are all cached (0 when none).
  int64_t usable_prefix(std::span<const uint64_t> hashes, std::span<const int32_t> tokens) const;
  // Attaches the window blocks of a prefix of n blocks to an empty sequence.
  void attach(int32_t seq, std::span<const uint64_t> hashes, std::span<const int32_t> tokens,
              int64_t n);
  // Indexes entry i (full, written) of seq under `hash` when it is still held.
  void index(int32_t seq, int64_t i, uint64_t hash, std::span<const int32_t> block_tokens);
  // Releases the entries behind the window once positions [0, n_written) are written.
  void release_behind(int32_t seq, int64_t n_written);

  const std::vector<int32_t>& table(int32_t seq) const { return tables_[seq]; }
  // Slot of position pos of seq, or -1 when its block is behind the window (released).
  int32_t slot(int32_t seq, int64_t pos) const;

  int32_t n_blocks() const { return alloc_.n_blocks(); }
  int32_t n_used() const { return alloc_.n_blocks() - alloc_.n_available(); }
  int32_t n_cached() const { return alloc_.n_cached(); }

 private:
  void ensure(int32_t seq);
  int64_t block_size_;
  int64_t window_;
  BlockAllocator alloc_;
  std::vector<std::vector<int32_t>> tables_;  // [seq] -> block ids, kNoBlock behind the window
  std::vector<int64_t> floor_;                // [seq] entries below it are released
};

// How many windowed blocks a serving pool needs: every running sequence's window (its last
// window - 1 positions, a partial block on either side), the tokens of one step (at most
// max_batch_tokens, spread over up to max_parallel sequences), and as much again so the windows
// of recently finished requests stay cached for prefix reuse. Never more than `full_blocks`.
int64_t windowed_pool_blocks(int64_t window, int64_t block_size, int64_t max_parallel,
                             int64_t max_batch_tokens, int64_t full_blocks);

// Sliding-window layers of a model (0 when it has none, or with MLA).
int64_t sliding_layer_count(const ModelConfig& c);

// `o` with a windowed pool of n_swa_blocks blocks for c's sliding-window layers (unchanged when
// the model has none).
KvCacheOptions with_windowed_pool(KvCacheOptions o, const ModelConfig& c, int64_t n_swa_blocks);

// KV bytes of a pool of `full_tokens` positions for the full-attention layers and `swa_tokens`
// for the sliding-window ones (per value: 2 for F16, 4 for F32).
uint64_t kv_pool_bytes(const ModelConfig& c, DType type, int64_t full_tokens, int64_t swa_tokens);

}  // namespace arc
