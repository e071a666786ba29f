// The emulated CUDA runtime: the device and its settings, error state, memory calls, copies and
// kernel launches (streams, events and graphs are in streams.cpp).
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cuda_emu/emu_internal.h"

namespace arc::cuda_emu {
namespace {

constexpr size_t kDefaultShared = size_t{48} << 10;

const DeviceSpec kGB10{DeviceKind::kGB10,
                       "NVIDIA GB10 (CUDA emulator)",
                       12,
                       1,
                       48,
                       kDefaultShared,
                       101376,  // 99 KB per block with opt-in
                       102400,
                       0,  // unified: the host's memory
                       true,
                       256,
                       4266000};  // LPDDR5x-8533 on 256 bits: 273 GB/s
const DeviceSpec kH200{DeviceKind::kH200,
                       "NVIDIA H200 (CUDA emulator)",
                       9,
                       0,
                       132,
                       kDefaultShared,
                       232448,  // 227 KB per block with opt-in
                       233472,
                       size_t{141} * 1000 * 1000 * 1000,
                       false,
                       6144,
                       3125000};  // HBM3e: 4.8 TB/s

// Read once, when the emulated driver starts (emulator.h): the one place the emulator looks at
// the environment, as the real driver reads CUDA_VISIBLE_DEVICES.
Settings read_settings() {
  Settings s;
  if (const char* d = std::getenv("ARC_CUDA_EMU_DEVICE")) {
    const std::string v(d);
    if (v == "h200" || v == "H200" || v == "sm_90") s.kind = DeviceKind::kH200;
  }
  if (const char* seed = std::getenv("ARC_CUDA_EMU_SEED")) s.seed = std::strtoull(seed, nullptr, 0);
  const unsigned hw = std::thread::hardware_concurrency();
  s.threads = hw == 0 ? 2 : static_cast<int>(hw);
  if (const char* t = std::getenv("ARC_CUDA_EMU_THREADS")) {
    const int n = std::atoi(t);
    if (n > 0 && n <= 256) s.threads = n;
  }
  return s;
}

// The emulated context's error state and counters (one device per process, like the driver's).
struct State {
  std::mutex mu;
  cudaError_t sticky = cudaSuccess;
  std::string fault;
  std::map<const void*, size_t> dynamic_shared;  // cudaFuncSetAttribute
  std::atomic<uint64_t> launches{0};
};
State& state() {
  static State* s = new State;
  return *s;
}

thread_local cudaError_t t_last_error = cudaSuccess;
thread_local int t_device = 0;

cudaError_t check_device(int device) {
  return device == 0 ? cudaSuccess : cudaErrorInvalidDevice;
}

}  // namespace

const Settings& settings() {
  static const Settings s = read_settings();
  return s;
}

const DeviceSpec& device_spec() {
  return settings().kind == DeviceKind::kH200 ? kH200 : kGB10;
}

const char* device_kind_name(DeviceKind k) {
  return k == DeviceKind::kH200 ? "H200 (sm_90)" : "GB10 (sm_121a)";
}

DeviceKind device_kind() {
  return settings().kind;
}

void set_sticky(cudaError_t err, const std::string& message) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.sticky != cudaSuccess) return;
  s.sticky = err;
  s.fault = message;
  std::fprintf(stderr, "arclight CUDA emulator: %s\n", message.c_str());
}

cudaError_t sticky_error() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.sticky;
}

std::string last_fault() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.fault;
}

void reset_device() {
  device_wait_idle();
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.sticky = cudaSuccess;
  s.fault.clear();
  t_last_error = cudaSuccess;
}

uint64_t kernels_launched() {
  return state().launches.load();
}

uint64_t next_launch_id() {
  return state().launches.fetch_add(1) + 1;
}

