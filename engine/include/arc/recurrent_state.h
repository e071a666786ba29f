// Per-sequence recurrent state of the Gated DeltaNet layers (qwen3next), kept by the KV cache
// next to the paged K/V of the full-attention layers, and its prefix-cache snapshots.
//
// Pools (arc/kernels/delta_net.h): per recurrent layer one conv pool and one delta pool of
// n_slots slots. Slot 0 holds zeros and is never written (a new sequence copies it); slots
// [1, 1 + n_seqs) are the live states, one per sequence; the rest are snapshots.
//
// Snapshots. A snapshot is the state right after a block boundary of a sequence (n_blocks whole
// blocks consumed). The forward asks for one while it enqueues the step (take()) and the ops
// write it in that same step (token_snapshot); it is pending until KvCache::commit indexes the
// block it ends, then it is filed under that block's chain hash. A new sequence whose prefix
// blocks are cached resumes from the deepest snapshot among them (restore()); blocks past it are
// recomputed. Indexed snapshots are evicted least recently used when a new one needs a slot.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <unordered_map>
#include <vector>

#include "arc/backend.h"
#include "arc/status.h"

namespace arc {

struct RecurrentStateOptions {
  int64_t n_layers = 0;      // recurrent layers
  int64_t conv_floats = 0;   // one slot of one layer's conv pool
  int64_t delta_floats = 0;  // one slot of one layer's delta pool
  int64_t n_seqs = 0;        // live states (sequences at once)
  int64_t n_snapshots = 0;   // snapshot slots (0: no prefix caching for this model)
  // Bytes the pools take: (1 + n_seqs + n_snapshots) slots of every layer.
  uint64_t bytes() const {
    return 4ull * static_cast<uint64_t>((1 + n_seqs + n_snapshots) * n_layers *
                                        (conv_floats + delta_floats));
  }
};

class RecurrentState {
 public:
  static Result<std::unique_ptr<RecurrentState>> create(Backend& backend,
                                                        const RecurrentStateOptions& opt);

  const RecurrentStateOptions& options() const { return opt_; }
  // Pools of recurrent layer i (0 .. n_layers - 1, in model order).
  float* conv(int64_t i) { return conv_[static_cast<size_t>(i)]->as<float>(); }
  float* delta(int64_t i) { return delta_[static_cast<size_t>(i)]->as<float>(); }

  // Live states. acquire() gives sequence `seq` a zeroed slot (enqueued on the backend).
  Status acquire(int32_t seq);
  void release(int32_t seq);  // also drops the sequence's pending snapshots
  int32_t slot(int32_t seq) const;
  // Tokens the sequence's state has consumed: the next step must start at this position.
  int64_t consumed(int32_t seq) const;
  void advance(int32_t seq, int64_t n);
  bool has_free_slot() const { return !free_seq_.empty(); }

  // A slot for the state after `n_blocks` whole blocks of `seq`, or -1 (none free, or no
  // snapshots). Pending until file().
  int32_t take(int32_t seq, int64_t n_blocks);
  // Files the pending snapshot of `seq` at `n_blocks` (if any) under `hash`.
  void file(int32_t seq, int64_t n_blocks, uint64_t hash);
  bool has(uint64_t hash) const { return by_hash_.count(hash) != 0; }
  // Copies the snapshot filed under `hash` into `seq`'s live slot (enqueued), which then has
  // consumed `n_tokens`. False when there is none.
  bool restore(int32_t seq, uint64_t hash, int64_t n_tokens);

  int64_t n_snapshots_filed() const { return static_cast<int64_t>(by_hash_.size()); }
  int64_t n_snapshots_pending() const;
  int64_t n_live() const;

 private:
  explicit RecurrentState(Backend& be, const RecurrentStateOptions& opt);
  void copy_slot(int32_t src, int32_t dst);  // every layer
  int32_t snapshot_slot(int64_t i) const { return static_cast<int32_t>(1 + opt_.n_seqs + i); }

  struct Snapshot {
    enum class State : uint8_t { kFree, kPending, kFiled } state = State::kFree;
    int32_t seq = -1;
    int64_t n_blocks = 0;
    uint64_t hash = 0;
    std::list<int64_t>::iterator lru;
  };

  Backend& be_;
  RecurrentStateOptions opt_;
  std::vector<std::unique_ptr<DeviceBuffer>> conv_, delta_;
  std::vector<int32_t> seq_slot_;      // [seq] live slot or -1
  std::vector<int64_t> seq_consumed_;  // [seq]
  std::vector<int32_t> free_seq_;      // free live slots
  std::vector<Snapshot> snaps_;        // [n_snapshots]
  std::vector<int64_t> free_snaps_;
  std::list<int64_t> lru_;  // filed snapshots, least recently used first
  std::unordered_map<uint64_t, int64_t> by_hash_;
  // Staging for the copy ops' slot lists (backend memory, read when the op runs).
  std::unique_ptr<DeviceBuffer> copy_ids_;
  std::vector<int32_t> h_copy_;
};

}  // namespace arc
