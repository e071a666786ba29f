// The tensors of the shared blocks, combined by each family's table (engine/model/arch/*.cpp).
// Names and shapes follow GGUF (shape[0] is the row length).
#pragma once

#include "arc/model_arch.h"

namespace arc::arch::spec {

using D = Dim;
using R = TensorRole;
using S = Split;
using P = Presence;

// Globals.
inline constexpr TensorSpec kTokEmbd{R::kTokEmbd, "token_embd.weight", false, {D::kEmbd, D::kVocab},
                                     2,           S::kReplicated};
inline constexpr TensorSpec kOutputNorm{R::kOutputNorm, "output_norm.weight", false, {D::kEmbd}, 1,
                                        S::kReplicated};
inline constexpr TensorSpec kOutput{R::kOutput, "output.weight", false,     {D::kEmbd, D::kVocab},
                                    2,          S::kVocab,       P::kUntied};
inline constexpr TensorSpec kRopeFreqs{R::kRopeFreqs,  "rope_freqs.weight", false, {D::kRotHalf}, 1,
                                       S::kReplicated, P::kRopeFreqs};

// Attention block.
inline constexpr TensorSpec kAttnNorm{R::kAttnNorm,  "attn_norm.weight", true, {D::kEmbd}, 1,
                                      S::kReplicated};
inline constexpr TensorSpec kAttnQ{R::kAttnQ, "attn_q.weight", true, {D::kEmbd, D::kQ},
                                   2,         S::kRowsByHead};
inline constexpr TensorSpec kAttnK{R::kAttnK, "attn_k.weight", true, {D::kEmbd, D::kKv},
                                   2,         S::kRowsByHead};
inline constexpr TensorSpec kAttnV{R::kAttnV, "attn_v.weight", true, {D::kEmbd, D::kKv},
                                   2,         S::kRowsByHead};
inline constexpr TensorSpec kAttnOut{R::kAttnOut, "attn_output.weight", true, {D::kQ, D::kEmbd},
                                     2,           S::kColsByHead};
inline constexpr TensorSpec kAttnQBias{R::kAttnQBias,  "attn_q.bias", true, {D::kQ}, 1,
                                       S::kRowsByHead, P::kQkvBias};
inline constexpr TensorSpec kAttnKBias{R::kAttnKBias,  "attn_k.bias", true, {D::kKv}, 1,
                                       S::kRowsByHead, P::kQkvBias};
inline constexpr TensorSpec kAttnVBias{R::kAttnVBias,  "attn_v.bias", true, {D::kKv}, 1,
                                       S::kRowsByHead, P::kQkvBias};
inline constexpr TensorSpec kAttnQNorm{
    R::kAttnQNorm, "attn_q_norm.weight", true, {D::kHeadDim}, 1, S::kReplicated, P::kQkNorm};
inline constexpr TensorSpec kAttnKNorm{
    R::kAttnKNorm, "attn_k_norm.weight", true, {D::kHeadDim}, 1, S::kReplicated, P::kQkNorm};

// Full-width q/k norms (minimax-m2): one weight over all heads, split with the heads.
inline constexpr TensorSpec kAttnQNormFull{
    R::kAttnQNorm, "attn_q_norm.weight", true, {D::kQ}, 1, S::kRowsByHead, P::kQkNorm};
inline constexpr TensorSpec kAttnKNormFull{
    R::kAttnKNorm, "attn_k_norm.weight", true, {D::kKv}, 1, S::kRowsByHead, P::kQkNorm};

// FFN blocks.
inline constexpr TensorSpec kFfnNorm{R::kFfnNorm, "ffn_norm.weight", true, {D::kEmbd},
                                     1,           S::kReplicated};
// The FFN norm under the name GLM's converter gives it (post_attention_layernorm).
inline constexpr TensorSpec kFfnNormPostAttn{
    R::kFfnNorm, "post_attention_norm.weight", true, {D::kEmbd}, 1, S::kReplicated};
inline constexpr TensorSpec kFfnGate{R::kFfnGate, "ffn_gate.weight", true, {D::kEmbd, D::kFf}, 2,
                                     S::kRows,    P::kDenseFfn};
inline constexpr TensorSpec kFfnUp{R::kFfnUp, "ffn_up.weight", true,        {D::kEmbd, D::kFf},
                                   2,         S::kRows,        P::kDenseFfn};
inline constexpr TensorSpec kFfnDown{R::kFfnDown, "ffn_down.weight", true, {D::kFf, D::kEmbd}, 2,
                                     S::kCols,    P::kDenseFfn};
inline constexpr TensorSpec kFfnRouter{
    R::kFfnRouter, "ffn_gate_inp.weight", true, {D::kEmbd, D::kExpert}, 2, S::kReplicated,
    P::kMoeFfn};
inline constexpr TensorSpec kFfnGateExps{R::kFfnGateExps,
                                         "ffn_gate_exps.weight",
                                         true,
                                         {D::kEmbd, D::kFfExp, D::kExpert},
                                         3,
                                         S::kExpertRows,
                                         P::kMoeFfn};
inline constexpr TensorSpec kFfnUpExps{
    R::kFfnUpExps, "ffn_up_exps.weight", true, {D::kEmbd, D::kFfExp, D::kExpert}, 3, S::kExpertRows,
    P::kMoeFfn};
inline constexpr TensorSpec kFfnDownExps{R::kFfnDownExps,
                                         "ffn_down_exps.weight",
                                         true,
                                         {D::kFfExp, D::kEmbd, D::kExpert},
                                         3,
                                         S::kExpertCols,
                                         P::kMoeFfn};
inline constexpr TensorSpec kFfnShexpGate{
    R::kFfnShexpGate, "ffn_gate_inp_shexp.weight", true, {D::kEmbd}, 1, S::kReplicated,
    P::kSharedExpert};
inline constexpr TensorSpec kFfnGateShexp{
    R::kFfnGateShexp, "ffn_gate_shexp.weight", true, {D::kEmbd, D::kFfShexp}, 2,
    S::kRows,         P::kSharedExpert};
inline constexpr TensorSpec kFfnUpShexp{
    R::kFfnUpShexp, "ffn_up_shexp.weight", true, {D::kEmbd, D::kFfShexp}, 2,
    S::kRows,       P::kSharedExpert};
inline constexpr TensorSpec kFfnDownShexp{
    R::kFfnDownShexp, "ffn_down_shexp.weight", true, {D::kFfShexp, D::kEmbd}, 2,
    S::kCols,         P::kSharedExpert};

inline constexpr TensorSpec kFfnExpProbsB{
    R::kFfnExpProbsB, "exp_probs_b.bias", true, {D::kExpert}, 1, S::kReplicated, P::kMoeFfn};

// Multi-token-prediction (nextn) layers: validated, never loaded.
inline constexpr TensorSpec kNextnEhProj{
    R::kNextnEhProj, "nextn.eh_proj.weight", true, {D::kEmbd2, D::kEmbd}, 2, S::kReplicated,
    P::kNextn};
inline constexpr TensorSpec kNextnEnorm{
    R::kNextnEnorm, "nextn.enorm.weight", true, {D::kEmbd}, 1, S::kReplicated, P::kNextn};
inline constexpr TensorSpec kNextnHnorm{
    R::kNextnHnorm, "nextn.hnorm.weight", true, {D::kEmbd}, 1, S::kReplicated, P::kNextn};
inline constexpr TensorSpec kNextnEmbedTokens{R::kNextnEmbedTokens,
                                              "nextn.embed_tokens.weight",
                                              true,
                                              {D::kEmbd, D::kVocab},
                                              2,
                                              S::kReplicated,
                                              P::kNextnOptional};
inline constexpr TensorSpec kNextnSharedHeadHead{R::kNextnSharedHeadHead,
                                                 "nextn.shared_head_head.weight",
                                                 true,
                                                 {D::kEmbd, D::kVocab},
                                                 2,
                                                 S::kReplicated,
                                                 P::kNextnOptional};
inline constexpr TensorSpec kNextnSharedHeadNorm{
    R::kNextnSharedHeadNorm, "nextn.shared_head_norm.weight", true, {D::kEmbd}, 1, S::kReplicated,
    P::kNextnOptional};

// gpt-oss: the FFN norm under its own name, sinks, and biases on the output projection, the
// router and the experts. Biases of replicated outputs (attn_output, ffn_down_exps) stay whole:
// rank 0 adds them after the split projections.
inline constexpr TensorSpec kPostAttnNorm{
    R::kFfnNorm, "post_attention_norm.weight", true, {D::kEmbd}, 1, S::kReplicated};
inline constexpr TensorSpec kAttnOutBias{R::kAttnOutBias, "attn_output.bias", true, {D::kEmbd}, 1,
                                         S::kReplicated};
inline constexpr TensorSpec kAttnSinks{R::kAttnSinks, "attn_sinks.weight", true, {D::kHead}, 1,
                                       S::kHeads};
inline constexpr TensorSpec kFfnRouterBias{
    R::kFfnRouterBias, "ffn_gate_inp.bias", true, {D::kExpert}, 1, S::kReplicated};
inline constexpr TensorSpec kFfnGateExpsBias{
    R::kFfnGateExpsBias, "ffn_gate_exps.bias", true, {D::kFfExp, D::kExpert}, 2, S::kCols};
inline constexpr TensorSpec kFfnUpExpsBias{
    R::kFfnUpExpsBias, "ffn_up_exps.bias", true, {D::kFfExp, D::kExpert}, 2, S::kCols};
inline constexpr TensorSpec kFfnDownExpsBias{
    R::kFfnDownExpsBias, "ffn_down_exps.bias", true, {D::kEmbd, D::kExpert}, 2, S::kReplicated};

// deepseek2: multi-head latent attention. The q path is q_a -> norm -> q_b (or attn_q alone
// without a q LoRA); the latent and the rope key come from one projection (attn_kv_a_mqa); k_b
// and v_b are the per-head up-projections of the latent (the newer converters' split of kv_b).
// Under tensor parallelism q_b (or attn_q), k_b, v_b and attn_output split by head; the latent
// projection and its norm are replicated (every head reads every latent, arc/shard_plan.h).
inline constexpr TensorSpec kAttnQA{R::kAttnQA, "attn_q_a.weight", true,     {D::kEmbd, D::kQLora},
                                    2,          S::kReplicated,    P::kQLora};
inline constexpr TensorSpec kAttnQANorm{
    R::kAttnQANorm, "attn_q_a_norm.weight", true, {D::kQLora}, 1, S::kReplicated, P::kQLora};
inline constexpr TensorSpec kAttnQB{R::kAttnQB, "attn_q_b.weight", true,     {D::kQLora, D::kQ},
                                    2,          S::kRowsByHead,    P::kQLora};
inline constexpr TensorSpec kAttnQNoLora{R::kAttnQ, "attn_q.weight", true,       {D::kEmbd, D::kQ},
                                         2,         S::kRowsByHead,  P::kNoQLora};
inline constexpr TensorSpec kAttnKvAMqa{
    R::kAttnKvAMqa, "attn_kv_a_mqa.weight", true, {D::kEmbd, D::kKvLoraRope}, 2, S::kReplicated};
inline constexpr TensorSpec kAttnKvANorm{
    R::kAttnKvANorm, "attn_kv_a_norm.weight", true, {D::kKvLora}, 1, S::kReplicated};
inline constexpr TensorSpec kAttnKB{
    R::kAttnKB, "attn_k_b.weight", true, {D::kQkNope, D::kKvLora, D::kHead}, 3, S::kHeadSlices};
inline constexpr TensorSpec kAttnVB{
    R::kAttnVB, "attn_v_b.weight", true, {D::kKvLora, D::kVHead, D::kHead}, 3, S::kHeadSlices};
inline constexpr TensorSpec kAttnOutMla{R::kAttnOut, "attn_output.weight", true, {D::kQv, D::kEmbd},
                                        2,           S::kColsByHead};

// qwen3next: gated full attention in every full_attn_interval-th layer (attn_q holds q and its
// output gate per head), Gated DeltaNet in the others, as llama.cpp's converter writes them
// (attn_qkv / attn_gate: the in_proj split into the conv input and the norm gate).
inline constexpr TensorSpec kAttnQGated{
    R::kAttnQ, "attn_q.weight", true, {D::kEmbd, D::kQGated}, 2, S::kRowsByHead, P::kFullAttn};
inline constexpr TensorSpec kAttnKHybrid{
    R::kAttnK, "attn_k.weight", true, {D::kEmbd, D::kKv}, 2, S::kRowsByHead, P::kFullAttn};
inline constexpr TensorSpec kAttnVHybrid{
    R::kAttnV, "attn_v.weight", true, {D::kEmbd, D::kKv}, 2, S::kRowsByHead, P::kFullAttn};
inline constexpr TensorSpec kAttnOutHybrid{
    R::kAttnOut, "attn_output.weight", true, {D::kQ, D::kEmbd}, 2, S::kColsByHead, P::kFullAttn};
inline constexpr TensorSpec kAttnQNormHybrid{
    R::kAttnQNorm, "attn_q_norm.weight", true, {D::kHeadDim}, 1, S::kReplicated, P::kFullAttn};
inline constexpr TensorSpec kAttnKNormHybrid{
    R::kAttnKNorm, "attn_k_norm.weight", true, {D::kHeadDim}, 1, S::kReplicated, P::kFullAttn};
inline constexpr TensorSpec kSsmQkv{
    R::kSsmQkv, "attn_qkv.weight", true,         {D::kEmbd, D::kSsmChannels},
    2,          S::kReplicated,    P::kRecurrent};
inline constexpr TensorSpec kSsmGate{
    R::kSsmGate, "attn_gate.weight", true,         {D::kEmbd, D::kSsmInner},
    2,           S::kReplicated,     P::kRecurrent};
inline constexpr TensorSpec kSsmConv{
    R::kSsmConv, "ssm_conv1d.weight", true,         {D::kSsmKernel, D::kSsmChannels},
    2,           S::kReplicated,      P::kRecurrent};
inline constexpr TensorSpec kSsmDtBias{R::kSsmDtBias,  "ssm_dt.bias", true, {D::kSsmVHeads}, 1,
                                       S::kReplicated, P::kRecurrent};
inline constexpr TensorSpec kSsmA{R::kSsmA, "ssm_a",        true,         {D::kSsmVHeads},
                                  1,        S::kReplicated, P::kRecurrent};
inline constexpr TensorSpec kSsmBa{R::kSsmBa, "ssm_ba.weight", true,         {D::kEmbd, D::kSsmBa},
                                   2,         S::kReplicated,  P::kRecurrent};
inline constexpr TensorSpec kSsmNorm{R::kSsmNorm, "ssm_norm.weight", true,         {D::kSsmHeadV},
                                     1,           S::kReplicated,    P::kRecurrent};
inline constexpr TensorSpec kSsmOut{
    R::kSsmOut, "ssm_out.weight", true, {D::kSsmInner, D::kEmbd}, 2, S::kReplicated, P::kRecurrent};

}  // namespace arc::arch::spec
