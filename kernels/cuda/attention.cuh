// Paged attention on device (cache layout and semantics of arc/kernels/attention.h) and the KV
// store. Decode (up to kDecodeMaxTokens tokens): split-K over the context, one block per (split,
// head, token) with an online softmax per warp, then a reduce over the splits. Prefill: tiles of 16
// query tokens against 32-key tiles in shared memory with an online softmax (F32 math).
#pragma once

#include "arc/kernels/attention.h"
#include "cuda/common.cuh"

namespace arc::kernels::cuda::detail {

// Up to this many tokens take the split-K decode kernel (batched decode: one token per sequence);
// larger batches (prefill chunks) the tiled kernel, which reads each key once per 16 queries.
inline constexpr int64_t kDecodeMaxTokens = 64;
inline constexpr int64_t kMaxHeadDim = 256;  // head_dim: a multiple of 32 up to this

struct AttnParams {
  const float* q;    // [n_tokens, n_head, head_dim]
  float* out;        // [n_tokens, n_head, head_dim]
  const uint8_t* k;  // cache rows of row_bytes
  const uint8_t* v;
  int kv_type;  // DType value: F32, F16, Q8_0
  size_t row_bytes;
  int64_t n_tokens, n_head, n_kv_head, head_dim, block_size, max_blocks_per_seq;
  const int32_t* token_seq;
  const int32_t* token_pos;
  const int32_t* block_tables;
  float scale;
  int64_t window;
  const float* sinks;  // [n_head] logits joining the softmax denominator, or null
  // decode split-K
  int64_t split_len, n_splits;
  float* part_acc;  // [n_tokens, n_head, n_splits, head_dim] unnormalised sums
  float* part_ml;   // [n_tokens, n_head, n_splits, 2]: running max, sum of weights
};

// Element i of cache row `row` (= slot * n_kv_head + kv_head) as float.
__device__ __forceinline__ float kv_elem(const AttnParams& p, const uint8_t* cache, int64_t row,
                                         int64_t i) {
  const uint8_t* r = cache + row * p.row_bytes;
  if (p.kv_type == static_cast<int>(DType::F16)) {
    return half_bits_to_float(reinterpret_cast<const uint16_t*>(r)[i]);
  }
  if (p.kv_type == static_cast<int>(DType::F32)) return reinterpret_cast<const float*>(r)[i];
  const uint8_t* blk = r + (i / 32) * 34;  // Q8_0
  return half_bits_to_float(load_u16(blk)) *
         static_cast<float>(static_cast<int8_t>(blk[2 + i % 32]));
}

// Cache row of logical position pos of sequence seq for KV head g.
__device__ __forceinline__ int64_t kv_row(const AttnParams& p, int32_t seq, int64_t pos,
                                          int64_t g) {
  // 32-bit division: positions and block sizes fit, and 64-bit division costs several times more.
  const int32_t* table = p.block_tables + static_cast<int64_t>(seq) * p.max_blocks_per_seq;
  const int32_t ps = static_cast<int32_t>(pos), bs = static_cast<int32_t>(p.block_size);
  const int32_t blk = ps / bs;
  const int64_t slot = static_cast<int64_t>(table[blk]) * p.block_size + (ps - blk * bs);
  return slot * p.n_kv_head + g;
}

// The softmax denominator l (running max m, in the scaled-logit units of the scores) of head h
// with its sink when p has sinks; l == 0 (no visible key) stays 0, as the reference.
__device__ __forceinline__ float with_sink(const AttnParams& p, int64_t h, float m, float l) {
  return p.sinks != nullptr && l > 0.0f ? l + expf(p.sinks[h] - m) : l;
}

bool launch_attention_prefill(Stream s, const AttnParams& p);

// Prefill chunks of at least this many tokens run on tensor cores (attention_prefill_tc.cu) when
// the cache is F16 and head_dim is 64, 128 or 256; shorter ones, and other caches, take the
// CUDA-core kernel (F32 math, exact to 1e-4).
inline constexpr int64_t kPrefillTensorCoreMinTokens = 128;
bool prefill_tc_supported(const AttnParams& p);
bool launch_attention_prefill_tc(Stream s, const AttnParams& p);

size_t attention_scratch_bytes(int64_t max_tokens, int64_t n_head, int64_t head_dim,
                               int64_t max_context);

}  // namespace arc::kernels::cuda::detail