void set_last_error(cudaError_t err) {
  if (err != cudaSuccess) t_last_error = err;
}
cudaError_t take_last_error() {
  const cudaError_t s = sticky_error();
  if (s != cudaSuccess) return s;
  const cudaError_t e = t_last_error;
  t_last_error = cudaSuccess;
  return e;
}
cudaError_t peek_last_error() {
  const cudaError_t s = sticky_error();
  return s != cudaSuccess ? s : t_last_error;
}

cudaError_t api_result(cudaError_t err) {
  const cudaError_t s = sticky_error();
  if (s != cudaSuccess) return s;
  set_last_error(err);
  return err;
}

size_t max_dynamic_shared(const void* func) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.dynamic_shared.find(func);
  return it == s.dynamic_shared.end() ? 0 : it->second;
}

void launch_kernel(const LaunchSpec& spec, std::function<void()> body) {
  const DeviceSpec& d = device_spec();
  const dim3 b = spec.block, g = spec.grid;
  const uint64_t threads = static_cast<uint64_t>(b.x) * b.y * b.z;
  if (b.x == 0 || b.y == 0 || b.z == 0 || b.x > 1024 || b.y > 1024 || b.z > 64 || threads > 1024 ||
      g.x == 0 || g.y == 0 || g.z == 0 || g.x > 0x7FFFFFFFu || g.y > 65535 || g.z > 65535) {
    set_last_error(cudaErrorInvalidConfiguration);
    return;
  }
  if (spec.shared_bytes > d.shared_per_block_optin ||
      (spec.shared_bytes > d.shared_per_block &&
       spec.shared_bytes > max_dynamic_shared(spec.func))) {
    set_last_error(cudaErrorInvalidValue);
    return;
  }
  if (sticky_error() != cudaSuccess) return;
  install_fault_handler();
  KernelJob job{spec, std::move(body), 0};
  const cudaError_t err = enqueue(static_cast<cudaStream_t>(spec.stream), [job]() mutable {
    if (sticky_error() != cudaSuccess) return;
    job.launch_id = next_launch_id();  // a graph replay gets a new lane order each time
    run_kernel(job);
  });
  if (err != cudaSuccess) set_last_error(err);
}

}  // namespace arc::cuda_emu

using namespace arc::cuda_emu;

const char* cudaGetErrorName(cudaError_t e) {
  switch (e) {
#define ARC_EMU_NAME(x) \
  case x:               \
    return #x;
    ARC_EMU_NAME(cudaSuccess)
    ARC_EMU_NAME(cudaErrorInvalidValue)
    ARC_EMU_NAME(cudaErrorMemoryAllocation)
    ARC_EMU_NAME(cudaErrorInitializationError)
    ARC_EMU_NAME(cudaErrorInvalidConfiguration)
    ARC_EMU_NAME(cudaErrorInvalidDevicePointer)
    ARC_EMU_NAME(cudaErrorInvalidMemcpyDirection)
    ARC_EMU_NAME(cudaErrorNoDevice)
    ARC_EMU_NAME(cudaErrorInvalidDevice)
    ARC_EMU_NAME(cudaErrorInvalidResourceHandle)
    ARC_EMU_NAME(cudaErrorNotReady)
    ARC_EMU_NAME(cudaErrorIllegalAddress)
    ARC_EMU_NAME(cudaErrorLaunchOutOfResources)
    ARC_EMU_NAME(cudaErrorLaunchFailure)
    ARC_EMU_NAME(cudaErrorStreamCaptureUnsupported)
    ARC_EMU_NAME(cudaErrorStreamCaptureInvalidated)
    ARC_EMU_NAME(cudaErrorStreamCaptureWrongThread)
    ARC_EMU_NAME(cudaErrorUnknown)
#undef ARC_EMU_NAME
  }
  return "cudaErrorUnknown";
}

