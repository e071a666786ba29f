// Ops of the vision encoders (ViT blocks) that the language models do not use: LayerNorm with
// bias, exact GELU, rotary from a precomputed cos/sin table (2-D image positions), and dense
// (non-causal, non-paged) attention within segments (one segment per image or frame). Each has a
// scalar twin in namespace ref with the same signature (the tests' oracle), and a CUDA twin in
// arc/kernels/cuda_ops.h.
#pragma once

#include <cstdint>

#include "arc/kernels/parallel.h"

namespace arc::kernels {

// y[r, :] = (x[r, :] - mean) / sqrt(var + eps) * w + b   (biased variance, as nn.LayerNorm)
// x, y: [n_rows, d]; w, b: [d] or null (no scale / no shift). y may alias x.
void layer_norm(const float* x, const float* w, const float* b, float* y, int64_t n_rows, int64_t d,
                float eps);

// y = 0.5 x (1 + erf(x / sqrt(2))): nn.GELU() (the tanh approximation is kernels::gelu).
// x, y: [n]; y may alias x.
void gelu_erf(const float* x, float* y, int64_t n);

// Split-half rotary with the angles given as a table: for every token t, head h and pair
// i < head_dim / 2, (x[i], x[i + head_dim/2]) of the head is rotated by the angle whose cosine
// and sine are cos[t, i] and sin[t, i]. Any position scheme (2-D image rows and columns, M-RoPE)
// becomes a table on the host.
struct RopeTableArgs {
  float* x = nullptr;  // [n_tokens, x_stride]: head h of token t at x + t * x_stride + h * head_dim
  int64_t x_stride = 0;  // floats between tokens (0: n_heads * head_dim)
  int64_t n_tokens = 0;
  int64_t n_heads = 0;
  int64_t head_dim = 0;        // even
  const float* cos = nullptr;  // [n_tokens, head_dim / 2]
  const float* sin = nullptr;  // [n_tokens, head_dim / 2]
};
void rope_table(const RopeTableArgs& a);

// Full (non-causal) attention of every token to every token of its segment, per head (as many KV
// heads as query heads). Segments are consecutive token ranges: [seg_offsets[s],
// seg_offsets[s + 1]) for s < n_segments, with seg_offsets[0] = 0 and seg_offsets[n_segments] =
// n_tokens; without offsets all tokens form one segment. q, k and v may be views into one fused
// QKV buffer (row strides).
struct DenseAttentionArgs {
  const float* q = nullptr;  // [n_tokens, q_stride]: head h of token t at q + t*q_stride + h*hd
  const float* k = nullptr;  // [n_tokens, kv_stride]
  const float* v = nullptr;  // [n_tokens, kv_stride]
  float* out = nullptr;      // [n_tokens, out_stride]
  int64_t n_tokens = 0;
  int64_t n_head = 0;
  int64_t head_dim = 0;
  int64_t q_stride = 0;                  // 0: n_head * head_dim
  int64_t kv_stride = 0;                 // 0: n_head * head_dim
  int64_t out_stride = 0;                // 0: n_head * head_dim
  const int32_t* seg_offsets = nullptr;  // [n_segments + 1] or null (one segment)
  int64_t n_segments = 0;
  float scale = 0.0f;  // 0: 1 / sqrt(head_dim)
};
// Returns false for inconsistent arguments (offsets not ascending from 0 to n_tokens).
bool dense_attention(const DenseAttentionArgs& a, Parallel* pool);

namespace ref {
void layer_norm(const float* x, const float* w, const float* b, float* y, int64_t n_rows, int64_t d,
                float eps);
void gelu_erf(const float* x, float* y, int64_t n);
void rope_table(const RopeTableArgs& a);
bool dense_attention(const DenseAttentionArgs& a);
}  // namespace ref

}  // namespace arc::kernels
