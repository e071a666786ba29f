// Elementwise and row-wise ops on F32 activations. Each has a scalar twin in namespace ref with
// the same signature (the tests' oracle).
#pragma once

#include <cstdint>

#include "arc/kernels/dtype.h"
#include "arc/kernels/parallel.h"

namespace arc::kernels {

// y[r, :] = x[r, :] / sqrt(mean(x[r, :]^2) + eps) * w   (w may be null: no scale)
// x, y: [n_rows, d]; w: [d]. y may alias x.
void rms_norm(const float* x, const float* w, float* y, int64_t n_rows, int64_t d, float eps);

// A row RMS norm in two passes, for rows split across tensor-parallel ranks (minimax-m2's q/k
// norm over all heads): each rank sums the squares of its part, the sums are added over the
// ranks, then each rank scales its part by the whole row's RMS.
// ss[r] = sum_i x[r, i]^2.  x: [n_rows, d]; ss: [n_rows].
void sum_squares(const float* x, float* ss, int64_t n_rows, int64_t d);
// y[r, :] = x[r, :] / sqrt(ss[r] / n_total + eps) * w.  x, y: [n_rows, d]; ss: [n_rows];
// w: [d] or null; n_total: the whole row's length. y may alias x.
void rms_norm_sumsq(const float* x, const float* w, const float* ss, float* y, int64_t n_rows,
                    int64_t d, int64_t n_total, float eps);

enum class RopeLayout : int {
  kInterleaved = 0,  // rotates pairs (2i, 2i+1): Llama-family GGUF layout
  kSplitHalf = 1,    // rotates pairs (i, i + rot_dim/2): NeoX / Qwen layout
};

// Frequency scaling: theta_i = pos * base^(-2i/rot_dim) * freq_scale, with optional per-pair
// factors (Llama 3 style) and YaRN ramp (ext_factor > 0) between beta_fast and beta_slow.
struct RopeArgs {
  float* x = nullptr;  // [n_tokens, n_heads, head_dim], rotated in place
  int64_t n_tokens = 0;
  int64_t n_heads = 0;
  int64_t head_dim = 0;
  int64_t rot_dim = 0;           // leading dims rotated (0: head_dim)
  const int32_t* pos = nullptr;  // [n_tokens]
  RopeLayout layout = RopeLayout::kSplitHalf;
  float theta_base = 10000.0f;
  float freq_scale = 1.0f;              // linear scaling: 1 / factor
  const float* freq_factors = nullptr;  // [rot_dim / 2] divisors, or null
  float ext_factor = 0.0f;              // YaRN: 0 disables the ramp
  float attn_factor = 1.0f;             // YaRN magnitude scaling
  float beta_fast = 32.0f;
  float beta_slow = 1.0f;
  int64_t n_ctx_orig = 0;  // YaRN: original training context
};
void rope(const RopeArgs& args);
// rope() in two steps, for callers that rotate several tensors at the same positions (a
// decode step's Q and K in every layer): the angles of the n_tokens positions,
// cs: [n_tokens, rot / 2, 2] (cos, sin) times the magnitude, then the rotation by them.
int64_t rope_table_size(const RopeArgs& args);  // floats of cs; 0: args unusable
void rope_angles(const RopeArgs& args, float* cs);
void rope_rotate(const RopeArgs& args, const float* cs);
// Whether a and b rotate a position by the same angles, as far as their scalar fields tell
// (every field but x, n_tokens, n_heads, pos and freq_factors: the positions and the factors'
// values are the caller's to compare).
bool rope_same_angles(const RopeArgs& a, const RopeArgs& b);

void softmax_rows(float* x, int64_t n_rows, int64_t n);  // in place, [n_rows, n]
void silu(const float* x, float* y, int64_t n);
void gelu(const float* x, float* y, int64_t n);                        // tanh approximation
void swiglu(const float* gate, const float* up, float* y, int64_t n);  // silu(gate) * up
// gpt-oss's clamped SwiGLU: g = min(gate, limit), u = clamp(up, -limit, limit),
// y = g * sigmoid(alpha * g) * (u + 1). y may alias gate or up.
void swiglu_oai(const float* gate, const float* up, float* y, int64_t n, float alpha, float limit);
void add(const float* a, const float* b, float* y, int64_t n);  // y may alias a or b
void scale(float* x, float s, int64_t n);

// out[j, :] = dequantized table row ids[j]. table: [n_rows, d] in t; out: [n_ids, d].
// Returns false when an id is out of range or t unsupported.
bool get_rows(DType t, const void* table, int64_t n_rows, int64_t d, const int32_t* ids,
              int64_t n_ids, float* out);

namespace ref {
void rms_norm(const float* x, const float* w, float* y, int64_t n_rows, int64_t d, float eps);
void sum_squares(const float* x, float* ss, int64_t n_rows, int64_t d);
void rms_norm_sumsq(const float* x, const float* w, const float* ss, float* y, int64_t n_rows,
                    int64_t d, int64_t n_total, float eps);
void rope(const RopeArgs& args);
void softmax_rows(float* x, int64_t n_rows, int64_t n);
void silu(const float* x, float* y, int64_t n);
void gelu(const float* x, float* y, int64_t n);
void swiglu(const float* gate, const float* up, float* y, int64_t n);
void swiglu_oai(const float* gate, const float* up, float* y, int64_t n, float alpha, float limit);
void add(const float* a, const float* b, float* y, int64_t n);
}  // namespace ref

}  // namespace arc::kernels