const char* cudaGetErrorString(cudaError_t e) {
  switch (e) {
    case cudaSuccess:
      return "no error";
    case cudaErrorInvalidValue:
      return "invalid argument";
    case cudaErrorMemoryAllocation:
      return "out of memory";
    case cudaErrorInvalidConfiguration:
      return "invalid configuration argument";
    case cudaErrorInvalidDevice:
      return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle:
      return "invalid resource handle";
    case cudaErrorNotReady:
      return "device not ready";
    case cudaErrorIllegalAddress:
      return "an illegal memory access was encountered";
    case cudaErrorLaunchFailure:
      return "unspecified launch failure";
    case cudaErrorStreamCaptureUnsupported:
      return "operation not permitted when stream is capturing";
    case cudaErrorStreamCaptureInvalidated:
      return "operation failed due to a previous error during capture";
    case cudaErrorStreamCaptureWrongThread:
      return "attempt to terminate a thread-local capture sequence from another thread";
    default:
      return cudaGetErrorName(e);
  }
}

cudaError_t cudaGetLastError() {
  return take_last_error();
}
cudaError_t cudaPeekAtLastError() {
  return peek_last_error();
}

cudaError_t cudaGetDeviceCount(int* count) {
  if (count == nullptr) return api_result(cudaErrorInvalidValue);
  *count = 1;
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
  if (cudaError_t e = check_device(device); e != cudaSuccess) return api_result(e);
  t_device = device;
  return api_result(cudaSuccess);
}

cudaError_t cudaGetDevice(int* device) {
  if (device == nullptr) return api_result(cudaErrorInvalidValue);
  *device = t_device;
  return api_result(cudaSuccess);
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int device) {
  if (p == nullptr) return api_result(cudaErrorInvalidValue);
  if (cudaError_t e = check_device(device); e != cudaSuccess) return api_result(e);
  const DeviceSpec& d = device_spec();
  std::memset(p, 0, sizeof *p);
  std::snprintf(p->name, sizeof p->name, "%s", d.name);
  size_t free_b = 0, total_b = 0;
  mem_info(&free_b, &total_b);
  p->totalGlobalMem = total_b;
  p->sharedMemPerBlock = d.shared_per_block;
  p->sharedMemPerBlockOptin = d.shared_per_block_optin;
  p->sharedMemPerMultiprocessor = d.shared_per_sm;
  p->regsPerBlock = 65536;
  p->warpSize = 32;
  p->maxThreadsPerBlock = 1024;
  p->maxThreadsDim[0] = 1024;
  p->maxThreadsDim[1] = 1024;
  p->maxThreadsDim[2] = 64;
  p->maxGridSize[0] = 0x7FFFFFFF;
  p->maxGridSize[1] = 65535;
  p->maxGridSize[2] = 65535;
  p->major = d.major;
  p->minor = d.minor;
  p->multiProcessorCount = d.multiprocessors;
  p->integrated = d.integrated ? 1 : 0;
  p->canMapHostMemory = 1;
  p->concurrentManagedAccess = 1;
  p->pageableMemoryAccess = d.integrated ? 1 : 0;
  p->memoryBusWidth = d.bus_width_bits;
  p->memoryClockRate = d.memory_clock_khz;
  p->l2CacheSize = d.integrated ? 24 << 20 : 50 << 20;
  return api_result(cudaSuccess);
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  if (value == nullptr) return api_result(cudaErrorInvalidValue);
  if (cudaError_t e = check_device(device); e != cudaSuccess) return api_result(e);
  const DeviceSpec& d = device_spec();
  switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock:
      *value = 1024;
      break;
    case cudaDevAttrMaxSharedMemoryPerBlock:
      *value = static_cast<int>(d.shared_per_block);
      break;
    case cudaDevAttrMemoryClockRate:
      *value = d.memory_clock_khz;
      break;
    case cudaDevAttrGlobalMemoryBusWidth:
      *value = d.bus_width_bits;
      break;
    case cudaDevAttrMultiProcessorCount:
      *value = d.multiprocessors;
      break;
    case cudaDevAttrComputeCapabilityMajor:
      *value = d.major;
      break;
    case cudaDevAttrComputeCapabilityMinor:
      *value = d.minor;
      break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin:
      *value = static_cast<int>(d.shared_per_block_optin);
      break;
    case cudaDevAttrMemoryPoolsSupported:
      *value = 1;
      break;
    default:
      return api_result(cudaErrorInvalidValue);
  }
  return api_result(cudaSuccess);
}

