// Matrix products y = W x for every weight format, on two paths:
//  - matvec (n_tokens <= kMatvecMaxTokens): bandwidth-bound decode. One warp per weight row
//    streams the row once and keeps up to kMatvecMaxTokens dot products in registers. Quantized
//    weights meet activations quantized to int8 in blocks of 32 (scale and sum per block) with
//    dp4a: 4 multiply-adds per instruction, so dequantisation never becomes the bottleneck at
//    H200 bandwidth (a float path needs ~3 instructions per weight, about the SM issue rate at
//    4.8 TB/s of 4.5-bit weights). Float weights (F32/F16/BF16) use F32 FMAs.
//  - mma (prefill): 64x64 output tiles on tensor cores (WMMA 16x16x16, F16 inputs, F32
//    accumulation): each K step dequantizes a 64x32 weight tile and converts a 32x64 activation
//    tile to F16 in shared memory. The same kernel runs grouped by expert for MoE prefill.
#pragma once

#include "arc/kernels/cuda_ops.h"
#include "cuda/common.cuh"

namespace arc::kernels::cuda::detail {

inline constexpr int kMatvecMaxTokens = 8;

// Activations quantized to int8 in blocks of 32: x[r, i] ~= xd[r, i / 32] * xq[r, i].
struct QuantizedX {
  int8_t* q = nullptr;  // [n_rows, n_in]
  float* d = nullptr;   // [n_rows, n_in / 32] block scales
  float* s = nullptr;   // [n_rows, n_in / 32] d * sum of the block's q
};
QuantizedX carve_quantized_x(Carve& c, int64_t n_rows, int64_t n_in);

// Quantizes x: [n_rows, n_in] (row stride x_stride floats; n_in a multiple of 32) into qx.
void launch_quantize_x(Stream s, const float* x, int64_t x_stride, int64_t n_rows, int64_t n_in,
                       const QuantizedX& qx);

// One matvec launch. Dense: n_tok tokens, x rows 0..n_tok-1, y rows 0..n_tok-1. Expert mode
// (expert_ids set): one product per pair p = blockIdx.y with the weights of expert
// expert_ids[p], x row p / x_div and y row p (n_tok = 1).
struct MatvecArgs {
  const uint8_t* w = nullptr;  // [n_out] rows of row_bytes (per expert: expert_bytes apart)
  size_t row_bytes = 0;
  size_t expert_bytes = 0;
  const int32_t* expert_ids = nullptr;  // [n_pairs] or null
  int64_t n_pairs = 1;
  int64_t n_expert = 0;
  int64_t n_out = 0;
  int64_t n_in = 0;
  int n_tok = 1;
  int64_t x_div = 1;
  QuantizedX qx;             // quantized formats: activations [rows, n_in]
  const float* x = nullptr;  // float formats: [rows, x_stride]
  int64_t x_stride = 0;
  float* y = nullptr;  // [rows, y_stride]
  int64_t y_stride = 0;
  bool accumulate = false;
};
bool launch_matvec(Stream s, DType t, const MatvecArgs& a);

// Tensor-core product. Dense: tokens 0..n_tokens-1. Grouped (tiles set): block y handles tile
// tiles[2y] = expert, tiles[2y + 1] = first list entry; the tile runs to min(+64, group_end[e]);
// blocks past *n_tiles exit. List entry i reads x row x_rows[i] (or i) and writes y row i.
struct MmaArgs {
  const uint8_t* w = nullptr;  // [n_out] rows of row_bytes (per expert: expert_bytes apart)
  size_t row_bytes = 0;
  size_t expert_bytes = 0;
  int64_t n_out = 0;
  int64_t n_in = 0;
  const float* x = nullptr;  // [rows, x_stride]
  int64_t x_stride = 0;
  float* y = nullptr;  // [rows, y_stride]
  int64_t y_stride = 0;
  bool accumulate = false;
  int64_t n_tokens = 0;                // dense rows
  const int32_t* tiles = nullptr;      // [max_tiles, 2] or null (dense)
  const int32_t* n_tiles = nullptr;    // device scalar
  const int32_t* group_end = nullptr;  // [n_expert]
  const int32_t* x_rows = nullptr;     // [list] or null
  int64_t max_tiles = 0;
};
inline constexpr int kMmaTile = 64;
bool launch_mma(Stream s, DType t, const MmaArgs& a);

// Checks the weight pointer / row size alignment the kernels rely on.
bool weights_aligned(DType t, const void* w, size_t row_bytes, size_t expert_bytes);

size_t matmul_scratch_bytes(int64_t max_tokens, int64_t max_dim);

}  // namespace arc::kernels::cuda::detail
