// Gated DeltaNet, the linear-attention layers of Qwen3-Next (hybrid with full attention): the
// sequence-mixing ops between the layer's input projections and its output projection.
//
//   mixed = [q | k | v] = in_proj(x)                 per token, channels = 2*Hk*dk + Hv*dv
//   mixed = silu(causal depthwise conv(mixed))       kernel K (4), per channel   (delta_net_conv)
//   q, k  = l2norm per head; q *= scale (1/sqrt(dk))  v head h reads q/k head h / (Hv / Hk)
//   g     = -exp(A_log[h]) * softplus(a[h] + dt_bias[h])    log decay, per token and v head
//   beta  = sigmoid(b[h])
//   S     = S * exp(g)                                S: [dk, dv] per v head
//   S    += k (beta * (v - S^T k))^T                  the delta rule
//   o     = S^T q                                     [dv]                      (gated_delta_rule)
//   o     = rms_norm(o) * norm_w * silu(z)            per v head over dv         (gated_rms_norm)
//
// State. Each sequence owns a state slot: a conv tail and a recurrent state per layer. The ops
// take one pool per layer and per kind, addressed by slot:
//   conv pool:  slot s at conv_states  + s * (K - 1) * channels, [K - 1, channels], oldest first
//   delta pool: slot s at delta_states + s * Hv * dk * dv,       [Hv, dk, dv]
// Tokens of several sequences come flattened. token_state[t] is the slot of token t's sequence;
// the tokens of one sequence are one contiguous run, in order, and a slot appears in one run
// only. The ops read the slot's state before the run's first token and leave it holding the
// state after its last token.
//
// Snapshots. token_snapshot (optional) names, per token, a slot (-1: none) that receives a copy
// of the sequence's state right after that token. Prefix caching snapshots at block boundaries
// (a later request resumes from the copy); speculative verification snapshots after every
// drafted token (the accepted one is copied back). Snapshot slots are in the same pools.
#pragma once

#include <cstdint>

#include "arc/kernels/parallel.h"

namespace arc::kernels {

struct DeltaConvArgs {
  const float* x = nullptr;       // [n_tokens, channels] in_proj output (q | k | v)
  float* y = nullptr;             // [n_tokens, channels] silu(conv(x)); must not alias x
  const float* weight = nullptr;  // [channels, kernel]: y_t[c] = sum_i w[c, i] * x_{t-K+1+i}[c]
  const float* bias = nullptr;    // [channels] or null
  float* conv_states = nullptr;   // pool, slot layout above
  const int32_t* token_state = nullptr;     // [n_tokens]
  const int32_t* token_snapshot = nullptr;  // [n_tokens] or null
  int64_t n_tokens = 0;
  int64_t channels = 0;
  int64_t kernel = 4;
};

struct GatedDeltaRuleArgs {
  // Views into the conv output row of token t: q head j at q + t * qkv_stride + j * head_k_dim,
  // k likewise, v head h at v + t * qkv_stride + h * head_v_dim.
  const float* q = nullptr;
  const float* k = nullptr;
  const float* v = nullptr;
  int64_t qkv_stride = 0;
  // Raw per-(token, v head) gate inputs, rows of ab_stride floats: a (decay) and b (beta).
  const float* a = nullptr;
  const float* b = nullptr;
  int64_t ab_stride = 0;
  const float* a_log = nullptr;             // [n_v_heads] A_log
  const float* dt_bias = nullptr;           // [n_v_heads]
  float* out = nullptr;                     // [n_tokens, n_v_heads, head_v_dim]
  float* delta_states = nullptr;            // pool, slot layout above
  const int32_t* token_state = nullptr;     // [n_tokens]
  const int32_t* token_snapshot = nullptr;  // [n_tokens] or null
  int64_t n_tokens = 0;
  int64_t n_k_heads = 0;
  int64_t n_v_heads = 0;  // a multiple of n_k_heads
  int64_t head_k_dim = 0;
  int64_t head_v_dim = 0;
  float scale = 0.0f;    // applied to q after its l2 norm; must be set (1/sqrt(head_k_dim))
  float l2_eps = 1e-6f;  // x / sqrt(sum x^2 + eps)
};

struct GatedRmsNormArgs {
  const float* x = nullptr;  // [n_rows, d] (rows: token x v head)
  const float* w = nullptr;  // [d] F32
  // The gate of row r at z + (r / heads_per_token) * z_token_stride + (r % heads_per_token) * d.
  const float* z = nullptr;
  int64_t z_token_stride = 0;
  int64_t heads_per_token = 1;
  float* y = nullptr;  // [n_rows, d]; may alias x
  int64_t n_rows = 0;
  int64_t d = 0;
  float eps = 1e-6f;
};

// Copies whole state slots (both pools of one layer): dst[i] = src[i] for i < n. Restores a
// snapshot into a live slot (prefix resume, accepted draft) or takes one outside a step.
struct DeltaStateCopyArgs {
  float* conv_states = nullptr;
  float* delta_states = nullptr;
  const int32_t* src = nullptr;  // [n] slots
  const int32_t* dst = nullptr;  // [n] slots, distinct, none equal to any src
  int64_t n = 0;
  int64_t conv_slot_floats = 0;   // (kernel - 1) * channels
  int64_t delta_slot_floats = 0;  // n_v_heads * head_k_dim * head_v_dim
};

// y[i] = x[i] * sigmoid(g[i]) for rows of d values: x, y [n_rows, d], g at g + r * g_stride.
// Qwen3-Next's gated attention output. y may alias x.
struct SigmoidMulArgs {
  const float* x = nullptr;
  const float* g = nullptr;
  int64_t g_stride = 0;
  float* y = nullptr;
  int64_t n_rows = 0;
  int64_t d = 0;
};

// Return false for arguments they cannot run (sizes, missing pointers).
bool delta_net_conv(const DeltaConvArgs& args, Parallel* pool);
bool gated_delta_rule(const GatedDeltaRuleArgs& args, Parallel* pool);
bool gated_rms_norm(const GatedRmsNormArgs& args, Parallel* pool);
bool delta_state_copy(const DeltaStateCopyArgs& args, Parallel* pool);
bool sigmoid_mul(const SigmoidMulArgs& args, Parallel* pool);

// Argument checks shared by every implementation.
bool delta_conv_args_ok(const DeltaConvArgs& a);
bool gated_delta_rule_args_ok(const GatedDeltaRuleArgs& a);

namespace ref {
// Double-precision, one token at a time, obvious on purpose.
bool delta_net_conv(const DeltaConvArgs& args);
bool gated_delta_rule(const GatedDeltaRuleArgs& args);
bool gated_rms_norm(const GatedRmsNormArgs& args);
bool delta_state_copy(const DeltaStateCopyArgs& args);
bool sigmoid_mul(const SigmoidMulArgs& args);
}  // namespace ref

}  // namespace arc::kernels
