// The CUDA backend: memory, transfers, sync and the ops (see runtime/cuda_backend.h for the
// memory choices). Every op only enqueues work on the backend's stream; the host waits in sync()
// alone, so a step runs without host synchronisation until its results are downloaded.
#include "runtime/cuda_backend.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "arc/backend_factory.h"
#include "arc/kernels/cuda_errors.h"
#include "arc/log.h"
#if defined(ARC_CUDA_EMULATION)
#include "arc_cuda_emu/emulator.h"
#endif

namespace arc {

namespace kc = kernels::cuda;
using cuda_detail::describe;

namespace {

constexpr size_t kMiB = size_t{1} << 20;
constexpr size_t kFirstArenaBytes = 4 * kMiB;
constexpr size_t kMaxGraphs = 64;  // keys (batch bucket x context bucket); beyond it, start over

class CudaBuffer final : public DeviceBuffer {
 public:
  CudaBuffer(void* p, size_t n, int device) : data_(p), size_(n), device_(device) {}
  ~CudaBuffer() override {
    // cudaFree waits for the device; buffers are freed between steps, never inside one.
    // A failure here has no one to report to; it must not be left for the next op's check.
    const cudaError_t set = cudaSetDevice(device_);
    const cudaError_t freed = cudaFree(data_);
    if (set != cudaSuccess || freed != cudaSuccess) cudaGetLastError();
  }
  void* data() override { return data_; }
  size_t size() const override { return size_; }

 private:
  void* data_;
  size_t size_;
  int device_;
};

kc::ScratchShape merged(const kc::ScratchShape& a, const kc::ScratchShape& b) {
  kc::ScratchShape s;
  s.max_tokens = std::max(a.max_tokens, b.max_tokens);
  s.max_dim = std::max(a.max_dim, b.max_dim);
  s.n_expert = std::max(a.n_expert, b.n_expert);
  s.k = std::max(a.k, b.k);
  s.n_head = std::max(a.n_head, b.n_head);
  s.head_dim = std::max(a.head_dim, b.head_dim);
  s.max_context = std::max(a.max_context, b.max_context);
  s.n_vocab = std::max(a.n_vocab, b.n_vocab);
  return s;
}

std::string gib(size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / (1024.0 * kMiB));
  return buf;
}

}  // namespace

CudaBackend::CudaBackend(int device, const kc::DeviceInfo& info, cudaStream_t stream, bool graphs)
    : device_(device), info_(info), stream_(stream), graphs_enabled_(graphs) {
  int pools = 0;
  cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, device);
  cudaGetLastError();
  stream_ordered_alloc_ = pools != 0;
}

CudaBackend::~CudaBackend() {
  cudaSetDevice(device_);
  cudaStreamSynchronize(stream_);
  for (auto& [key, exec] : graphs_) cudaGraphExecDestroy(exec);
  for (cudaGraphExec_t exec : retired_) cudaGraphExecDestroy(exec);
  if (scratch_ != nullptr && stream_ordered_alloc_) {
    cudaFreeAsync(scratch_, stream_);
    cudaStreamSynchronize(stream_);
  } else if (scratch_ != nullptr) {
    cudaFree(scratch_);
  }
  for (void* p : weight_blocks_) cudaFree(p);
  if (upload_arena_.data != nullptr) cudaFreeHost(upload_arena_.data);
  if (download_arena_.data != nullptr) cudaFreeHost(download_arena_.data);
  cudaStreamDestroy(stream_);
}

// ---------------------------------------------------------------------------------------------
// Memory and transfers

Result<std::unique_ptr<DeviceBuffer>> CudaBackend::alloc(size_t bytes) {
  cudaSetDevice(device_);
  void* p = nullptr;
  const size_t n = std::max<size_t>(bytes, 256);
  if (cudaError_t e = cudaMalloc(&p, n); e != cudaSuccess) {
    cudaGetLastError();  // an allocation failure is not sticky; keep the stream usable
    size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    return resource_exhausted("cannot allocate " + std::to_string(bytes) + " bytes on " +
                              info_.name + " (" + gib(free_b) + " free of " + gib(total_b) +
                              "): " + describe(e));
  }
  // Ordered with the ops on the stream: memory handed out between steps is zero before use.
  if (!ARC_CUDA_CHECK(errors_, cudaMemsetAsync(p, 0, n, stream_))) {
    cudaFree(p);
    return errors_.take();
  }
  return std::unique_ptr<DeviceBuffer>(std::make_unique<CudaBuffer>(p, bytes, device_));
}

