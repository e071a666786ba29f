// Per-family tensor tables: every tensor a model file holds, its shape in terms of the config,
// and how it splits across tensor-parallel ranks. One walk (for_each_tensor) serves loading,
// validation, sharding and tests.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "arc/model_config.h"

namespace arc {

// What a tensor is for; the forward looks weights up by role. Values index arrays: append only.
enum class TensorRole : int {
  kTokEmbd = 0,   // [n_vocab rows of n_embd]
  kOutputNorm,    // [n_embd]
  kOutput,        // [n_vocab rows of n_embd]
  kRopeFreqs,     // [rot_dim / 2]
  kAttnNorm,      // per layer from here on: [n_embd]
  kAttnQ,         // [q_dim rows of n_embd]
  kAttnK,         // [kv_dim rows of n_embd]
  kAttnV,         // [kv_dim rows of n_embd]
  kAttnOut,       // [n_embd rows of q_dim]
  kAttnQBias,     // [q_dim]
  kAttnKBias,     // [kv_dim]
  kAttnVBias,     // [kv_dim]
  kAttnQNorm,     // [head_dim]
  kAttnKNorm,     // [head_dim]
  kFfnNorm,       // [n_embd]
  kFfnGate,       // [n_ff rows of n_embd]
  kFfnUp,         // [n_ff rows of n_embd]
  kFfnDown,       // [n_embd rows of n_ff]
  kFfnRouter,     // [n_expert rows of n_embd]  (ffn_gate_inp)
  kFfnGateExps,   // [n_expert][n_ff_exp rows of n_embd]
  kFfnUpExps,     // [n_expert][n_ff_exp rows of n_embd]
  kFfnDownExps,   // [n_expert][n_embd rows of n_ff_exp]
  kFfnShexpGate,  // [n_embd]: sigmoid gate of the shared expert (ffn_gate_inp_shexp)
  kFfnGateShexp,  // [n_ff_shexp rows of n_embd]
  kFfnUpShexp,    // [n_ff_shexp rows of n_embd]
  kFfnDownShexp,  // [n_embd rows of n_ff_shexp]
  kFfnExpProbsB,  // [n_expert]: expert score-correction bias, selection only (exp_probs_b.bias)
  // Multi-token prediction (glm4moe nextn layers): validated, not loaded (arc/model.h).
  kNextnEhProj,          // [n_embd rows of 2 * n_embd]
  kNextnEnorm,           // [n_embd]
  kNextnHnorm,           // [n_embd]
  kNextnEmbedTokens,     // [n_vocab rows of n_embd], optional
  kNextnSharedHeadHead,  // [n_vocab rows of n_embd], optional
  kNextnSharedHeadNorm,  // [n_embd]
  // gpt-oss
  kAttnOutBias,      // [n_embd]
  kAttnSinks,        // [n_head] sink logits (attn_sinks.weight)
  kFfnRouterBias,    // [n_expert] (ffn_gate_inp.bias)
  kFfnGateExpsBias,  // [n_expert rows of n_ff_exp]
  kFfnUpExpsBias,    // [n_expert rows of n_ff_exp]
  kFfnDownExpsBias,  // [n_expert rows of n_embd]
  // deepseek2 (multi-head latent attention)
  kAttnQA,       // [q_lora_rank rows of n_embd]
  kAttnQANorm,   // [q_lora_rank]
  kAttnQB,       // [n_head * head_dim rows of q_lora_rank]
  kAttnKvAMqa,   // [kv_lora_rank + rot_dim rows of n_embd]: latent, then the rope key
  kAttnKvANorm,  // [kv_lora_rank]
  kAttnKB,       // [n_head][kv_lora_rank rows of qk_nope_dim]: k_nope's up-projection, transposed
  kAttnVB,       // [n_head][v_head_dim rows of kv_lora_rank]
  // qwen3next Gated DeltaNet layers (arc/kernels/delta_net.h)
  kSsmQkv,     // [conv channels rows of n_embd]: q | k | v (attn_qkv)
  kSsmGate,    // [ssm_inner rows of n_embd]: z, the output norm's gate (attn_gate)
  kSsmConv,    // [conv channels rows of conv_kernel] (ssm_conv1d)
  kSsmDtBias,  // [ssm_v_heads] (ssm_dt.bias)
  kSsmA,       // [ssm_v_heads]: -exp(A_log) in the file, A_log once loaded (ssm_a)
  kSsmBa,      // [2 * ssm_v_heads rows of n_embd]: beta then alpha once loaded (ssm_ba)
  kSsmNorm,    // [ssm_head_v_dim] (ssm_norm)
  kSsmOut,     // [n_embd rows of ssm_inner] (ssm_out)
  kCount
};

// A symbolic dimension, resolved against a ModelConfig.
enum class Dim : uint8_t {
  kEmbd,
  kVocab,
  kQ,
  kKv,
  kHeadDim,
  kRotHalf,
  kFf,
  kExpert,
  kFfExp,
  kFfShexp,
  kOne,
  kEmbd2,  // 2 * n_embd (nextn eh_proj input)
  kHead,   // n_head
  // deepseek2
  kQLora,       // q_lora_rank
  kKvLora,      // kv_lora_rank
  kKvLoraRope,  // kv_lora_rank + rot_dim
  kQkNope,      // head_dim - rot_dim
  kVHead,       // v_head_dim
  kQv,          // n_head * v_head_dim (attention output width)
  // qwen3next
  kQGated,       // 2 * q_dim: attention q and its output gate
  kSsmChannels,  // conv channels: 2 * ssm_k_heads * ssm_head_k_dim + ssm_inner
  kSsmInner,     // ssm_v_heads * ssm_head_v_dim
  kSsmVHeads,    // ssm_v_heads
  kSsmBa,        // 2 * ssm_v_heads
  kSsmKernel,    // ssm_conv_kernel
  kSsmHeadV,     // ssm_head_v_dim
};

// How a tensor splits across N tensor-parallel ranks (GGUF order: shape[0] is the row length,
// shape[1] the row count, shape[2] the expert index).
enum class Split : uint8_t {
  kReplicated = 0,  // every rank holds all of it (norms, router, embeddings)
  kRowsByHead = 1,  // rows split by whole heads (q/k/v and their biases)
  kColsByHead = 2,  // columns split by whole heads (attn_output), then all-reduce
  kRows = 3,        // rows split evenly (dense gate/up, shared-expert gate/up)
  kCols = 4,        // columns split evenly (dense down), then all-reduce
  kExpertRows = 5,  // every expert's intermediate rows split (gate/up_exps)
  kExpertCols = 6,  // every expert's intermediate columns split (down_exps), then all-reduce
  kVocab = 7,       // rows split by vocabulary (output head)
  kHeads = 8,       // one value per query head, split by whole heads (attention sinks)
  kHeadSlices = 9,  // 3-D per-head weights split by whole heads along shape[2] (MLA's k_b, v_b)
};
std::string_view split_name(Split s);

// When a tensor is present.
enum class Presence : uint8_t {
  kAlways,
  kUntied,     // output.weight when embeddings are not tied
  kRopeFreqs,  // rope_freqs.weight when the file has it
  kQkvBias,
  kQkNorm,
  kDenseFfn,  // ffn_gate/up/down
  kMoeFfn,    // router and routed experts
  kSharedExpert,
  kNextn,          // only in the MTP layers (ModelConfig::n_nextn)
  kNextnOptional,  // only in the MTP layers, and only when the file has it
  kQLora,          // deepseek2 with a q LoRA (q_lora_rank > 0)
  kNoQLora,        // deepseek2 without one (V2-Lite: attn_q)
  kFullAttn,       // hybrid models: a full-attention layer (every layer of other models)
  kRecurrent,      // hybrid models: a Gated DeltaNet layer
};

struct TensorSpec {
  TensorRole role;
  std::string_view name;  // "token_embd.weight", or a per-layer suffix "attn_q.weight"
  bool per_layer;         // the file name is "blk.<layer>.<name>"
  std::array<Dim, 3> dims;
  int n_dims;
  Split split;
  Presence presence = Presence::kAlways;
};

// The table of one family.
struct FamilySpec {
  Family family;
  std::string_view arch;                // general.architecture
  std::span<const TensorSpec> tensors;  // globals and per-layer tensors
};
const FamilySpec& family_spec(Family f);

// A concrete tensor of a concrete model.
struct TensorRef {
  const TensorSpec* spec = nullptr;
  int layer = -1;              // -1 for globals
  std::string name;            // file name
  std::vector<int64_t> shape;  // GGUF order
};

// Visits every tensor the config's model must hold, globals first, then layer by layer (the
// n_layer forward layers: what loading, sharding and the generator walk).
void for_each_tensor(const ModelConfig& cfg, const std::function<void(const TensorRef&)>& fn);
// Visits the tensors of the MTP layers (cfg.n_nextn after the forward layers): the layer table
// as for a MoE layer plus the kNextn tensors; kNextnOptional ones are visited too (the caller
// checks them only when the file has them).
void for_each_mtp_tensor(const ModelConfig& cfg, const std::function<void(const TensorRef&)>& fn);

int64_t resolve_dim(const ModelConfig& cfg, Dim d);

}  // namespace arc
