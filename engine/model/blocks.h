// Shared blocks of the transformer layer, enqueued on a Backend. Each family's file composes
// them (engine/model/arch/). All pointers are backend memory.
#pragma once

#include <cstdint>

#include "arc/backend.h"
#include "arc/communicator.h"
#include "arc/kv_cache.h"
#include "arc/model.h"

namespace arc {

// Activations and batch description of one step (sized for n_tokens).
struct StepBuffers {
  float* x = nullptr;             // [n_tokens, n_embd] residual stream
  float* xn = nullptr;            // [n_tokens, n_embd] normalised input of a block
  float* q = nullptr;             // [n_tokens, q_dim]
  float* k = nullptr;             // [n_tokens, kv_dim]
  float* v = nullptr;             // [n_tokens, kv_dim]
  float* attn = nullptr;          // [n_tokens, q_dim] attention output before attn_output
  float* out = nullptr;           // [n_tokens, n_embd] block output added to x
  float* gate = nullptr;          // [n_tokens, max_ff] dense / shared-expert gate, then swiglu
  float* up = nullptr;            // [n_tokens, max_ff]
  float* router = nullptr;        // [n_tokens, n_expert] router logits
  int32_t* expert_ids = nullptr;  // [n_tokens, n_expert_used]
  float* expert_w = nullptr;      // [n_tokens, n_expert_used]
  float* shexp_gate = nullptr;    // [n_tokens] shared-expert gate logits
  float* sumsq = nullptr;  // [2, n_tokens] tensor parallel, full-width q/k norms: sums of squares
  const int32_t* pos = nullptr;           // [n_tokens]
  const int32_t* token_seq = nullptr;     // [n_tokens] row of block_tables
  const int32_t* block_tables = nullptr;  // [n_seqs, max_blocks]
  int64_t max_blocks = 0;
  const int32_t* slots = nullptr;  // [n_tokens]
  // Windowed pool of the sliding-window layers (KvCache::window()), null without one: the
  // slots there and the block tables (same width, max_blocks).
  const int32_t* window_slots = nullptr;   // [n_tokens]
  const int32_t* window_tables = nullptr;  // [n_seqs, max_blocks]
  float* partial = nullptr;  // [n_tokens, n_embd] tensor parallel: this rank's block output
  float* zeros = nullptr;    // [n_tokens, n_embd] zeros: a rank holding none of a block's width
  // Multi-axis RoPE (config.mrope()), null for plain RoPE: rotary positions per axis, and per
  // axis a frequency-factor mask (1 for the axis's pairs, +inf elsewhere: theta / inf = 0 leaves
  // a pair unrotated), so three rope passes over disjoint pairs give the interleaved rotation.
  const int32_t* mrope_pos = nullptr;    // [3, n_tokens] t, h, w
  const float* mrope_factors = nullptr;  // [3, rot_dim / 2]
  // Deepstack features of this step's tokens (zero rows for text tokens), null without images.
  const float* deepstack = nullptr;  // [n_deepstack, n_tokens, n_embd]
  // Multi-head latent attention (config.mla()), null otherwise.
  float* q_a = nullptr;    // [n_tokens, q_lora_rank]
  float* lat = nullptr;    // [n_tokens, kv_lora_rank] the latent, then normalised
  float* kpe = nullptr;    // [n_tokens, rot_dim] the shared rope key
  float* q_lat = nullptr;  // [n_tokens, n_head, kv_lora_rank] absorbed queries
  float* o_lat = nullptr;  // [n_tokens, n_head, kv_lora_rank] attention output, latent space
  // Hybrid models (config.hybrid()), null otherwise.
  float* q_gated = nullptr;            // [n_tokens, n_head, 2 * head_dim] q and its gate per head
  const int32_t* even_rows = nullptr;  // [capacity * max(n_head, ssm_k_heads)] 0, 2, 4, ...
  const int32_t* odd_rows = nullptr;   // 1, 3, 5, ...
  float* ssm_mix = nullptr;            // [n_tokens, conv channels] attn_qkv output
  float* ssm_conv = nullptr;           // [n_tokens, conv channels] silu(conv(mix))
  float* ssm_z = nullptr;              // [n_tokens, ssm_inner] the output norm's gate
  float* ssm_ba = nullptr;  // [n_tokens, ssm_k_heads, 2, v heads per k head] ssm_ba output
  float* ssm_ab = nullptr;  // [2, n_tokens, ssm_v_heads] beta inputs, then alpha inputs
  float* ssm_o = nullptr;   // [n_tokens, ssm_v_heads, ssm_head_v_dim]
  const int32_t* token_state = nullptr;     // [n_tokens] state slot of each token's sequence
  const int32_t* token_snapshot = nullptr;  // [n_tokens] snapshot slot after the token or -1
};

struct LayerContext {
  Backend& be;
  const Model& model;
  KvCache& kv;
  StepBuffers& buf;
  int64_t n_tokens = 0;
  int64_t layer = 0;
  // Tensor parallelism: the model is this rank's shard; each block's output is summed over the
  // ranks before it joins the residual. Null: one rank, blocks add to x directly.
  Communicator* tp = nullptr;
  Status tp_status;  // first collective failure of the step

  const ModelConfig& cfg() const { return model.config(); }
  const Weight& w(TensorRole r) const { return model.layer(layer, r); }
};

// x += attn_output(attention(rope(q), rope(k), v)) of rms_norm(x); optional q/k/v biases and
// q/k norms (per head, or over the whole q and k: qk_norm_full) as the config says. Writes this
// step's K/V into the cache.
void attention_block(LayerContext& c);
// Multi-head latent attention (deepseek2, mla_block.cpp): x += attn_output(v_b(attention over
// the latent cache)) of rms_norm(x). Writes this step's latent and rope key into the cache.
void mla_attention_block(LayerContext& c);
// Gated DeltaNet (qwen3next, delta_net_block.cpp): x += ssm_out(gated_rms_norm(delta rule over
// silu(conv(attn_qkv(xn))), attn_gate(xn))), xn = rms_norm(x). Reads and advances each
// sequence's recurrent state and writes the step's snapshots (buf.token_state/token_snapshot).
void delta_net_block(LayerContext& c);
// x += deepstack[layer] when the step carries image features and layer < n_deepstack.
void deepstack_block(LayerContext& c);
// x += down(silu(gate(xn)) * up(xn)), xn = rms_norm(x, ffn_norm).
void dense_ffn_block(LayerContext& c);
// x += sum over the routed experts (softmax or sigmoid router, top-k), plus the shared expert
// when the config has one: scaled by sigmoid(gate_inp_shexp . xn) when the model has that gate,
// else added as is.
void moe_ffn_block(LayerContext& c);

// Where a block writes its output: x itself (accumulate into it), or under tensor parallelism
// this rank's partial sum, which reduce_block_output() sums over the ranks and adds to x
// (nothing to do on one rank).
float* block_output(LayerContext& c);
void reduce_block_output(LayerContext& c);

// y = w x for a 2-D weight (n_out = shape[1] rows of shape[0]).
kernels::MatmulArgs linear_args(const Weight& w, const float* x, int64_t n_tokens, float* y,
                                bool accumulate = false);
void linear(Backend& be, const Weight& w, const float* x, int64_t n_tokens, float* y,
            bool accumulate = false);

}  // namespace arc