Result<const void*> CudaBackend::map_weights(std::span<const uint8_t> host) {
  // Weights from memory (in-memory models, repacked shards): copied through the staging path.
  // Files go through stream_file_range() instead, which also drops the page cache.
  cudaSetDevice(device_);
  void* p = nullptr;
  if (cudaError_t e = cudaMalloc(&p, std::max<size_t>(host.size(), 256)); e != cudaSuccess) {
    cudaGetLastError();
    return resource_exhausted("cannot allocate " + std::to_string(host.size()) +
                              " bytes of weights on " + info_.name + ": " + describe(e));
  }
  weight_blocks_.push_back(p);
  if (!host.empty()) {
    // Pageable source: the runtime stages it, and the copy may return before the DMA is done
    // (cudaMemcpy included, on the legacy stream, which does not order this non-blocking stream):
    // copy on the ops' stream and wait, so no kernel reads the weights before they land.
    if (!ARC_CUDA_CHECK(errors_, cudaMemcpyAsync(p, host.data(), host.size(),
                                                 cudaMemcpyHostToDevice, stream_)) ||
        !ARC_CUDA_CHECK(errors_, cudaStreamSynchronize(stream_))) {
      return errors_.take();
    }
  }
  return static_cast<const void*>(p);
}

Result<const void*> CudaBackend::stream_file_range(const std::string& path, uint64_t offset,
                                                   uint64_t size, const LoadProgressFn& progress) {
  cudaSetDevice(device_);
  void* p = nullptr;
  if (cudaError_t e = cudaMalloc(&p, std::max<uint64_t>(size, 256)); e != cudaSuccess) {
    cudaGetLastError();
    size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    return resource_exhausted("cannot allocate " + gib(size) + " of weights on " + info_.name +
                              " (" + gib(free_b) + " free of " + gib(total_b) +
                              "): " + describe(e));
  }
  weight_blocks_.push_back(p);
  ARC_RETURN_IF_ERROR(stream_file_to_device(path, offset, size, p, stream_, progress));
  return static_cast<const void*>(p);
}

size_t CudaBackend::stage(PinnedArena& arena, size_t bytes) {
  const size_t aligned = (bytes + 255) / 256 * 256;
  arena.wanted += aligned;
  if (capturing_ || arena.used + aligned > arena.capacity) return SIZE_MAX;
  const size_t off = arena.used;
  arena.used += aligned;
  return off;
}

void CudaBackend::grow_arena(PinnedArena& arena) {
  const size_t want = std::max(kFirstArenaBytes, arena.wanted);
  arena.used = 0;
  arena.wanted = 0;
  if (want <= arena.capacity) return;
  const size_t cap = std::max(want + want / 4, 2 * arena.capacity);
  if (arena.data != nullptr) cudaFreeHost(arena.data);  // idle: the stream was synchronised
  arena.data = nullptr;
  arena.capacity = 0;
  void* p = nullptr;
  if (cudaError_t e = cudaMallocHost(&p, cap); e != cudaSuccess) {
    cudaGetLastError();
    // Not fatal: transfers fall back to pageable copies.
    logger("cuda")->warn("cannot pin {} bytes of staging memory: {}", cap, describe(e));
    return;
  }
  arena.data = static_cast<uint8_t*>(p);
  arena.capacity = cap;
}

void CudaBackend::upload(void* dst, const void* src, size_t bytes) {
  if (bytes == 0 || errors_.failed()) return;
  cudaSetDevice(device_);
  if (capturing_) {
    // A recorded copy would read the staging memory of this step at every replay.
    capture_spoiled_ = true;
    return;
  }
  const size_t off = stage(upload_arena_, bytes);
  if (off == SIZE_MAX) {
    // Arena full (it grows at the next sync): pageable copy, which the runtime may stage
    // synchronously.
    ARC_CUDA_CHECK(errors_, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_));
    return;
  }
  std::memcpy(upload_arena_.data + off, src, bytes);
  ARC_CUDA_CHECK(errors_, cudaMemcpyAsync(dst, upload_arena_.data + off, bytes,
                                          cudaMemcpyHostToDevice, stream_));
}

