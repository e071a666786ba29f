// Rows of the paged KV cache (layouts in arc/kernels/attention.h). One (slot, kv head) row is
// head_dim values in kv_type; rows are numbered by kv_row_index. Q8_0 rows are head_dim / 32
// blocks of {fp16 scale, 32 x int8} (GGUF's Q8_0 layout), so head_dim must be a multiple of 32
// there. A kHeadBlocks K pool has no rows: a key's values are block_size apart (kv_load_key).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "arc/kernels/attention.h"
#include "arc/kernels/dtype.h"
#include "arc/kernels/fp16.h"

namespace arc::kernels::detail {

inline constexpr int64_t kQ8Block = 32;
inline constexpr int64_t kQ8BlockBytes = 34;

inline bool kv_type_ok(DType t, int64_t head_dim) {
  if (head_dim <= 0) return false;
  if (t == DType::F32 || t == DType::F16) return true;
  return t == DType::Q8_0 && head_dim % kQ8Block == 0;
}

inline size_t kv_row_bytes(DType t, int64_t head_dim) {
  switch (t) {
    case DType::F32:
      return static_cast<size_t>(head_dim) * 4;
    case DType::F16:
      return static_cast<size_t>(head_dim) * 2;
    case DType::Q8_0:
      return static_cast<size_t>(head_dim / kQ8Block * kQ8BlockBytes);
    default:
      return 0;
  }
}

// src: [n] floats; dst: n / 32 Q8_0 blocks. Scale = amax / 127, values rounded half away from 0.
inline void quantize_q8_0_row(const float* src, uint8_t* dst, int64_t n) {
  for (int64_t b = 0; b < n / kQ8Block; ++b) {
    const float* x = src + b * kQ8Block;
    uint8_t* blk = dst + b * kQ8BlockBytes;
    float amax = 0.0f;
    for (int64_t j = 0; j < kQ8Block; ++j) amax = std::fmax(amax, std::fabs(x[j]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    const uint16_t dh = fp32_to_fp16(d);
    std::memcpy(blk, &dh, 2);
    for (int64_t j = 0; j < kQ8Block; ++j) {
      blk[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(std::round(x[j] * id)));
    }
  }
}

// src: n / 32 Q8_0 blocks; dst: [n] floats.
inline void dequantize_q8_0_row(const uint8_t* src, float* dst, int64_t n) {
  for (int64_t b = 0; b < n / kQ8Block; ++b) {
    const uint8_t* blk = src + b * kQ8BlockBytes;
    uint16_t dh;
    std::memcpy(&dh, blk, 2);
    const float d = fp16_to_fp32(dh);
    for (int64_t j = 0; j < kQ8Block; ++j) {
      dst[b * kQ8Block + j] = d * static_cast<float>(static_cast<int8_t>(blk[2 + j]));
    }
  }
}

// kHeadBlocks: the index of (cache block, kv head g)'s run of block_size rows, K or V.
inline int64_t kv_head_block_run(int64_t block, int64_t g, int64_t n_blocks) {
  return g * n_blocks + block;
}

// The row of (slot, kv head g): every row of a kTokenRows pool, the V rows of kHeadBlocks
// (n_blocks: the pool's blocks, kHeadBlocks only).
inline int64_t kv_row_index(KvLayout layout, int64_t slot, int64_t g, int64_t n_kv_head,
                            int64_t block_size, int64_t n_blocks) {
  if (layout == KvLayout::kTokenRows) return slot * n_kv_head + g;
  return kv_head_block_run(slot / block_size, g, n_blocks) * block_size + slot % block_size;
}

// Offset (in values) of value c of the kHeadBlocks key of (slot, kv head g).
inline int64_t kv_head_blocks_key_index(int64_t slot, int64_t g, int64_t c, int64_t head_dim,
                                        int64_t block_size, int64_t n_blocks) {
  return (kv_head_block_run(slot / block_size, g, n_blocks) * head_dim + c) * block_size +
         slot % block_size;
}

// Reads row `row` (kv_row_index) of a cache into dst: [head_dim] floats.
inline void kv_load_row(DType t, const void* cache, int64_t row, int64_t head_dim, float* dst) {
  const uint8_t* base = static_cast<const uint8_t*>(cache) + row * kv_row_bytes(t, head_dim);
  switch (t) {
    case DType::F32:
      std::memcpy(dst, base, head_dim * sizeof(float));
      break;
    case DType::F16:
      for (int64_t i = 0; i < head_dim; ++i) {
        uint16_t h;
        std::memcpy(&h, base + 2 * i, 2);
        dst[i] = fp16_to_fp32(h);
      }
      break;
    case DType::Q8_0:
      dequantize_q8_0_row(base, dst, head_dim);
      break;
    default:
      break;
  }
}

// Writes src: [head_dim] floats into row `row` of a cache.
inline void kv_store_row(DType t, void* cache, int64_t row, int64_t head_dim, const float* src) {
  uint8_t* base = static_cast<uint8_t*>(cache) + row * kv_row_bytes(t, head_dim);
  switch (t) {
    case DType::F32:
      std::memcpy(base, src, head_dim * sizeof(float));
      break;
    case DType::F16:
      for (int64_t i = 0; i < head_dim; ++i) {
        const uint16_t h = fp32_to_fp16(src[i]);
        std::memcpy(base + 2 * i, &h, 2);
      }
      break;
    case DType::Q8_0:
      quantize_q8_0_row(src, base, head_dim);
      break;
    default:
      break;
  }
}

// Reads the key of (slot, kv head g) into dst: [head_dim] floats, in either layout.
inline void kv_load_key(KvLayout layout, DType t, const void* cache, int64_t slot, int64_t g,
                        int64_t n_kv_head, int64_t head_dim, int64_t block_size, int64_t n_blocks,
                        float* dst) {
  if (layout == KvLayout::kTokenRows) {
    kv_load_row(t, cache, slot * n_kv_head + g, head_dim, dst);
    return;
  }
  for (int64_t c = 0; c < head_dim; ++c) {
    const int64_t i = kv_head_blocks_key_index(slot, g, c, head_dim, block_size, n_blocks);
    if (t == DType::F32) {
      std::memcpy(dst + c, static_cast<const float*>(cache) + i, sizeof(float));
    } else {
      uint16_t h;
      std::memcpy(&h, static_cast<const uint16_t*>(cache) + i, 2);
      dst[c] = fp16_to_fp32(h);
    }
  }
}

}  // namespace arc::kernels::detail
