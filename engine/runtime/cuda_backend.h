// The CUDA backend (internal header): device buffers, one stream, every op enqueued through
// arc::kernels::cuda with a Context (stream + scratch), CUDA graphs per step key, weights streamed
// from the file. Built only with ARC_WITH_CUDA and the CUDA kernels library.
//
// Memory: everything is cudaMalloc'd device memory, also on integrated GPUs (GB10). There the
// "device" memory is the same LPDDR5x as the host's, but cudaMalloc gives pinned, large-page,
// never-evicted memory the memory guard can count, whereas mapping the file and registering it
// (cudaHostRegister) would leave the weights in the page cache (4 KiB pages, evictable under
// pressure, re-read from disk in the middle of a decode). Weights are therefore streamed from the
// file into cudaMalloc'd memory through small pinned staging buffers, dropping the page cache
// behind the reader, so the peak stays at one copy of the weights plus 2 x 64 MiB.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "arc/backend.h"
#include "arc/backend_caps.h"
#include "arc/backend_factory.h"
#include "arc/kernels/cuda_ops.h"
#include "arc/step_candidates.h"
#include "runtime/cuda_check.h"

namespace arc {

class CudaBackend final : public Backend,
                          public StepGraphs,
                          public WeightStreamer,
                          public DeviceReport,
                          public NativeStream,
                          public CandidateSelector {
 public:
  // Use make_cuda_backend(); `stream` is owned from here on.
  CudaBackend(int device, const kernels::cuda::DeviceInfo& info, cudaStream_t stream, bool graphs);
  ~CudaBackend() override;

  std::string_view name() const override { return "cuda"; }
  int num_threads() const override { return 1; }

  Result<std::unique_ptr<DeviceBuffer>> alloc(size_t bytes) override;
  Result<const void*> map_weights(std::span<const uint8_t> host) override;
  void upload(void* dst, const void* src, size_t bytes) override;
  void download(void* dst, const void* src, size_t bytes) override;
  Status sync() override;

  void matmul(const kernels::MatmulArgs& a) override;
  void rms_norm(const float* x, const float* w, float* y, int64_t n_rows, int64_t d,
                float eps) override;
  void sum_squares(const float* x, float* ss, int64_t n_rows, int64_t d) override;
  void rms_norm_sumsq(const float* x, const float* w, const float* ss, float* y, int64_t n_rows,
                      int64_t d, int64_t n_total, float eps) override;
  void rope(const kernels::RopeArgs& a) override;
  void add(const float* a, const float* b, float* y, int64_t n) override;
  void add_bias(float* x, const float* bias, int64_t n_rows, int64_t d) override;
  void swiglu(const float* gate, const float* up, float* y, int64_t n) override;
  void add_sigmoid_gated(float* y, const float* s, const float* g, int64_t n_rows,
                         int64_t d) override;
  void get_rows(DType t, const void* table, int64_t n_rows, int64_t d, const int32_t* ids,
                int64_t n_ids, float* out) override;
  void gather(const float* x, const int32_t* rows, int64_t n, int64_t d, float* out) override;
  void kv_store(const kernels::KvStoreArgs& a) override;
  void paged_attention(const kernels::PagedAttentionArgs& a) override;
  void moe_route(const kernels::RouterArgs& a) override;
  void moe_ffn(const kernels::MoeFfnArgs& a) override;
  // Vision encoder ops (cuda_backend_vision.cpp).
  bool has_mla_ops() const override { return true; }
  void mla_kv_store(const kernels::MlaKvStoreArgs& a) override;
  void mla_attention(const kernels::MlaAttentionArgs& a) override;
  bool has_mla_plain() const override { return true; }
  void mla_plain_attention(const kernels::MlaPlainAttentionArgs& a) override;
  // Gated DeltaNet ops (cuda_backend_delta_net.cpp).
  bool has_delta_net_ops() const override { return true; }
  void delta_net_conv(const kernels::DeltaConvArgs& a) override;
  void gated_delta_rule(const kernels::GatedDeltaRuleArgs& a) override;
  void gated_rms_norm(const kernels::GatedRmsNormArgs& a) override;
  void delta_state_copy(const kernels::DeltaStateCopyArgs& a) override;
  void sigmoid_mul(const kernels::SigmoidMulArgs& a) override;
  bool has_vision_ops() const override { return true; }
  void layer_norm(const float* x, const float* w, const float* b, float* y, int64_t n_rows,
                  int64_t d, float eps) override;
  void gelu(const float* x, float* y, int64_t n) override;
  void gelu_erf(const float* x, float* y, int64_t n) override;
  void rope_table(const kernels::RopeTableArgs& a) override;
  void dense_attention(const kernels::DenseAttentionArgs& a) override;

  // StepGraphs.
  bool replay(uint64_t key) override;
  bool begin_capture() override;
  bool end_capture(uint64_t key) override;
  void clear_graphs() override;
  bool graphs_enabled() const override { return graphs_enabled_; }

  // WeightStreamer.
  Result<const void*> stream_file_range(const std::string& path, uint64_t offset, uint64_t size,
                                        const LoadProgressFn& progress) override;
  // cuda_backend_tp.cpp: one rank's shard of a tensor.
  Result<const void*> stream_file_rows(const std::string& path, uint64_t offset, uint64_t n_rows,
                                       uint64_t stride, uint64_t take_offset, uint64_t take_bytes,
                                       const LoadProgressFn& progress) override;

  // NativeStream.
  void* native_stream() const override { return stream_; }
  int native_device() const override { return device_; }

  // DeviceReport.
  std::string device_description() const override;
  Result<double> measure_copy_bandwidth(size_t bytes) override;
  Result<uint64_t> free_memory_bytes() const override;
  bool emulated() const override { return cuda_backend_emulated(); }
  std::vector<DeviceKernelWork> kernel_work() const override;
  void reset_kernel_work() override;

  // CandidateSelector (cuda_backend_sampling.cpp).
  void top_candidates(const kernels::TopCandidatesArgs& a) override;

  // Sizes the scratch for shapes up to `s` now (ops also grow it on demand, outside captures).
  Status reserve_scratch(const kernels::cuda::ScratchShape& s);
  int device() const { return device_; }
  uint64_t graph_launches() const { return graph_launches_; }
  uint64_t graph_captures() const { return graph_captures_; }

 private:
  // Pinned host memory that step uploads are staged in and downloads land in, so copies are truly
  // asynchronous; reset at every sync().
  struct PinnedArena {
    uint8_t* data = nullptr;
    size_t capacity = 0;
    size_t used = 0;
    size_t wanted = 0;  // bytes a step asked for (grows the arena at the next sync)
  };
  struct PendingDownload {
    void* dst;
    size_t offset;  // in download_arena_
    size_t bytes;
  };

  // Common prologue of every op: false when nothing should be enqueued (an earlier failure, no
  // work, or scratch that cannot grow during a capture).
  bool prepare(const kernels::cuda::ScratchShape& need, int64_t work);
  // Records an op the kernels refused (`ok` false) or whose launch failed.
  void finish(const char* op, bool ok, const std::string& detail);
  kernels::cuda::Context ctx() const { return {stream_, scratch_, scratch_size_}; }
  bool grow_scratch(size_t bytes);
  size_t stage(PinnedArena& arena, size_t bytes);  // offset, or SIZE_MAX when full
  void grow_arena(PinnedArena& arena);  // to what the last step wanted; the stream is idle

  int device_;
  kernels::cuda::DeviceInfo info_;
  cudaStream_t stream_;
  cuda_detail::CudaErrors errors_;

  bool stream_ordered_alloc_ = false;  // cudaMallocAsync / cudaFreeAsync available
  void* scratch_ = nullptr;
  size_t scratch_size_ = 0;
  kernels::cuda::ScratchShape shape_;  // largest shapes seen

  PinnedArena upload_arena_, download_arena_;
  std::vector<PendingDownload> downloads_;

  bool graphs_enabled_;
  bool capturing_ = false;
  bool capture_spoiled_ = false;  // an op could not be recorded (scratch had to grow)
  Status before_capture_;
  std::unordered_map<uint64_t, cudaGraphExec_t> graphs_;
  std::vector<cudaGraphExec_t> retired_;  // destroyed at the next sync (may still be running)
  uint64_t graph_launches_ = 0;
  uint64_t graph_captures_ = 0;
  int failed_captures_ = 0;  // in a row, with ops failing while recording

  std::vector<void*> weight_blocks_;  // cudaMalloc'd weights, freed with the backend

  // cuda_backend_tp.cpp: pinned staging buffers and a device slab kept across the many tensors
  // of one shard load (pinning 64 MiB per tensor would cost more than reading it).
  struct ShardStaging;
  struct ShardStagingFree {
    void operator()(ShardStaging* s) const;
  };
  std::unique_ptr<ShardStaging, ShardStagingFree> shard_staging_;
};

// Streams [offset, offset + size) of `path` into `dst` (device memory) on `stream` through two
// pinned staging buffers; drops the page cache of what it read. Synchronous: returns when the
// bytes are on the device.
Status stream_file_to_device(const std::string& path, uint64_t offset, uint64_t size, void* dst,
                             cudaStream_t stream, const LoadProgressFn& progress);

}  // namespace arc