void CudaBackend::download(void* dst, const void* src, size_t bytes) {
  if (bytes == 0 || errors_.failed()) return;
  cudaSetDevice(device_);
  if (capturing_) {
    capture_spoiled_ = true;
    return;
  }
  const size_t off = stage(download_arena_, bytes);
  if (off == SIZE_MAX) {
    ARC_CUDA_CHECK(errors_, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream_));
    return;
  }
  // Lands in pinned memory asynchronously; sync() copies it to `dst`.
  if (ARC_CUDA_CHECK(errors_, cudaMemcpyAsync(download_arena_.data + off, src, bytes,
                                              cudaMemcpyDeviceToHost, stream_))) {
    downloads_.push_back({dst, off, bytes});
  }
}

Status CudaBackend::sync() {
  cudaSetDevice(device_);
  if (capturing_) {
    errors_.fail("sync() called while a graph is being recorded");
    cudaGraph_t g = nullptr;
    cudaStreamEndCapture(stream_, &g);
    if (g != nullptr) cudaGraphDestroy(g);
    capturing_ = false;
  }
  ARC_CUDA_CHECK(errors_, cudaStreamSynchronize(stream_));
  // A kernel fault shows up at the synchronisation; name the last launches' error too.
  ARC_CUDA_CHECK(errors_, cudaGetLastError());
  if (!errors_.failed()) {
    for (const PendingDownload& d : downloads_) {
      std::memcpy(d.dst, download_arena_.data + d.offset, d.bytes);
    }
  }
  downloads_.clear();
  for (cudaGraphExec_t exec : retired_) cudaGraphExecDestroy(exec);
  retired_.clear();
  grow_arena(upload_arena_);
  grow_arena(download_arena_);
  return errors_.take();
}

// ---------------------------------------------------------------------------------------------
// Scratch and the op prologue/epilogue

bool CudaBackend::grow_scratch(size_t bytes) {
  const size_t n = (bytes + kMiB - 1) / kMiB * kMiB;
  clear_graphs();  // recorded graphs point at the old block
  void* p = nullptr;
  if (stream_ordered_alloc_) {
    // Stream-ordered: the old block is freed after the ops already enqueued that use it, and no
    // host synchronisation happens.
    if (scratch_ != nullptr) ARC_CUDA_CHECK(errors_, cudaFreeAsync(scratch_, stream_));
    scratch_ = nullptr;
    scratch_size_ = 0;
    if (!ARC_CUDA_CHECK(errors_, cudaMallocAsync(&p, n, stream_))) return false;
  } else {
    // No memory pools on this device: wait for the ops using the old block (scratch grows only
    // in the first steps after a load).
    ARC_CUDA_CHECK(errors_, cudaStreamSynchronize(stream_));
    if (scratch_ != nullptr) cudaFree(scratch_);
    scratch_ = nullptr;
    scratch_size_ = 0;
    if (!ARC_CUDA_CHECK(errors_, cudaMalloc(&p, n))) return false;
  }
  scratch_ = p;
  scratch_size_ = n;
  return true;
}

Status CudaBackend::reserve_scratch(const kc::ScratchShape& s) {
  cudaSetDevice(device_);
  const kc::ScratchShape m = merged(shape_, s);
  const size_t need = kc::scratch_bytes(m);
  if (need > scratch_size_ && !grow_scratch(need)) return errors_.take();
  shape_ = m;
  return ok_status();
}

bool CudaBackend::prepare(const kc::ScratchShape& need, int64_t work) {
  if (work <= 0 || errors_.failed()) return false;
  if (!capturing_) cudaSetDevice(device_);  // a capture began on this device already
  const kc::ScratchShape m = merged(shape_, need);
  const size_t bytes = kc::scratch_bytes(m);
  if (bytes > scratch_size_) {
    if (capturing_) {  // a recorded allocation would be graph-owned: run this step eagerly
      capture_spoiled_ = true;
      return false;
    }
    if (!grow_scratch(bytes)) return false;
  }
  shape_ = m;
  return true;
}

