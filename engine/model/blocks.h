// Shared blocks of the transformer layer, enqueued on a Backend. Each family's file composes
// them (engine/model/arch/). All pointers are backend memory.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

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
  // MLA's plain form for this step (MlaPlainPlan below): mla_rows context rows, the positions
  // 0..pos of the step's sequences one after another (0: the step runs the absorbed form).
  int64_t mla_rows = 0;
  const int32_t* mla_row_slots = nullptr;   // [mla_rows] cache slot of each context row
  const int32_t* mla_token_row0 = nullptr;  // [n_tokens] first context row of each token's sequence
  float* mla_gathered = nullptr;            // [mla_rows, kv_lora_rank + rot_dim] the rows, F32
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
// Whether MLA's plain form costs fewer multiply-adds than the absorbed form for a step of
// n_tokens tokens over n_rows context rows with n_pairs (token, visible position) pairs in all
// (the rule is spelled out in mla_block.cpp and docs/models.md).
bool mla_plain_cheaper(const ModelConfig& c, int64_t n_tokens, int64_t n_rows, int64_t n_pairs);

// The host side of the plain form (mla_plan.cpp): per step, decides the form and uploads the
// context rows' cache slots and each token's first row; owns their device buffers.
class MlaPlainPlan {
 public:
  // Buffers for steps of up to `capacity` tokens; nothing when the model or backend has no plain
  // form. The decompressed keys and values of a plain step live in q_lat and o_lat (unused by
  // that form), which caps its context rows at capacity * kv_lora_rank / max(nope, v_head_dim).
  Status ensure(const Model& model, Backend& be, int64_t capacity);
  // Sets buf's mla_* fields for a step (token i of seq_ids[i] at positions[i], each sequence's
  // tokens together in ascending positions or not: only each sequence's highest position counts).
  // `eligible` false (recorded decode / verify steps) keeps the absorbed form.
  void plan(const Model& model, Backend& be, const KvCache& kv, std::span<const int32_t> seq_ids,
            std::span<const int32_t> positions, bool eligible, StepBuffers& buf);

 private:
  std::vector<std::unique_ptr<DeviceBuffer>> owned_;
  int64_t max_rows_ = 0;
  int64_t max_tokens_ = 0;
  int32_t* d_row_slots_ = nullptr;
  int32_t* d_row0_ = nullptr;
  float* d_rows_ = nullptr;
  // Host copies kept until the next step (uploads read them asynchronously on a GPU).
  std::vector<int32_t> h_row_slots_, h_row0_;
};

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
