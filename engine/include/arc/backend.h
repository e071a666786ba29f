// The compute backend the forward pass runs on. The forward is plain C++ that enqueues ops on a
// Backend; the CPU backend runs them on a thread pool, a CUDA backend will run them on a stream.
//
// Rules that keep the interface right for a GPU:
//  - every pointer given to an op is backend memory (from alloc() or map_weights());
//  - ops are enqueued and may run asynchronously; sync() waits and reports the first failure;
//  - host data enters through upload() and leaves through download() only (a decode step
//    downloads nothing but its results).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "arc/kernels/attention.h"
#include "arc/kernels/delta_net.h"
#include "arc/kernels/matmul.h"
#include "arc/kernels/mla.h"
#include "arc/kernels/moe.h"
#include "arc/kernels/ops.h"
#include "arc/kernels/vision_ops.h"
#include "arc/status.h"

namespace arc {

// Memory owned by a backend (device-resident on a GPU). Freed by the destructor.
class DeviceBuffer {
 public:
  virtual ~DeviceBuffer() = default;
  virtual void* data() = 0;
  virtual size_t size() const = 0;
  template <typename T>
  T* as() {
    return static_cast<T*>(data());
  }
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  virtual int num_threads() const = 0;

  // Memory. alloc() returns zeroed memory.
  virtual Result<std::unique_ptr<DeviceBuffer>> alloc(size_t bytes) = 0;
  // Makes weight bytes in host memory readable by ops. A backend that can read host memory (the
  // CPU) returns the same pointer: such weights are used in place. Weights in files go through
  // WeightStreamer instead where a backend offers it (arc/backend_caps.h).
  virtual Result<const void*> map_weights(std::span<const uint8_t> host) = 0;
  // Ordered with the ops; `src` / `dst` must stay valid until sync().
  virtual void upload(void* dst, const void* src, size_t bytes) = 0;
  virtual void download(void* dst, const void* src, size_t bytes) = 0;
  // Waits for everything enqueued; returns the first failure since the last sync().
  virtual Status sync() = 0;

  // Ops (shapes in the kernels' headers).
  virtual void matmul(const kernels::MatmulArgs& a) = 0;
  // Several matmuls of the same x (attention's Q, K, V). A backend may run them as one launch;
  // the default runs them one by one.
  virtual void matmul_multi(std::span<const kernels::MatmulArgs> a) {
    for (const kernels::MatmulArgs& m : a) matmul(m);
  }
  // Independent matmuls, each of its own x (MLA's per-head up-projections). A backend may run
  // them as one launch; the default runs them one by one.
  virtual void matmul_batch(std::span<const kernels::MatmulArgs> a) {
    for (const kernels::MatmulArgs& m : a) matmul(m);
  }
  // x, y: [n_rows, d]; w: [d] F32 or null.
  virtual void rms_norm(const float* x, const float* w, float* y, int64_t n_rows, int64_t d,
                        float eps) = 0;
  // The two passes of an RMS norm over rows split across ranks (arc/kernels/ops.h): ss[r] = sum
  // of x[r, :]^2, then y = x * w / sqrt(ss / n_total + eps). x, y: [n_rows, d]; ss: [n_rows].
  virtual void sum_squares(const float* x, float* ss, int64_t n_rows, int64_t d) = 0;
  virtual void rms_norm_sumsq(const float* x, const float* w, const float* ss, float* y,
                              int64_t n_rows, int64_t d, int64_t n_total, float eps) = 0;
  virtual void rope(const kernels::RopeArgs& a) = 0;
  // y = a + b, [n].
  virtual void add(const float* a, const float* b, float* y, int64_t n) = 0;
  // x[r, :] += bias, x: [n_rows, d], bias: [d].
  virtual void add_bias(float* x, const float* bias, int64_t n_rows, int64_t d) = 0;
  // y = silu(gate) * up, [n].
  virtual void swiglu(const float* gate, const float* up, float* y, int64_t n) = 0;
  // y[t, :] += sigmoid(g[t]) * s[t, :]; y, s: [n_rows, d]; g: [n_rows].
  virtual void add_sigmoid_gated(float* y, const float* s, const float* g, int64_t n_rows,
                                 int64_t d) = 0;
  // out[j, :] = table[ids[j], :]; table [n_rows, d] in t; ids: [n_ids] backend memory.
  virtual void get_rows(DType t, const void* table, int64_t n_rows, int64_t d, const int32_t* ids,
                        int64_t n_ids, float* out) = 0;
  // out[j, :] = x[rows[j], :]; x: [*, d] F32, rows: [n] backend memory.
  virtual void gather(const float* x, const int32_t* rows, int64_t n, int64_t d, float* out) = 0;
  // The K/V cache's bytes are the backend's: it chooses the layout (kernels::KvLayout) its
  // kv_store writes and its paged_attention reads, whatever the args' `layout` says.
  virtual void kv_store(const kernels::KvStoreArgs& a) = 0;
  virtual void paged_attention(const kernels::PagedAttentionArgs& a) = 0;
  virtual void moe_route(const kernels::RouterArgs& a) = 0;
  virtual void moe_ffn(const kernels::MoeFfnArgs& a) = 0;