void CudaBackend::finish(const char* op, bool ok, const std::string& detail) {
  if (!ok) {
    // A launcher returns false for arguments it does not support, or when a runtime call it
    // makes failed (then it says which, for this thread).
    std::string why = kc::last_error();
    kc::clear_last_error();
    errors_.fail(why.empty() ? std::string(op) + ": the CUDA kernels do not support " + detail
                             : std::string(op) + " (" + detail + "): " + why);
    return;
  }
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) {
    errors_.fail("launching " + std::string(op) + " (" + detail + ") failed: " + describe(e));
  }
}

// ---------------------------------------------------------------------------------------------
// Ops

void CudaBackend::matmul(const kernels::MatmulArgs& a) {
  kc::ScratchShape s;
  s.max_tokens = a.n_tokens;
  s.max_dim = std::max(a.n_in, a.n_out);
  if (!prepare(s, a.n_out * a.n_tokens)) return;
  finish("matmul", kc::matmul(ctx(), a),
         std::string(dtype_name(a.w_type)) + " weights [" + std::to_string(a.n_out) + ", " +
             std::to_string(a.n_in) + "] x " + std::to_string(a.n_tokens) + " tokens");
}

void CudaBackend::rms_norm(const float* x, const float* w, float* y, int64_t n_rows, int64_t d,
                           float eps) {
  kc::ScratchShape s;
  s.max_dim = d;
  if (!prepare(s, n_rows * d)) return;
  finish("rms_norm", kc::rms_norm(ctx(), x, w, y, n_rows, d, eps),
         std::to_string(n_rows) + " rows of " + std::to_string(d));
}

void CudaBackend::sum_squares(const float* x, float* ss, int64_t n_rows, int64_t d) {
  kc::ScratchShape s;
  s.max_dim = d;
  if (!prepare(s, n_rows * d)) return;
  finish("sum_squares", kc::sum_squares(ctx(), x, ss, n_rows, d),
         std::to_string(n_rows) + " rows of " + std::to_string(d));
}

void CudaBackend::rms_norm_sumsq(const float* x, const float* w, const float* ss, float* y,
                                 int64_t n_rows, int64_t d, int64_t n_total, float eps) {
  kc::ScratchShape s;
  s.max_dim = d;
  if (!prepare(s, n_rows * d)) return;
  finish(
      "rms_norm_sumsq", kc::rms_norm_sumsq(ctx(), x, w, ss, y, n_rows, d, n_total, eps),
      std::to_string(n_rows) + " rows of " + std::to_string(d) + " of " + std::to_string(n_total));
}

void CudaBackend::rope(const kernels::RopeArgs& a) {
  kc::ScratchShape s;
  s.max_tokens = a.n_tokens;
  s.head_dim = a.head_dim;
  if (!prepare(s, a.n_tokens * a.n_heads)) return;
  finish("rope", kc::rope(ctx(), a),
         "head_dim " + std::to_string(a.head_dim) + ", rot_dim " + std::to_string(a.rot_dim));
}

void CudaBackend::add(const float* a, const float* b, float* y, int64_t n) {
  if (!prepare({}, n)) return;
  finish("add", kc::add(ctx(), a, b, y, n), std::to_string(n) + " values");
}

void CudaBackend::add_bias(float* x, const float* bias, int64_t n_rows, int64_t d) {
  if (!prepare({}, n_rows * d)) return;
  finish("add_bias", kc::add_bias(ctx(), x, bias, n_rows, d),
         std::to_string(n_rows) + " rows of " + std::to_string(d));
}

void CudaBackend::swiglu(const float* gate, const float* up, float* y, int64_t n) {
  if (!prepare({}, n)) return;
  finish("swiglu", kc::swiglu(ctx(), gate, up, y, n), std::to_string(n) + " values");
}

void CudaBackend::add_sigmoid_gated(float* y, const float* s, const float* g, int64_t n_rows,
                                    int64_t d) {
  if (!prepare({}, n_rows * d)) return;
  finish("add_sigmoid_gated", kc::add_sigmoid_gated(ctx(), y, s, g, n_rows, d),
         std::to_string(n_rows) + " rows of " + std::to_string(d));
}

