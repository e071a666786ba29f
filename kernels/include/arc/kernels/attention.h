// Attention over a paged KV cache. Tokens of several sequences come flattened in one batch; each
// token attends causally to positions [0, pos] of its own sequence (and only the last
// `sliding_window` of them when that is > 0), with an optional per-head sink logit in the
// softmax denominator. Grouped-query: query head h reads KV head
// h / (n_head / n_kv_head). Online (streaming) softmax, F32 accumulation.
#pragma once

#include <cstdint>

#include "arc/kernels/dtype.h"
#include "arc/kernels/parallel.h"

namespace arc::kernels {

// How a layer's K and V pools are laid out. A sequence's logical position p lives in block
// block_table[p / block_size], row p % block_size; its slot is block * block_size + row. The cache
// is opaque to the engine: a backend's kv_store writes the layout its paged_attention reads.
enum class KvLayout : uint8_t {
  // K and V: [n_blocks, block_size, n_kv_head, head_dim] (a slot's heads side by side). Any
  // kv_type. The CUDA kernels' layout.
  kTokenRows,
  // K: [n_kv_head, n_blocks, head_dim, block_size]; V: [n_kv_head, n_blocks, block_size,
  // head_dim]. F16 and F32 only. The CPU backend's layout: a block of one kv head is two
  // contiguous runs, and a dimension's keys sit side by side, so the scores of 16 keys are 16-lane
  // multiply-adds over head_dim with no horizontal sum per key. Head-major, so a sequence's
  // consecutive blocks are one long run per kv head, which a thread attending that head reads as
  // a stream.
  kHeadBlocks,
};

// Whether a cache of kv_type can use the layout (kHeadBlocks: F16 and F32).
inline bool kv_layout_supports(KvLayout layout, DType kv_type) {
  return layout == KvLayout::kTokenRows || kv_type == DType::F16 || kv_type == DType::F32;
}

// Cache: per layer, K and V pools in kv_type (F16, F32 or Q8_0) laid out as `layout` says.
struct PagedAttentionArgs {
  const float* q = nullptr;  // [n_tokens, n_head, head_dim]
  float* out = nullptr;      // [n_tokens, n_head, head_dim]
  int64_t n_tokens = 0;
  int64_t n_head = 0;
  int64_t n_kv_head = 0;
  int64_t head_dim = 0;
  const void* k_cache = nullptr;
  const void* v_cache = nullptr;
  DType kv_type = DType::F16;
  KvLayout layout = KvLayout::kTokenRows;
  int64_t block_size = 16;
  int64_t n_blocks = 0;                   // kHeadBlocks: blocks in each pool (all < n_blocks)
  const int32_t* token_seq = nullptr;     // [n_tokens] row of block_tables for each token
  const int32_t* token_pos = nullptr;     // [n_tokens] absolute position of each token
  const int32_t* block_tables = nullptr;  // [n_seqs, max_blocks_per_seq]
  int64_t max_blocks_per_seq = 0;
  float scale = 0.0f;          // 0: 1 / sqrt(head_dim)
  int64_t sliding_window = 0;  // 0: full causal
  // Attention sinks (gpt-oss): per query head a learned logit that joins the softmax denominator
  // and carries no value, out = sum_j e^(s_j) v_j / (e^(sink) + sum_j e^(s_j)). Null: none.
  const float* sinks = nullptr;  // [n_head]
  // The machine's hardware threads, for the CPU kernels' choice between attending each (token,
  // kv head) whole or in chunks of keys merged afterwards (0: chunks whenever the shapes call for
  // them). Whole items are faster when they spread evenly over the machine (a single sequence's
  // decode with as many kv heads as cores, or a multiple). The choice changes the rounding, so it
  // is taken from the machine, never from the pool's size: results do not depend on the thread
  // count.
  int split_threads = 0;
};
void paged_attention(const PagedAttentionArgs& args, Parallel* pool);

// Writes K and V of n_tokens into their cache slots (slot = block * block_size + row) in
// `layout`.
struct KvStoreArgs {
  const float* k = nullptr;  // [n_tokens, n_kv_head, head_dim]
  const float* v = nullptr;  // [n_tokens, n_kv_head, head_dim]
  void* k_cache = nullptr;
  void* v_cache = nullptr;
  DType kv_type = DType::F16;
  KvLayout layout = KvLayout::kTokenRows;
  int64_t block_size = 16;         // kHeadBlocks only (kTokenRows slots need no block size)
  int64_t n_blocks = 0;            // kHeadBlocks only: blocks in each pool
  const int32_t* slots = nullptr;  // [n_tokens], -1: padding, nothing stored
  int64_t n_tokens = 0;
  int64_t n_kv_head = 0;
  int64_t head_dim = 0;
};
void kv_store(const KvStoreArgs& args);

namespace ref {
void paged_attention(const PagedAttentionArgs& args);
}  // namespace ref

}  // namespace arc::kernels
