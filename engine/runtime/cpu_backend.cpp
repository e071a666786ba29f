// The CPU backend: memory is host memory, ops run on the calling thread with a thread pool as soon
// as they are enqueued. Weights are either copied from the file into huge-page memory
// (CpuWeights::kCopy, arc/host_memory.h says why) or read in place from the file mapping.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>
#include <span>
#include <string>
#include <vector>

#include "arc/backend.h"
#include "arc/backend_caps.h"
#include "arc/host_memory.h"
#include "arc/kernels/repack.h"
#include "arc/kernels/vision_ops.h"
#include "arc/thread_pool.h"

namespace arc {
namespace {

// Zeroed and 64-byte aligned; KV pools and large scratch land on huge pages.
class HostBuffer final : public DeviceBuffer {
 public:
  explicit HostBuffer(HostMemory m) : mem_(std::move(m)) {}
  void* data() override { return mem_.data(); }
  size_t size() const override { return mem_.size(); }

 private:
  HostMemory mem_;
};

class CpuBackend : public Backend {
 public:
  explicit CpuBackend(int n_threads)
      : pool_(n_threads), machine_threads_(ThreadPool::hardware_threads()) {}

  std::string_view name() const override { return "cpu"; }
  int num_threads() const override { return pool_.num_threads(); }

  Result<std::unique_ptr<DeviceBuffer>> alloc(size_t bytes) override {
    ARC_ASSIGN_OR_RETURN(HostMemory m, HostMemory::allocate(bytes));
    return std::unique_ptr<DeviceBuffer>(std::make_unique<HostBuffer>(std::move(m)));
  }
  Result<const void*> map_weights(std::span<const uint8_t> host) override {
    return static_cast<const void*>(host.data());
  }
  void upload(void* dst, const void* src, size_t bytes) override {
    if (bytes) std::memcpy(dst, src, bytes);
  }
  void download(void* dst, const void* src, size_t bytes) override {
    if (bytes) std::memcpy(dst, src, bytes);
  }
  Status sync() override {
    Status s = error_;
    error_ = ok_status();
    return s;
  }