void CudaBackend::get_rows(DType t, const void* table, int64_t n_rows, int64_t d,
                           const int32_t* ids, int64_t n_ids, float* out) {
  kc::ScratchShape s;
  s.max_tokens = n_ids;
  s.max_dim = d;
  if (!prepare(s, n_ids * d)) return;
  finish("get_rows", kc::get_rows(ctx(), t, table, n_rows, d, ids, n_ids, out),
         std::string(dtype_name(t)) + " table [" + std::to_string(n_rows) + ", " +
             std::to_string(d) + "]");
}

void CudaBackend::gather(const float* x, const int32_t* rows, int64_t n, int64_t d, float* out) {
  kc::ScratchShape s;
  s.max_tokens = n;
  s.max_dim = d;
  if (!prepare(s, n * d)) return;
  finish("gather", kc::gather(ctx(), x, rows, n, d, out),
         std::to_string(n) + " rows of " + std::to_string(d));
}

void CudaBackend::kv_store(const kernels::KvStoreArgs& a) {
  kc::ScratchShape s;
  s.max_tokens = a.n_tokens;
  s.head_dim = a.head_dim;
  if (!prepare(s, a.n_tokens * a.n_kv_head)) return;
  kernels::KvStoreArgs rows = a;  // the layout the CUDA kernels read (backend.h)
  rows.layout = kernels::KvLayout::kTokenRows;
  finish("kv_store", kc::kv_store(ctx(), rows),
         std::string(dtype_name(a.kv_type)) + " cache, head_dim " + std::to_string(a.head_dim));
}

void CudaBackend::paged_attention(const kernels::PagedAttentionArgs& a) {
  kc::ScratchShape s;
  s.max_tokens = a.n_tokens;
  s.n_head = a.n_head;
  s.head_dim = a.head_dim;
  s.max_context = a.max_blocks_per_seq * a.block_size;
  if (!prepare(s, a.n_tokens * a.n_head)) return;
  kernels::PagedAttentionArgs rows = a;
  rows.layout = kernels::KvLayout::kTokenRows;
  finish("paged_attention", kc::paged_attention(ctx(), rows),
         std::string(dtype_name(a.kv_type)) + " cache, head_dim " + std::to_string(a.head_dim) +
             ", " + std::to_string(a.n_head) + "/" + std::to_string(a.n_kv_head) +
             " heads, block_size " + std::to_string(a.block_size));
}

void CudaBackend::moe_route(const kernels::RouterArgs& a) {
  kc::ScratchShape s;
  s.max_tokens = a.n_tokens;
  s.n_expert = a.n_expert;
  s.k = a.k;
  if (!prepare(s, a.n_tokens)) return;
  finish("moe_route", kc::moe_route(ctx(), a),
         std::to_string(a.n_expert) + " experts, top " + std::to_string(a.k));
}

void CudaBackend::moe_ffn(const kernels::MoeFfnArgs& a) {
  kc::ScratchShape s;
  s.max_tokens = a.n_tokens;
  s.max_dim = std::max(a.n_embd, a.n_ff);
  s.n_expert = a.n_expert;
  s.k = a.k;
  if (!prepare(s, a.n_tokens)) return;
  finish("moe_ffn", kc::moe_ffn(ctx(), a),
         std::string(dtype_name(a.gate_type)) + "/" + std::string(dtype_name(a.up_type)) + "/" +
             std::string(dtype_name(a.down_type)) + " experts [" + std::to_string(a.n_expert) +
             " x " + std::to_string(a.n_ff) + ", " + std::to_string(a.n_embd) + "]");
}

// ---------------------------------------------------------------------------------------------
// CUDA graphs

bool CudaBackend::replay(uint64_t key) {
  if (!graphs_enabled_ || capturing_ || errors_.failed()) return false;
  auto it = graphs_.find(key);
  if (it == graphs_.end()) return false;
  cudaSetDevice(device_);
  if (ARC_CUDA_CHECK(errors_, cudaGraphLaunch(it->second, stream_))) ++graph_launches_;
  return true;  // a failed launch is reported by sync(); nothing to redo eagerly
}

