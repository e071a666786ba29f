// Pieces of the CUDA emulator shared by its source files (not for kernels or the engine).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "arc_cuda_emu/emulator.h"

namespace arc::cuda_emu {

// The emulated part, fixed for the process (emulator.h says how it is chosen).
struct DeviceSpec {
  DeviceKind kind;
  const char* name;
  int major, minor;
  int multiprocessors;
  size_t shared_per_block;        // without opt-in (48 KB)
  size_t shared_per_block_optin;  // with cudaFuncSetAttribute
  size_t shared_per_sm;
  size_t own_memory;  // 0: unified memory (the host's)
  bool integrated;
  int bus_width_bits;
  int memory_clock_khz;
};
struct Settings {
  DeviceKind kind = DeviceKind::kGB10;
  uint64_t seed = 0x5eed;
  int threads = 1;  // OS threads that run blocks, the stream's own thread included
};
const Settings& settings();
const DeviceSpec& device_spec();

// ---- errors ----
// A kernel fault or illegal address: every later call returns it (cudaGetLastError too).
void set_sticky(cudaError_t err, const std::string& message);
cudaError_t sticky_error();
// The per-host-thread error cudaGetLastError returns and clears.
void set_last_error(cudaError_t err);
cudaError_t take_last_error();
cudaError_t peek_last_error();
// The result an API call returns: err, recorded as the last error when it is one; a sticky error
// wins over everything.
cudaError_t api_result(cudaError_t err);

// ---- kernels ----
struct KernelJob {
  LaunchSpec spec;
  std::function<void()> body;
  uint64_t launch_id = 0;
};
// Runs every block of the grid (on the calling thread and the block workers); a fault sets the
// sticky error and stops the grid.
void run_kernel(const KernelJob& job);
// Dynamic shared memory a kernel may use beyond 48 KB (cudaFuncSetAttribute), 0 when not set.
size_t max_dynamic_shared(const void* func);
uint64_t next_launch_id();
// Basic blocks of kernel code this OS thread has executed (kernel_work.cpp's coverage hook).
extern thread_local uint64_t t_kernel_ops;
// Adds one finished launch to the per-kernel work counters.
void record_kernel_work(const char* name, uint64_t threads, uint64_t ops);

// ---- memory ----
enum class MemKind { kUnknown, kDevice, kPinnedHost };
// Where [p, p + n) lies: inside one device allocation, inside pinned host memory, or neither.
MemKind classify(const void* p, size_t n);
void* device_alloc(size_t bytes, cudaError_t* err);
cudaError_t device_free(void* p);
size_t device_bytes_in_use();
void mem_info(size_t* free_b, size_t* total_b);
void* pinned_alloc(size_t bytes);
bool pinned_free(void* p);
bool pinned_register(void* p, size_t bytes);
bool pinned_unregister(void* p);
// Checks the canaries behind every device allocation; returns a message naming the first
// allocation written past its end (empty when all are intact). Re-arms what it reports.
std::string check_canaries();
// The guard-page handler: installed once, names the kernel and allocation of a fault.
void install_fault_handler();
void set_running_kernel(const char* name);  // per OS thread, for the fault message

// ---- streams ----
// Work items run on a stream's own thread, in order.
using StreamItem = std::function<void()>;
// Enqueues on `s` (nullptr: the legacy default stream), or records into the stream's capture.
// Returns an error when the stream is invalid or its capture was invalidated.
cudaError_t enqueue(cudaStream_t s, StreamItem item, bool capturable = true);
// Waits until everything enqueued on `s` so far has run.
cudaError_t stream_wait_idle(cudaStream_t s);
void device_wait_idle();
// True while `s` records a capture; `invalidate` marks a capture broken by a forbidden call.
bool capturing(cudaStream_t s);
// A synchronous call made while a capture is active that the capture mode forbids: invalidates
// that capture and answers cudaErrorStreamCaptureUnsupported.
bool forbidden_during_capture();

}  // namespace arc::cuda_emu