  void matmul(const kernels::MatmulArgs& a) override {
    if (!kernels::matmul(a, &pool_, &ws_)) {
      fail("matmul: unsupported weight type " + std::string(dtype_name(a.w_type)));
    }
  }
  void matmul_multi(std::span<const kernels::MatmulArgs> a) override {
    if (!kernels::matmul_multi(a, &pool_, &ws_)) {
      fail("matmul: unsupported weight type in Q/K/V");
    }
  }
  void matmul_batch(std::span<const kernels::MatmulArgs> a) override {
    if (!kernels::matmul_batch(a, &pool_, &ws_)) {
      fail("matmul: unsupported weight type in a per-head product");
    }
  }
  void rms_norm(const float* x, const float* w, float* y, int64_t n_rows, int64_t d,
                float eps) override {
    kernels::parallel_for(&pool_, n_rows, 16, [&](int64_t b, int64_t e) {
      kernels::rms_norm(x + b * d, w, y + b * d, e - b, d, eps);
    });
  }
  void sum_squares(const float* x, float* ss, int64_t n_rows, int64_t d) override {
    kernels::parallel_for(&pool_, n_rows, 16, [&](int64_t b, int64_t e) {
      kernels::sum_squares(x + b * d, ss + b, e - b, d);
    });
  }
  void rms_norm_sumsq(const float* x, const float* w, const float* ss, float* y, int64_t n_rows,
                      int64_t d, int64_t n_total, float eps) override {
    kernels::parallel_for(&pool_, n_rows, 16, [&](int64_t b, int64_t e) {
      kernels::rms_norm_sumsq(x + b * d, w, ss + b, y + b * d, e - b, d, n_total, eps);
    });
  }
  void rope(const kernels::RopeArgs& a) override {
    const float* cs = rope_angles(a);
    if (cs == nullptr) return;  // unusable rot_dim: nothing rotated, as kernels::rope
    const int64_t per_token = kernels::rope_table_size(a) / std::max<int64_t>(1, a.n_tokens);
    kernels::parallel_for(&pool_, a.n_tokens, 8, [&](int64_t b, int64_t e) {
      kernels::RopeArgs part = a;
      part.x = a.x + b * a.n_heads * a.head_dim;
      part.n_tokens = e - b;
      kernels::rope_rotate(part, cs + b * per_token);
    });
  }
  void add(const float* a, const float* b, float* y, int64_t n) override {
    kernels::add(a, b, y, n);
  }
  void add_bias(float* x, const float* bias, int64_t n_rows, int64_t d) override {
    for (int64_t r = 0; r < n_rows; ++r) kernels::add(x + r * d, bias, x + r * d, d);
  }
  void swiglu(const float* gate, const float* up, float* y, int64_t n) override {
    kernels::parallel_for(&pool_, n, 4096, [&](int64_t b, int64_t e) {
      kernels::swiglu(gate + b, up + b, y + b, e - b);
    });
  }
  void add_sigmoid_gated(float* y, const float* s, const float* g, int64_t n_rows,
                         int64_t d) override {
    for (int64_t r = 0; r < n_rows; ++r) {
      const float gate = 1.0f / (1.0f + std::exp(-g[r]));
      for (int64_t i = 0; i < d; ++i) y[r * d + i] += gate * s[r * d + i];
    }
  }
  void get_rows(DType t, const void* table, int64_t n_rows, int64_t d, const int32_t* ids,
                int64_t n_ids, float* out) override {
    if (!kernels::get_rows(t, table, n_rows, d, ids, n_ids, out)) {
      fail("get_rows: token id out of range or unsupported embedding type");
    }
  }
  void gather(const float* x, const int32_t* rows, int64_t n, int64_t d, float* out) override {
    for (int64_t j = 0; j < n; ++j) {
      std::memcpy(out + j * d, x + static_cast<int64_t>(rows[j]) * d, sizeof(float) * d);
    }
  }
  // The K/V cache in kHeadBlocks where its type allows (F16, F32): the layout this backend's
  // decode attention reads fastest.
  static kernels::KvLayout cache_layout(DType t) {
    return kernels::kv_layout_supports(kernels::KvLayout::kHeadBlocks, t)
               ? kernels::KvLayout::kHeadBlocks
               : kernels::KvLayout::kTokenRows;
  }
  void kv_store(const kernels::KvStoreArgs& a) override {
    kernels::KvStoreArgs b = a;
    b.layout = cache_layout(a.kv_type);
    kernels::kv_store(b);
  }
  void paged_attention(const kernels::PagedAttentionArgs& a) override {
    kernels::PagedAttentionArgs b = a;
    b.layout = cache_layout(a.kv_type);
    b.split_threads = machine_threads_;  // the machine's, not the pool's
    kernels::paged_attention(b, &pool_);
  }
  void moe_route(const kernels::RouterArgs& a) override { kernels::moe_route(a); }
  void moe_ffn(const kernels::MoeFfnArgs& a) override {
    if (!kernels::moe_ffn(a, &pool_, &ws_)) fail("moe_ffn: unsupported expert weight type");
  }

  // MLA ops (deepseek2).
  bool has_mla_ops() const override { return true; }
  void mla_kv_store(const kernels::MlaKvStoreArgs& a) override {
    if (!kernels::mla_kv_type_ok(a.kv_type)) {
      fail("mla_kv_store: the latent cache must be F16 or F32");
      return;
    }
    kernels::mla_kv_store(a);
  }
  void mla_attention(const kernels::MlaAttentionArgs& a) override {
    if (!kernels::mla_attention(a, &pool_)) {
      fail("mla_attention: unsupported cache type or block size (F16/F32, blocks <= 256)");
    }
  }
  bool has_mla_plain() const override { return true; }
  void mla_plain_attention(const kernels::MlaPlainAttentionArgs& a) override {
    if (!kernels::mla_plain_attention(a, &pool_)) fail("mla_plain_attention: invalid sizes");
  }