bool CudaBackend::begin_capture() {
  if (!graphs_enabled_ || capturing_ || errors_.failed()) return false;
  cudaSetDevice(device_);
  before_capture_ = errors_.peek();
  capture_spoiled_ = false;
  // Thread-local mode: other threads (a loader, the HTTP server) may use CUDA meanwhile.
  if (cudaError_t e = cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal);
      e != cudaSuccess) {
    cudaGetLastError();
    graphs_enabled_ = false;
    logger("cuda")->warn("CUDA graphs disabled: cudaStreamBeginCapture failed: {}", describe(e));
    return false;
  }
  capturing_ = true;
  return true;
}

bool CudaBackend::end_capture(uint64_t key) {
  if (!capturing_) return false;
  cudaSetDevice(device_);
  capturing_ = false;
  cudaGraph_t graph = nullptr;
  const cudaError_t e = cudaStreamEndCapture(stream_, &graph);
  const bool ops_failed = errors_.failed() && before_capture_.ok();
  const bool refused = e != cudaSuccess || graph == nullptr;
  if (refused || capture_spoiled_ || ops_failed) {
    if (graph != nullptr) cudaGraphDestroy(graph);
    cudaGetLastError();  // an invalidated capture leaves an error behind
    const std::string why = e != cudaSuccess ? describe(e) : errors_.peek().message();
    // Whatever failed while recording happens again when the caller enqueues eagerly, and is
    // reported then. A capture the driver refused, or ops that fail only while recording (they
    // ran eagerly before), turn graphs off for good; a spoiled one (scratch had to grow) does not.
    errors_.restore(before_capture_);
    if (refused || (ops_failed && ++failed_captures_ >= 3)) {
      graphs_enabled_ = false;
      logger("cuda")->warn("CUDA graphs disabled: the step could not be captured: {}", why);
    }
    return false;
  }
  failed_captures_ = 0;
  cudaGraphExec_t exec = nullptr;
  const cudaError_t ie = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  if (ie != cudaSuccess) {
    cudaGetLastError();
    graphs_enabled_ = false;
    logger("cuda")->warn("CUDA graphs disabled: cudaGraphInstantiate failed: {}", describe(ie));
    return false;
  }
  if (graphs_.size() >= kMaxGraphs) clear_graphs();
  graphs_[key] = exec;
  ++graph_captures_;
  if (ARC_CUDA_CHECK(errors_, cudaGraphLaunch(exec, stream_))) ++graph_launches_;
  return true;
}

void CudaBackend::clear_graphs() {
  for (auto& [key, exec] : graphs_) retired_.push_back(exec);
  graphs_.clear();
}

// ---------------------------------------------------------------------------------------------
// Device report

std::string CudaBackend::device_description() const {
  return std::string(info_.name) + " (sm_" + std::to_string(info_.sm_major) +
         std::to_string(info_.sm_minor) + ", " + gib(info_.total_bytes) +
         (info_.integrated ? " unified" : "") + ", device " + std::to_string(device_) + ")";
}

Result<uint64_t> CudaBackend::free_memory_bytes() const {
  cudaSetDevice(device_);
  size_t free_b = 0, total_b = 0;
  if (cudaError_t e = cudaMemGetInfo(&free_b, &total_b); e != cudaSuccess) {
    cudaGetLastError();
    return unavailable("cannot read the free memory of " + std::string(info_.name) + ": " +
                       describe(e));
  }
  return static_cast<uint64_t>(free_b);
}

Result<double> CudaBackend::measure_copy_bandwidth(size_t bytes) {
  cudaSetDevice(device_);
  ARC_RETURN_IF_ERROR(sync());
  bytes = std::max<size_t>(bytes, kMiB);
  ARC_ASSIGN_OR_RETURN(auto a, alloc(bytes));
  ARC_ASSIGN_OR_RETURN(auto b, alloc(bytes));
  cudaEvent_t t0 = nullptr, t1 = nullptr;
  ARC_CUDA_CHECK(errors_, cudaEventCreate(&t0));
  ARC_CUDA_CHECK(errors_, cudaEventCreate(&t1));
  const int reps = 10;
  // One warm-up copy, then `reps` timed ones.
  ARC_CUDA_CHECK(errors_,
                 cudaMemcpyAsync(b->data(), a->data(), bytes, cudaMemcpyDeviceToDevice, stream_));
  ARC_CUDA_CHECK(errors_, cudaEventRecord(t0, stream_));
  for (int i = 0; i < reps; ++i) {
    void* dst = (i % 2) ? a->data() : b->data();
    void* src = (i % 2) ? b->data() : a->data();
    ARC_CUDA_CHECK(errors_, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_));
  }
  ARC_CUDA_CHECK(errors_, cudaEventRecord(t1, stream_));
  ARC_CUDA_CHECK(errors_, cudaEventSynchronize(t1));
  float ms = 0;
  ARC_CUDA_CHECK(errors_, cudaEventElapsedTime(&ms, t0, t1));
  if (t0 != nullptr) cudaEventDestroy(t0);
  if (t1 != nullptr) cudaEventDestroy(t1);
  ARC_RETURN_IF_ERROR(sync());
  if (ms <= 0) return internal_error("the device copy benchmark measured no time");
  // Each copy reads and writes `bytes`.
  return 2.0 * static_cast<double>(bytes) * reps / (static_cast<double>(ms) * 1e-3);
}