  // Multi-head latent attention (deepseek2; shapes in arc/kernels/mla.h). Optional: a backend
  // that has them answers has_mla_ops() true and overrides both; the defaults enqueue nothing,
  // and loading an MLA model on a backend without them is refused.
  virtual bool has_mla_ops() const { return false; }
  virtual void mla_kv_store(const kernels::MlaKvStoreArgs& /*a*/) {}
  virtual void mla_attention(const kernels::MlaAttentionArgs& /*a*/) {}
  // The plain form for prefill chunks (mla_block.cpp takes it only where this answers true).
  virtual bool has_mla_plain() const { return false; }
  virtual void mla_plain_attention(const kernels::MlaPlainAttentionArgs& /*a*/) {}

  // Gated DeltaNet (qwen3next's linear-attention layers; shapes, state slots and snapshots in
  // arc/kernels/delta_net.h). Optional: a backend that has them answers has_delta_net_ops() true
  // and overrides all five; the defaults enqueue nothing, and loading a hybrid model on a backend
  // without them is refused.
  virtual bool has_delta_net_ops() const { return false; }
  virtual void delta_net_conv(const kernels::DeltaConvArgs& /*a*/) {}
  virtual void gated_delta_rule(const kernels::GatedDeltaRuleArgs& /*a*/) {}
  virtual void gated_rms_norm(const kernels::GatedRmsNormArgs& /*a*/) {}
  virtual void delta_state_copy(const kernels::DeltaStateCopyArgs& /*a*/) {}
  virtual void sigmoid_mul(const kernels::SigmoidMulArgs& /*a*/) {}

  // Ops of the vision encoder (ViT blocks; shapes in arc/kernels/vision_ops.h). Optional: a
  // backend that has them (CPU, CUDA) answers has_vision_ops() true and overrides all five; the
  // defaults enqueue nothing, and the vision encoder refuses a backend without them.
  virtual bool has_vision_ops() const { return false; }
  // x, y: [n_rows, d]; w, b: [d] F32 or null. y may alias x.
  virtual void layer_norm(const float* /*x*/, const float* /*w*/, const float* /*b*/, float* /*y*/,
                          int64_t /*n_rows*/, int64_t /*d*/, float /*eps*/) {}
  // y = gelu(x), [n]: the tanh approximation / the exact erf form. y may alias x.
  virtual void gelu(const float* /*x*/, float* /*y*/, int64_t /*n*/) {}
  virtual void gelu_erf(const float* /*x*/, float* /*y*/, int64_t /*n*/) {}
  // Split-half rotary with a per-token cos/sin table (2-D image positions).
  virtual void rope_table(const kernels::RopeTableArgs& /*a*/) {}
  // Full attention within segments (seg_offsets: backend memory).
  virtual void dense_attention(const kernels::DenseAttentionArgs& /*a*/) {}
};

// Where the CPU backend keeps weights read from a model file.
enum class CpuWeights {
  kCopy,     // streamed into huge-page host memory (arc/host_memory.h): faster decode
  kInPlace,  // read in place from the file mapping: no copy, loads sooner, 4 KiB pages
};

// The CPU backend: kernels/cpu on a thread pool of n_threads (<= 0: all online CPUs). With kCopy
// it is a WeightStreamer (arc/backend_caps.h).
std::unique_ptr<Backend> make_cpu_backend(int n_threads, CpuWeights weights = CpuWeights::kCopy);

}  // namespace arc