  // Gated DeltaNet ops (qwen3next).
  bool has_delta_net_ops() const override { return true; }
  void delta_net_conv(const kernels::DeltaConvArgs& a) override {
    if (!kernels::delta_net_conv(a, &pool_)) fail("delta_net_conv: invalid arguments");
  }
  void gated_delta_rule(const kernels::GatedDeltaRuleArgs& a) override {
    if (!kernels::gated_delta_rule(a, &pool_)) fail("gated_delta_rule: invalid arguments");
  }
  void gated_rms_norm(const kernels::GatedRmsNormArgs& a) override {
    if (!kernels::gated_rms_norm(a, &pool_)) fail("gated_rms_norm: invalid arguments");
  }
  void delta_state_copy(const kernels::DeltaStateCopyArgs& a) override {
    if (!kernels::delta_state_copy(a, &pool_)) fail("delta_state_copy: invalid arguments");
  }
  void sigmoid_mul(const kernels::SigmoidMulArgs& a) override {
    if (!kernels::sigmoid_mul(a, &pool_)) fail("sigmoid_mul: invalid arguments");
  }

  bool has_vision_ops() const override { return true; }
  void layer_norm(const float* x, const float* w, const float* b, float* y, int64_t n_rows,
                  int64_t d, float eps) override {
    kernels::parallel_for(&pool_, n_rows, 8, [&](int64_t r0, int64_t r1) {
      kernels::layer_norm(x + r0 * d, w, b, y + r0 * d, r1 - r0, d, eps);
    });
  }
  void gelu(const float* x, float* y, int64_t n) override {
    kernels::parallel_for(&pool_, n, 4096,
                          [&](int64_t b, int64_t e) { kernels::gelu(x + b, y + b, e - b); });
  }
  void gelu_erf(const float* x, float* y, int64_t n) override {
    kernels::parallel_for(&pool_, n, 4096,
                          [&](int64_t b, int64_t e) { kernels::gelu_erf(x + b, y + b, e - b); });
  }
  void rope_table(const kernels::RopeTableArgs& a) override {
    const int64_t stride = a.x_stride != 0 ? a.x_stride : a.n_heads * a.head_dim;
    kernels::parallel_for(&pool_, a.n_tokens, 16, [&](int64_t b, int64_t e) {
      kernels::RopeTableArgs part = a;
      part.x = a.x + b * stride;
      part.x_stride = stride;
      part.n_tokens = e - b;
      part.cos = a.cos + b * (a.head_dim / 2);
      part.sin = a.sin + b * (a.head_dim / 2);
      kernels::rope_table(part);
    });
  }
  void dense_attention(const kernels::DenseAttentionArgs& a) override {
    if (!kernels::dense_attention(a, &pool_)) {
      fail("dense_attention: segment offsets must ascend from 0 to the token count");
    }
  }

 protected:
  ThreadPool pool_;  // also rearranges weights at load (CopyingCpuBackend)
  // The machine's hardware threads, asked once (a file read in the C library): attention plans
  // its key split for them, so -t changes the speed, never the result.
  const int machine_threads_;

 private:
  void fail(std::string m) {
    if (error_.ok()) error_ = internal_error(std::move(m));
  }
  // The angles of a's positions: the last ones again when a rotates the same positions the same
  // way (a step's Q and K in every layer share them: one double-precision pow, cos and sin per
  // pair and token per step instead of per call), else computed on the pool. Null when a is
  // unusable.
  const float* rope_angles(const kernels::RopeArgs& a) {
    const int64_t size = kernels::rope_table_size(a);
    if (size == 0 || a.pos == nullptr) return nullptr;
    const std::span<const int32_t> pos(a.pos, static_cast<size_t>(a.n_tokens));
    const std::span<const float> ff(
        a.freq_factors, a.freq_factors ? static_cast<size_t>(size / a.n_tokens / 2) : 0);
    if (rope_cs_.size() == static_cast<size_t>(size) && kernels::rope_same_angles(rope_key_, a) &&
        std::equal(pos.begin(), pos.end(), rope_pos_.begin(), rope_pos_.end()) &&
        std::equal(ff.begin(), ff.end(), rope_ff_.begin(), rope_ff_.end())) {
      return rope_cs_.data();
    }
    rope_cs_.resize(size);
    const int64_t per_token = size / a.n_tokens;
    kernels::parallel_for(&pool_, a.n_tokens, 8, [&](int64_t b, int64_t e) {
      kernels::RopeArgs part = a;
      part.pos = a.pos + b;
      part.n_tokens = e - b;
      kernels::rope_angles(part, rope_cs_.data() + b * per_token);
    });
    rope_key_ = a;
    rope_pos_.assign(pos.begin(), pos.end());
    rope_ff_.assign(ff.begin(), ff.end());
    return rope_cs_.data();
  }

