// Mixture-of-Experts: routing and expert compute.
#pragma once

#include <cstdint>

#include "arc/kernels/dtype.h"
#include "arc/kernels/parallel.h"
#include "arc/kernels/workspace.h"

namespace arc::kernels {

enum class RouterScoring : int {
  kSoftmax = 0,  // Qwen, Mixtral: softmax over experts, then top-k
  kSigmoid = 1,  // DeepSeek V3, GLM-4.5: sigmoid scores, top-k on score + bias
};

struct RouterArgs {
  const float* logits = nullptr;  // [n_tokens, n_expert]
  int64_t n_tokens = 0;
  int64_t n_expert = 0;
  int64_t k = 0;
  RouterScoring scoring = RouterScoring::kSoftmax;
  const float* bias = nullptr;  // [n_expert] selection bias (sigmoid routing) or null
  bool normalize = true;        // renormalise the k weights to sum to 1
  float weight_scale = 1.0f;    // routed scaling factor applied after normalisation
  // Group-limited selection (DeepSeek-V3): the experts form n_group equal groups; a group's score
  // is the sum of its two best selection scores; only the n_group_used best groups (lowest index
  // on ties) compete for the top k. n_group <= 1: every expert competes.
  int64_t n_group = 1;
  int64_t n_group_used = 1;
  // Expert parallelism: this rank holds experts [expert_begin, expert_begin + n_local) (n_local
  // 0: all). The routing still scores every expert; ids are written relative to expert_begin,
  // and a selected expert the rank does not hold is written as -1 (moe_ffn skips it), with its
  // weight unchanged.
  int64_t expert_begin = 0;
  int64_t n_local = 0;
  int32_t* ids = nullptr;    // out: [n_tokens, k], highest score first
  float* weights = nullptr;  // out: [n_tokens, k]
};
void moe_route(const RouterArgs& args);

// The activation between an expert's gate/up and its down projection.
enum class MoeActivation : int {
  kSwiGlu = 0,     // silu(g) * u
  kSwiGluOai = 1,  // gpt-oss: g' = min(g, limit), u' = clamp(u, -limit, limit),
                   // g' * sigmoid(alpha * g') * (u' + 1)
};

// y[t, :] (+)= sum_j weights[t, j] * down_e(act(gate_e x[t], up_e x[t])),  e = ids[t, j],
// each projection plus its expert's bias when the args have biases (gpt-oss). A pair whose id is
// outside [0, n_expert) contributes nothing and reads no weights (expert parallelism: an expert
// another rank holds, RouterArgs::n_local).
// Prefill groups tokens by expert so each expert's weights are read once per step; decode reads
// only the selected experts.
struct MoeFfnArgs {
  const float* x = nullptr;  // [n_tokens, n_embd]
  int64_t n_tokens = 0;
  int64_t n_embd = 0;
  int64_t n_ff = 0;  // per-expert intermediate size (this rank's share under TP)
  int64_t n_expert = 0;
  int64_t k = 0;
  const int32_t* ids = nullptr;    // [n_tokens, k]
  const float* weights = nullptr;  // [n_tokens, k]
  const void* gate =
      nullptr;  // [n_expert][n_ff, n_embd] in gate_type, expert stride gate_expert_bytes
  const void* up = nullptr;    // [n_expert][n_ff, n_embd] in up_type
  const void* down = nullptr;  // [n_expert][n_embd, n_ff] in down_type
  DType gate_type = DType::F32;
  DType up_type = DType::F32;
  DType down_type = DType::F32;
  size_t gate_expert_bytes = 0;  // 0: n_ff rows of n_embd
  size_t up_expert_bytes = 0;
  size_t down_expert_bytes = 0;
  // Per-expert F32 biases, or null: g = gate_e x + gate_bias[e], u = up_e x + up_bias[e],
  // down_e h + down_bias[e] (the last scaled by the routing weight with the rest).
  const float* gate_bias = nullptr;  // [n_expert, n_ff]
  const float* up_bias = nullptr;    // [n_expert, n_ff]
  const float* down_bias = nullptr;  // [n_expert, n_embd]
  MoeActivation act = MoeActivation::kSwiGlu;
  float alpha = 1.702f;  // kSwiGluOai
  float limit = 7.0f;    // kSwiGluOai
  float* y = nullptr;    // [n_tokens, n_embd]
  bool accumulate = false;
};
bool moe_ffn(const MoeFfnArgs& args, Parallel* pool);
// The same with scratch memory kept in `ws` between calls (no allocation per call).
bool moe_ffn(const MoeFfnArgs& args, Parallel* pool, Workspace* ws);

namespace ref {
void moe_route(const RouterArgs& args);
bool moe_ffn(const MoeFfnArgs& args);
}  // namespace ref

}  // namespace arc::kernels