cudaError_t cudaDriverGetVersion(int* version) {
  if (version == nullptr) return api_result(cudaErrorInvalidValue);
  *version = 13000;
  return cudaSuccess;
}
cudaError_t cudaRuntimeGetVersion(int* version) {
  return cudaDriverGetVersion(version);
}

cudaError_t cudaMemGetInfo(size_t* free_b, size_t* total_b) {
  if (free_b == nullptr || total_b == nullptr) return api_result(cudaErrorInvalidValue);
  mem_info(free_b, total_b);
  return api_result(cudaSuccess);
}

cudaError_t cudaEmuFuncSetAttribute(const void* func, cudaFuncAttribute attr, int value) {
  if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize || value < 0 ||
      static_cast<size_t>(value) > device_spec().shared_per_block_optin) {
    return api_result(cudaErrorInvalidValue);
  }
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.dynamic_shared[func] = static_cast<size_t>(value);
  return cudaSuccess;
}

// ---- memory ----
cudaError_t cudaMalloc(void** ptr, size_t size) {
  if (ptr == nullptr) return api_result(cudaErrorInvalidValue);
  if (forbidden_during_capture()) return api_result(cudaErrorStreamCaptureUnsupported);
  if (cudaError_t e = api_result(cudaSuccess); e != cudaSuccess) return e;
  cudaError_t err;
  *ptr = device_alloc(size, &err);
  return api_result(err);
}

cudaError_t cudaFree(void* ptr) {
  if (ptr == nullptr) return api_result(cudaSuccess);
  if (forbidden_during_capture()) return api_result(cudaErrorStreamCaptureUnsupported);
  device_wait_idle();  // cudaFree synchronises the device
  return api_result(device_free(ptr));
}

cudaError_t cudaMallocAsync(void** ptr, size_t size, cudaStream_t stream) {
  if (ptr == nullptr) return api_result(cudaErrorInvalidValue);
  if (capturing(stream)) return api_result(cudaErrorStreamCaptureUnsupported);
  if (cudaError_t e = api_result(cudaSuccess); e != cudaSuccess) return e;
  cudaError_t err;
  *ptr = device_alloc(size, &err);
  return api_result(err);
}

cudaError_t cudaFreeAsync(void* ptr, cudaStream_t stream) {
  if (ptr == nullptr) return api_result(cudaSuccess);
  if (classify(ptr, 1) != MemKind::kDevice) return api_result(cudaErrorInvalidValue);
  return api_result(enqueue(
      stream, [ptr] { device_free(ptr); }, false));
}

cudaError_t cudaMallocHost(void** ptr, size_t size) {
  if (ptr == nullptr) return api_result(cudaErrorInvalidValue);
  *ptr = pinned_alloc(size);
  return api_result(*ptr != nullptr ? cudaSuccess : cudaErrorMemoryAllocation);
}
cudaError_t cudaHostAlloc(void** ptr, size_t size, unsigned) {
  return cudaMallocHost(ptr, size);
}
cudaError_t cudaFreeHost(void* ptr) {
  if (ptr == nullptr) return cudaSuccess;
  device_wait_idle();
  return api_result(pinned_free(ptr) ? cudaSuccess : cudaErrorInvalidValue);
}
cudaError_t cudaHostRegister(void* ptr, size_t size, unsigned) {
  if (ptr == nullptr || size == 0) return api_result(cudaErrorInvalidValue);
  return api_result(pinned_register(ptr, size) ? cudaSuccess : cudaErrorInvalidValue);
}
cudaError_t cudaHostUnregister(void* ptr) {
  return api_result(pinned_unregister(ptr) ? cudaSuccess : cudaErrorInvalidValue);
}