  kernels::Workspace ws_;  // kernels' scratch, reused across steps
  Status error_;
  kernels::RopeArgs rope_key_;     // what rope_cs_ was computed for (with rope_pos_)
  std::vector<int32_t> rope_pos_;  // [n_tokens]
  std::vector<float> rope_ff_;     // [rot / 2] freq_factors, or empty
  std::vector<float> rope_cs_;     // [n_tokens, rot / 2, 2]
};

// Weights streamed from the file into huge-page host memory (the loader finds WeightStreamer and
// reads files through it; weights of models parsed from memory stay in place).
class CopyingCpuBackend final : public CpuBackend, public WeightStreamer {
 public:
  using CpuBackend::CpuBackend;

  Result<const void*> stream_file_range(const std::string& path, uint64_t offset, uint64_t size,
                                        const LoadProgressFn& progress) override {
    return stream_file_rows(path, offset, 1, size, 0, size, progress);
  }
  Result<const void*> stream_file_rows(const std::string& path, uint64_t offset, uint64_t n_rows,
                                       uint64_t stride, uint64_t take_offset, uint64_t take_bytes,
                                       const LoadProgressFn& progress) override {
    const uint64_t bytes = n_rows * take_bytes;
    auto m = HostMemory::allocate(static_cast<size_t>(bytes));
    if (!m.ok()) return m.status().with_context("loading the weights of " + path);
    ReadProgressFn each;
    if (progress) each = [&](uint64_t done) { return progress(done, bytes); };
    ARC_RETURN_IF_ERROR(
        read_file_rows(path, offset, n_rows, stride, take_offset, take_bytes, m->data(), each));
    weights_.push_back(std::move(*m));
    return static_cast<const void*>(weights_.back().data());
  }
  // Q4_K and Q8_0 matrices as Q4_K_R16 / Q8_0_R16 where this CPU has those kernels (AVX-512
  // VNNI): decode streams every weight byte once per token, and the interleaved kernels compute
  // fast enough for one core to keep up with its share of the memory bandwidth.
  DType arrange_rows(const void* data, DType type, int64_t n_rows, int64_t slice_rows,
                     int64_t n_in) override {
    const std::optional<DType> to = kernels::repacked_type(type, slice_rows, n_in);
    if (!to || slice_rows <= 0 || n_rows % slice_rows != 0 || !owns(data, type, n_rows, n_in)) {
      return type;
    }
    // The memory is this backend's own (HostMemory above), written only here, before any op.
    if (!kernels::repack_rows(type, *to, const_cast<void*>(data), n_rows, n_in, &pool_)) {
      return type;
    }
    return *to;
  }

 private:
  // Whether the matrix lies inside one of the blocks this backend streamed.
  bool owns(const void* data, DType type, int64_t n_rows, int64_t n_in) const {
    const auto row = dtype_row_bytes(type, static_cast<uint64_t>(n_in));
    if (!row || n_rows < 0) return false;
    const auto* p = static_cast<const uint8_t*>(data);
    const size_t bytes = static_cast<size_t>(*row) * static_cast<size_t>(n_rows);
    for (const HostMemory& m : weights_) {
      const auto* b = static_cast<const uint8_t*>(m.data());
      if (p >= b && p <= b + m.size() && bytes <= static_cast<size_t>(b + m.size() - p)) {
        return true;
      }
    }
    return false;
  }

  std::vector<HostMemory> weights_;  // freed with the backend, which lives as long as its model
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(int n_threads, CpuWeights weights) {
  if (weights == CpuWeights::kInPlace) return std::make_unique<CpuBackend>(n_threads);
  return std::make_unique<CopyingCpuBackend>(n_threads);
}

}  // namespace arc
