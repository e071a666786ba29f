// Multi-head latent attention (DeepSeek-V2/V3, Kimi-K2) over a paged latent cache, in the
// absorbed form: the cache holds per token one row [kv_lora_rank latent | rope_dim rope key]
// shared by every head (MQA with one wide KV head). Query head h arrives absorbed, q_lat[h] =
// k_b[h]^T q_nope[h] (so q_lat . latent = q_nope . k_nope), with its rotated part q_pe[h]:
//   score_j = scale * (q_lat[h] . latent_j + q_pe[h] . kpe_j)
//   out[h]  = sum_j softmax(score)_j latent_j          (v_b[h] then maps it to the value dim)
// Tokens of several sequences come flattened; each attends causally to positions [0, pos].
#pragma once

#include <cstdint>

#include "arc/kernels/dtype.h"
#include "arc/kernels/parallel.h"

namespace arc::kernels {

// Cache: per layer one pool [n_blocks * block_size, kv_lora_rank + rope_dim] in kv_type (F16 or
// F32), token rows: slot s = block * block_size + row holds one token's latent then rope key.
inline bool mla_kv_type_ok(DType t) {
  return t == DType::F16 || t == DType::F32;
}

struct MlaKvStoreArgs {
  const float* latent = nullptr;  // [n_tokens, kv_lora_rank] (normalised)
  const float* kpe = nullptr;     // [n_tokens, rope_dim] (rotated)
  void* cache = nullptr;
  DType kv_type = DType::F16;
  const int32_t* slots = nullptr;  // [n_tokens], -1: padding, nothing stored
  int64_t n_tokens = 0;
  int64_t kv_lora_rank = 0;
  int64_t rope_dim = 0;
};
void mla_kv_store(const MlaKvStoreArgs& args);

struct MlaAttentionArgs {
  const float* q_lat = nullptr;  // [n_tokens, n_head, kv_lora_rank] absorbed no-rope query
  // Rotated query part of token t, head h: rope_dim values at q_pe + t * q_pe_token_stride +
  // h * q_pe_head_stride (a view into the projected q, whose heads are [nope | rope]).
  const float* q_pe = nullptr;
  int64_t q_pe_token_stride = 0;
  int64_t q_pe_head_stride = 0;
  float* out = nullptr;  // [n_tokens, n_head, kv_lora_rank] latent-space attention output
  int64_t n_tokens = 0;
  int64_t n_head = 0;
  int64_t kv_lora_rank = 0;
  int64_t rope_dim = 0;
  const void* cache = nullptr;
  DType kv_type = DType::F16;
  int64_t block_size = 16;
  const int32_t* token_seq = nullptr;     // [n_tokens] row of block_tables for each token
  const int32_t* token_pos = nullptr;     // [n_tokens] absolute position of each token
  const int32_t* block_tables = nullptr;  // [n_seqs, max_blocks_per_seq]
  int64_t max_blocks_per_seq = 0;
  float scale = 0.0f;  // softmax scale (with YaRN's mscale^2 folded in); must be set
};
// Returns false for arguments it cannot run (kv type, sizes).
bool mla_attention(const MlaAttentionArgs& args, Parallel* pool);

// The plain form, for prefill chunks (engine/model/mla_block.cpp picks it by op count): the
// latents of the context rows are decompressed per head beforehand, k_nope = k_b^T latent and
// v = v_b latent, and the tokens attend them as ordinary multi-head attention whose keys share
// the rope part:
//   score_j = scale * (q_nope[h] . k_nope_j[h] + q_pe[h] . kpe_j),  out[h] = sum_j softmax_j v_j[h]
// Context rows are numbered by the caller: token t attends rows token_row0[t] + [0, token_pos[t]]
// (its sequence's positions 0..pos, gathered in order).
struct MlaPlainAttentionArgs {
  // Query head h of token t at q + t * q_token_stride + h * q_head_stride: [nope | rope] (rotated).
  const float* q = nullptr;
  int64_t q_token_stride = 0;
  int64_t q_head_stride = 0;
  const float* k_nope = nullptr;  // [n_rows, n_head, nope_dim]
  const float* kpe = nullptr;     // row j's rope key at kpe + j * kpe_stride: [rope_dim]
  int64_t kpe_stride = 0;
  const float* v = nullptr;  // [n_rows, n_head, v_dim]
  float* out = nullptr;      // [n_tokens, n_head, v_dim]
  int64_t n_tokens = 0;
  int64_t n_head = 0;
  int64_t nope_dim = 0;
  int64_t rope_dim = 0;
  int64_t v_dim = 0;
  const int32_t* token_row0 = nullptr;  // [n_tokens]
  const int32_t* token_pos = nullptr;   // [n_tokens]
  float scale = 0.0f;                   // as MlaAttentionArgs::scale
};
// Returns false for arguments it cannot run (sizes, missing pointers).
bool mla_plain_attention(const MlaPlainAttentionArgs& args, Parallel* pool);
bool mla_plain_args_ok(const MlaPlainAttentionArgs& a);

namespace ref {
void mla_kv_store(const MlaKvStoreArgs& args);
// Double-precision two-pass softmax per (token, head). Slow and obvious on purpose.
bool mla_attention(const MlaAttentionArgs& args);
// Double precision, two-pass softmax per (token, head).
bool mla_plain_attention(const MlaPlainAttentionArgs& args);
}  // namespace ref

}  // namespace arc::kernels
