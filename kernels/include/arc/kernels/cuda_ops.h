// CUDA kernels: the op set of the CPU kernels on a CUDA stream. Plain C++ header (no CUDA
// includes) so the engine's CUDA backend and host-only code can include it; the kernels live in
// kernels/cuda, one .cu/.cuh pair per op family.
//
// Conventions:
//  - every pointer inside an Args struct is device memory (or managed memory);
//  - every call only enqueues work on ctx.stream and never synchronises, so a decode step can be
//    captured in a CUDA graph; a call returns false (enqueuing nothing) for arguments it does not
//    support (an unknown weight format, a head_dim without a kernel, scratch too small);
//  - launch failures are left for the caller to collect with cudaGetLastError() / at sync.
#pragma once

#include <cstddef>
#include <cstdint>

#include "arc/kernels/attention.h"
#include "arc/kernels/delta_net.h"
#include "arc/kernels/matmul.h"
#include "arc/kernels/mla.h"
#include "arc/kernels/moe.h"
#include "arc/kernels/ops.h"
#include "arc/kernels/vision_ops.h"

struct CUstream_st;

namespace arc::kernels::cuda {

using Stream = CUstream_st*;  // == cudaStream_t

// Largest shapes a backend will hand to the kernels; sizes the device scratch (quantized
// activations, split-K attention partials, MoE token grouping) so no kernel allocates.
struct ScratchShape {
  int64_t max_tokens = 1;   // tokens in one step
  int64_t max_dim = 0;      // largest n_in / n_out / n_embd of any matmul
  int64_t n_expert = 0;     // MoE experts (0: dense model)
  int64_t k = 0;            // experts used per token
  int64_t n_head = 0;       // query heads (this rank's share)
  int64_t head_dim = 0;     // largest head_dim
  int64_t max_context = 0;  // longest sequence the attention will see
  int64_t n_vocab = 0;      // sampling helpers
};
size_t scratch_bytes(const ScratchShape& shape);

// Per-stream state handed to every op. The backend owns the memory.
struct Context {
  Stream stream = nullptr;
  void* scratch = nullptr;  // device memory of scratch_bytes(shape) bytes
  size_t scratch_size = 0;
};

// The ops of arc::Backend (shapes as in the CPU headers named above).
bool matmul(const Context& ctx, const MatmulArgs& a);
bool rms_norm(const Context& ctx, const float* x, const float* w, float* y, int64_t n_rows,
              int64_t d, float eps);
bool sum_squares(const Context& ctx, const float* x, float* ss, int64_t n_rows, int64_t d);
bool rms_norm_sumsq(const Context& ctx, const float* x, const float* w, const float* ss, float* y,
                    int64_t n_rows, int64_t d, int64_t n_total, float eps);
bool rope(const Context& ctx, const RopeArgs& a);
bool add(const Context& ctx, const float* a, const float* b, float* y, int64_t n);
bool add_bias(const Context& ctx, float* x, const float* bias, int64_t n_rows, int64_t d);
bool swiglu(const Context& ctx, const float* gate, const float* up, float* y, int64_t n);
bool add_sigmoid_gated(const Context& ctx, float* y, const float* s, const float* g, int64_t n_rows,
                       int64_t d);
bool get_rows(const Context& ctx, DType t, const void* table, int64_t n_rows, int64_t d,
              const int32_t* ids, int64_t n_ids, float* out);
bool gather(const Context& ctx, const float* x, const int32_t* rows, int64_t n, int64_t d,
            float* out);
bool kv_store(const Context& ctx, const KvStoreArgs& a);
bool paged_attention(const Context& ctx, const PagedAttentionArgs& a);
bool moe_route(const Context& ctx, const RouterArgs& a);
// Multi-head latent attention (arc/kernels/mla.h): latent width up to 512, rope part up to 64,
// F16 or F32 cache. Needs no scratch.
bool mla_kv_store(const Context& ctx, const MlaKvStoreArgs& a);
bool mla_attention(const Context& ctx, const MlaAttentionArgs& a);
// The plain form for prefill: no-rope key and value dims up to 256, rope up to 64, at most
// 65535 tokens per call.
bool mla_plain_attention(const Context& ctx, const MlaPlainAttentionArgs& a);
bool moe_ffn(const Context& ctx, const MoeFfnArgs& a);
// Gated DeltaNet (arc/kernels/delta_net.h): conv kernel width up to 8, head_k_dim up to 128,
// head_v_dim up to 256. token_state / token_snapshot are device memory and cannot be checked:
// they must satisfy the header's run rules. Need no scratch.
bool delta_net_conv(const Context& ctx, const DeltaConvArgs& a);
bool gated_delta_rule(const Context& ctx, const GatedDeltaRuleArgs& a);
bool gated_rms_norm(const Context& ctx, const GatedRmsNormArgs& a);
bool delta_state_copy(const Context& ctx, const DeltaStateCopyArgs& a);
bool sigmoid_mul(const Context& ctx, const SigmoidMulArgs& a);

// Vision encoder ops (arc/kernels/vision_ops.h). dense_attention cannot check seg_offsets (device
// memory): they must ascend from 0 to n_tokens. head_dim of dense_attention: up to 256.
bool layer_norm(const Context& ctx, const float* x, const float* w, const float* b, float* y,
                int64_t n_rows, int64_t d, float eps);
bool gelu(const Context& ctx, const float* x, float* y, int64_t n);  // tanh approximation
bool gelu_erf(const Context& ctx, const float* x, float* y, int64_t n);
bool rope_table(const Context& ctx, const RopeTableArgs& a);
bool dense_attention(const Context& ctx, const DenseAttentionArgs& a);

// Sampling helpers. logits: [n_rows, n_vocab].
// out_ids[r] = argmax of row r (lowest index on ties).
bool argmax_rows(const Context& ctx, const float* logits, int64_t n_rows, int64_t n_vocab,
                 int32_t* out_ids);
// Top-k of each row after dividing by temperature: out_ids/out_logprobs [n_rows, k], best first,
// log-probabilities of the whole tempered distribution (so the host samples among k candidates).
bool top_k_rows(const Context& ctx, const float* logits, int64_t n_rows, int64_t n_vocab, int64_t k,
                float temperature, int32_t* out_ids, float* out_logprobs);

// Device facts for logs and the CLI ("NVIDIA H200, sm_90, 139 GiB"); empty without a device.
struct DeviceInfo {
  int index = -1;
  char name[256] = {};
  int sm_major = 0;
  int sm_minor = 0;
  size_t total_bytes = 0;
  bool integrated = false;  // GB10: unified memory shared with the CPU
};
// Number of usable devices (0 when there is no driver or device; never throws or aborts).
int device_count();
bool device_info(int index, DeviceInfo* out);

}  // namespace arc::kernels::cuda
