// How tensor parallelism divides a model's attention heads and feed-forward widths over N ranks:
// the arithmetic the shard plan (arc/shard_plan.h) and the fit calculator share, free of tensors.
//
// Heads. Q heads come in groups of g = n_head / n_kv_head per KV head. Each KV head is cut into
// `kv_copies` virtual KV heads ("slots") of g / kv_copies Q heads each (a rank holding a slot
// holds that KV head); the slots are padded with zero slots to a multiple of N and dealt out in
// order, so every rank runs the same local shape: slots_per_rank KV heads with q_per_slot Q heads
// each. A zero head has zero q/k/v rows and zero output-projection columns: it adds nothing.
//   64 Q / 8 KV over 2:  4 slots of 8 Q heads per rank, no padding
//   96 Q / 8 KV over 3:  padded to 9 slots: 3 slots of 12 Q heads per rank, the last rank's third
//                        slot zeros (12 zero Q heads)
//   64 Q / 4 KV over 3:  padded to 6 slots: 2 per rank, the last rank's both zero (32 zero Q
//                        heads; cutting the KV heads in 2 would give 24 Q heads per rank but 3 KV
//                        heads, half as much KV cache again on every rank)
//   32 Q / 1 KV over 2:  the KV head cut in 2: one slot of 16 Q heads per rank (KV replicated)
// The cut is chosen to hold the fewest KV heads per rank (every rank's KV cache: all ranks hold
// the same block count), then the fewest Q heads (q/o weights and compute), among those whose
// output-projection columns per rank are whole quantization blocks.
//
// Widths (dense n_ff, expert n_ff_exp, shared-expert n_ff_shexp). The down projection is split by
// columns, which must fall on quantization blocks: each rank takes whole blocks, an even share
// when the blocks divide, else boundaries at blocks * r / N (ranks differ by at most one block;
// a rank may hold none when there are fewer blocks than ranks). gate/up follow by rows (free).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "arc/status.h"

namespace arc {

struct HeadSplit {
  int64_t n_head = 0;     // the model's Q heads
  int64_t n_kv_head = 0;  // the model's KV heads
  int ranks = 1;
  int64_t kv_copies = 1;       // slots per real KV head
  int64_t slots_per_rank = 0;  // the rank's local n_kv_head
  int64_t q_per_slot = 0;      // Q heads per slot (the local GQA group)
  // Multi-head latent attention (split_latent_heads): every slot is one Q head, and the one
  // latent KV "head" is held whole by every rank (the local n_kv_head stays 1).
  bool latent = false;

  int64_t slots() const { return n_kv_head * kv_copies; }  // real slots
  int64_t local_q() const { return slots_per_rank * q_per_slot; }
  int64_t zero_q_heads() const { return local_q() * ranks - n_head; }
  int64_t zero_slots() const { return slots_per_rank * ranks - slots(); }
  bool padded() const { return zero_slots() > 0; }
  // How often each real KV head is held across all ranks (its copies).
  int64_t kv_held() const { return kv_copies; }
};

// `o_block`: values per quantization block of the output projection's rows (1 when unquantized):
// a rank's columns (local Q heads x head_dim) must be whole blocks. Refused with the reason when
// no cut fits.
Result<HeadSplit> split_heads(int64_t n_head, int64_t n_kv_head, int64_t head_dim, int ranks,
                              int64_t o_block);

// Multi-head latent attention (deepseek2): the heads alone are cut (q_b, k_b, v_b and
// attn_output by head); the latent every head reads is computed and cached whole on every rank.
// Each rank takes the fewest heads whose output-projection columns (heads x v_head_dim) are
// whole `o_block`-value blocks; the heads past the model's are zero heads (16 heads of 128 over
// 3 ranks: 6 per rank, the last rank's last 2 zero).
Result<HeadSplit> split_latent_heads(int64_t n_head, int64_t v_head_dim, int ranks,
                                     int64_t o_block);

// A rank's part of one dimension: whole-block ranges [begin[r], begin[r + 1]).
struct WidthSplit {
  int64_t width = 0;
  int64_t unit = 1;            // values per block the boundaries fall on
  std::vector<int64_t> begin;  // [ranks + 1]
  int ranks() const { return static_cast<int>(begin.size()) - 1; }
  int64_t count(int r) const { return begin[r + 1] - begin[r]; }
  bool even() const;
  // The largest rank's share of the width (1 / ranks when even): how far the slowest rank is
  // from an even split.
  double largest_share() const;
};

// Refused when `width` is not whole blocks of `unit` (no file holds such a tensor).
Result<WidthSplit> split_width(int64_t width, int64_t unit, int ranks);

// One line each, for logs, `bench --tp` and the fit report:
//   "heads 64/4 KV over 3: 24 Q + 3 KV per rank (KV heads cut in 2, 8 zero Q heads)"
//   "expert width 768 in 256-value blocks: 512 + 256 (uneven, largest rank 67%)"
std::string describe(const HeadSplit& h);
std::string describe(const WidthSplit& w, const std::string& what);

}  // namespace arc