// ---------------------------------------------------------------------------------------------
// Factory

bool cuda_backend_built() {
  return true;
}

Result<uint64_t> cuda_free_memory_bytes(int device) {
  if (device < 0 || device >= kc::device_count()) {
    return unavailable("CUDA device " + std::to_string(device) + " does not exist");
  }
  int before = 0;
  cudaGetDevice(&before);
  size_t free_b = 0, total_b = 0;
  cudaError_t e = cudaSetDevice(device);
  if (e == cudaSuccess) e = cudaMemGetInfo(&free_b, &total_b);
  cudaSetDevice(before);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return unavailable("cannot read the free memory of CUDA device " + std::to_string(device) +
                       ": " + describe(e));
  }
  return static_cast<uint64_t>(free_b);
}

std::vector<DeviceKernelWork> CudaBackend::kernel_work() const {
  std::vector<DeviceKernelWork> out;
#if defined(ARC_CUDA_EMULATION)
  if (!cuda_emu::counts_operations()) return out;
  for (const cuda_emu::KernelWork& w : cuda_emu::kernel_work())
    out.push_back({w.name, w.launches, w.threads, w.ops});
#endif
  return out;
}

void CudaBackend::reset_kernel_work() {
#if defined(ARC_CUDA_EMULATION)
  cuda_emu::reset_kernel_work();
#endif
}

bool cuda_backend_emulated() {
#if defined(ARC_CUDA_EMULATION)
  return true;
#else
  return false;
#endif
}

Result<std::unique_ptr<Backend>> make_cuda_backend(int device, bool graphs) {
  const int n = kc::device_count();
  if (n <= 0) {
    int version = 0;
    const cudaError_t e = cudaDriverGetVersion(&version);
    cudaGetLastError();
    if (e != cudaSuccess || version == 0) {
      return unavailable(
          "no CUDA driver is installed or loaded (install the NVIDIA driver, or use "
          "--backend cpu)");
    }
    return unavailable(
        "the CUDA driver finds no usable GPU (check nvidia-smi, "
        "CUDA_VISIBLE_DEVICES, or use --backend cpu)");
  }
  if (device < 0 || device >= n) {
    return invalid_argument("CUDA device " + std::to_string(device) + " does not exist; this " +
                            "machine has " + std::to_string(n) + " (0.." + std::to_string(n - 1) +
                            ")");
  }
  kc::DeviceInfo info;
  if (!kc::device_info(device, &info)) {
    return unavailable("cannot read the properties of CUDA device " + std::to_string(device));
  }
  if (cudaError_t e = cudaSetDevice(device); e != cudaSuccess) {
    cudaGetLastError();
    return unavailable("cannot use CUDA device " + std::to_string(device) + ": " + describe(e));
  }
  cudaStream_t stream = nullptr;
  if (cudaError_t e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking); e != cudaSuccess) {
    cudaGetLastError();
    return unavailable("cannot create a CUDA stream on device " + std::to_string(device) + ": " +
                       describe(e));
  }
  auto be = std::make_unique<CudaBackend>(device, info, stream, graphs);
  logger("cuda")->info("CUDA backend on {}{}", be->device_description(),
                       graphs ? ", decode steps as CUDA graphs" : "");
  return std::unique_ptr<Backend>(std::move(be));
}

}  // namespace arc