namespace {

// Checks a copy's pointers against its kind: device sides must lie inside one allocation.
cudaError_t check_copy(void* dst, const void* src, size_t n, cudaMemcpyKind* kind) {
  const MemKind d = classify(dst, n), s = classify(src, n);
  if (*kind == cudaMemcpyDefault) {
    const bool dd = d == MemKind::kDevice, sd = s == MemKind::kDevice;
    *kind = dd ? (sd ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice)
               : (sd ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost);
  }
  const bool need_dst = *kind == cudaMemcpyHostToDevice || *kind == cudaMemcpyDeviceToDevice;
  const bool need_src = *kind == cudaMemcpyDeviceToHost || *kind == cudaMemcpyDeviceToDevice;
  if (need_dst && d != MemKind::kDevice) return cudaErrorInvalidValue;
  if (need_src && s != MemKind::kDevice) return cudaErrorInvalidValue;
  if (!need_dst && d == MemKind::kDevice) return cudaErrorInvalidValue;
  if (!need_src && s == MemKind::kDevice) return cudaErrorInvalidValue;
  return cudaSuccess;
}

}  // namespace

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t n, cudaMemcpyKind kind,
                            cudaStream_t stream) {
  if (n == 0) return api_result(cudaSuccess);
  if (cudaError_t e = api_result(check_copy(dst, src, n, &kind)); e != cudaSuccess) return e;
  const bool host_src = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyHostToHost;
  const bool host_dst = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyHostToHost;
  const bool pinned_src = !host_src || classify(src, n) == MemKind::kPinnedHost;
  const bool pinned_dst = !host_dst || classify(dst, n) == MemKind::kPinnedHost;
  if (capturing(stream)) {
    // A memcpy node: reads its source when the graph runs.
    return api_result(enqueue(stream, [dst, src, n] { std::memcpy(dst, src, n); }));
  }
  if (!pinned_src) {
    // Pageable source: staged at the call, so the caller may reuse its buffer at once.
    auto staged = std::make_shared<std::vector<unsigned char>>(
        static_cast<const unsigned char*>(src), static_cast<const unsigned char*>(src) + n);
    return api_result(enqueue(stream, [dst, staged, n] { std::memcpy(dst, staged->data(), n); }));
  }
  const cudaError_t e = enqueue(stream, [dst, src, n] { std::memcpy(dst, src, n); });
  if (e == cudaSuccess && !pinned_dst) stream_wait_idle(stream);  // pageable destination: sync
  return api_result(e);
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t n, cudaMemcpyKind kind) {
  if (forbidden_during_capture()) return api_result(cudaErrorStreamCaptureUnsupported);
  const cudaError_t e = cudaMemcpyAsync(dst, src, n, kind, nullptr);
  if (e != cudaSuccess) return e;
  stream_wait_idle(nullptr);
  return api_result(cudaSuccess);
}

cudaError_t cudaMemsetAsync(void* ptr, int value, size_t n, cudaStream_t stream) {
  if (n == 0) return api_result(cudaSuccess);
  if (classify(ptr, n) != MemKind::kDevice) return api_result(cudaErrorInvalidValue);
  return api_result(enqueue(stream, [ptr, value, n] { std::memset(ptr, value, n); }));
}

cudaError_t cudaMemset(void* ptr, int value, size_t n) {
  if (forbidden_during_capture()) return api_result(cudaErrorStreamCaptureUnsupported);
  const cudaError_t e = cudaMemsetAsync(ptr, value, n, nullptr);
  if (e != cudaSuccess) return e;
  stream_wait_idle(nullptr);
  return api_result(cudaSuccess);
}
