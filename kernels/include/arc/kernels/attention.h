// Attention over a paged KV cache. Tokens of several sequences come flattened in one batch; each
// token attends causally to positions [0, pos] of its own sequence (and only the last
// `sliding_window` of them when that is > 0). Grouped-query: query head h reads KV head
// h / (n_head / n_kv_head). Online (streaming) softmax, F32 accumulation.
#pragma once

#include <cstdint>

#include "arc/kernels/dtype.h"
#include "arc/kernels/parallel.h"

namespace arc::kernels {

// Cache layout, per layer: [n_blocks, block_size, n_kv_head, head_dim] in kv_type (F16 or F32;
// 8-bit later). A sequence's logical position p lives in block block_table[p / block_size],
// row p % block_size.
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
  int64_t block_size = 16;
  const int32_t* token_seq = nullptr;     // [n_tokens] row of block_tables for each token
  const int32_t* token_pos = nullptr;     // [n_tokens] absolute position of each token
  const int32_t* block_tables = nullptr;  // [n_seqs, max_blocks_per_seq]
  int64_t max_blocks_per_seq = 0;
  float scale = 0.0f;          // 0: 1 / sqrt(head_dim)
  int64_t sliding_window = 0;  // 0: full causal
};
void paged_attention(const PagedAttentionArgs& args, Parallel* pool);

// Writes K and V of n_tokens into their cache slots (slot = block * block_size + row).
struct KvStoreArgs {
  const float* k = nullptr;  // [n_tokens, n_kv_head, head_dim]
  const float* v = nullptr;  // [n_tokens, n_kv_head, head_dim]
  void* k_cache = nullptr;
  void* v_cache = nullptr;
  DType kv_type = DType::F16;
  const int32_t* slots = nullptr;  // [n_tokens]
  int64_t n_tokens = 0;
  int64_t n_kv_head = 0;
  int64_t head_dim = 0;
};
void kv_store(const KvStoreArgs& args);

namespace ref {
void paged_attention(const PagedAttentionArgs& args);
}  // namespace ref

}  // namespace arc::kernels
