// The CUDA emulator: runs the project's CUDA kernels and the CUDA backend on the CPU, so the CUDA
// path executes (and is checked against the CPU backend) on machines without a GPU.
//
// What it checks, as the CUDA programming guide and the PTX ISA define it:
//  - every CUDA thread is a fiber (Boost.Context); a block's fibers switch only at barriers and
//    warp collectives, and between two such points the lanes run in a seeded, shuffled order, so
//    a kernel that leans on implicit lock-step or lacks a barrier gives wrong results here;
//  - __syncthreads must be reached by every thread of the block, a warp collective
//    (__shfl*_sync, __ballot_sync, __match_any_sync, __syncwarp, mma.sync, wmma) by every lane of
//    its mask, all at the same operation with the same mask; otherwise the launch fails with a
//    message naming the kernel, block and lanes (sticky cudaErrorLaunchFailure), never a hang;
//  - shared memory (static and dynamic) and new device allocations start as 0xFF bytes (NaN as
//    float or half, -1 as integers), so a read of memory no one wrote shows in the results;
//  - device allocations end at a guard page (a fault names the kernel and the allocation) and
//    their 256-byte rounding is a canary checked after every kernel (cudaErrorIllegalAddress);
//  - launch limits of the emulated device: block and grid dimensions, dynamic shared memory above
//    48 KB only after cudaFuncSetAttribute, the per-block opt-in limit (GB10 99 KB, H200 227 KB);
//  - streams run asynchronously on their own threads, in order; events, stream capture and CUDA
//    graphs (kernel arguments captured by value, replayed on launch); synchronous calls during a
//    capture invalidate it as on a GPU.
// What only a real GPU shows: timing and occupancy, the memory model between blocks beyond
// atomics, shared-memory bank conflicts, the rounding of real tensor cores (here: products exact
// in float, sums in order), host code that dereferences a device pointer (it works here), and
// register or local-memory limits.
//
// The emulated device is chosen once per process: ARC_CUDA_EMU_DEVICE=gb10 (default) or h200;
// ARC_CUDA_EMU_SEED sets the lane-order seed, ARC_CUDA_EMU_THREADS the worker threads. They are
// read once, when the emulated driver starts, as the real driver reads CUDA_VISIBLE_DEVICES.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "arc_cuda_emu/vector_types.h"

namespace arc::cuda_emu {

// The per-thread view a kernel sees through threadIdx, blockIdx, blockDim and gridDim.
struct ThreadState {
  uint3 thread_idx{0, 0, 0};
  uint3 block_idx{0, 0, 0};
  dim3 block_dim;
  dim3 grid_dim;
  int linear = 0;  // thread index in the block: x + y * bx + z * bx * by
};

// The CUDA thread this OS thread is running now (set by the block scheduler before each resume).
ThreadState& current_thread();

// __syncthreads(): waits until every thread of the block arrives.
void sync_threads();

// A warp collective: this lane offers `data` (on its own stack, valid while it waits) and waits
// until every lane of `mask` is at the same collective; then `resolve` runs once with every
// lane's data (nullptr for lanes outside the mask) and all of them continue.
using WarpResolver = void (*)(void* const lanes[32], unsigned mask);
void warp_collective(const char* what, unsigned mask, void* data, WarpResolver resolve);

// This block's shared memory. `key` identifies one __shared__ declaration (the address of a
// static in it); every thread of the block gets the same bytes, 0xFF-filled at first use.
void* shared_static(const void* key, size_t bytes, size_t align);
void* shared_dynamic();

// Fails the running kernel with a message (sticky cudaErrorLaunchFailure); does not return to
// the kernel.
[[noreturn]] void kernel_fault(const std::string& message);

// Enqueues a kernel launch on `stream` (host side of ARC_LAUNCH).
struct LaunchSpec {
  const char* name = "";
  const void* func = nullptr;  // identity for cudaFuncSetAttribute
  dim3 grid, block;
  size_t shared_bytes = 0;
  void* stream = nullptr;
};
void launch_kernel(const LaunchSpec& spec, std::function<void()> body);

// Emulator settings and facts, for tests and the CLI.
enum class DeviceKind { kGB10, kH200 };
const char* device_kind_name(DeviceKind k);
DeviceKind device_kind();
// The message of the last kernel fault (empty when none); the fault itself stays sticky as on a
// GPU until reset_device().
std::string last_fault();
// Clears a sticky fault (what cudaDeviceReset does: only tests call it).
void reset_device();
// Number of kernels launched (executed or recorded) since start: tests use it to see that work
// really ran on the emulated device.
uint64_t kernels_launched();

// The work the emulated kernels did since start (or the last reset), per kernel name: launches,
// CUDA threads, and operations = basic blocks executed by all of its CUDA threads (counted by the
// compiler's coverage hook, -fsanitize-coverage=trace-pc, on the kernel code). Not a time: a
// GPU-independent measure of how much a kernel does, e.g. how many passes over a row it makes.
// Sorted by operations, most first.
struct KernelWork {
  std::string name;
  uint64_t launches = 0;
  uint64_t threads = 0;
  uint64_t ops = 0;
};
std::vector<KernelWork> kernel_work();
// What completes a warp collective or an mma (one instruction on a GPU, a loop over lanes here)
// is emulator mechanics, not the kernel's work: its resolver carries this mark and is not counted.
#if defined(__clang__)
#define ARC_EMU_NOT_COUNTED __attribute__((no_sanitize("coverage")))
#else
#define ARC_EMU_NOT_COUNTED __attribute__((no_sanitize_coverage))
#endif
// Waits for the device to be idle, then zeroes the counters.
void reset_kernel_work();
// Whether this build counts operations (the kernels carry the coverage hook); launches and
// threads are counted either way.
bool counts_operations();

}  // namespace arc::cuda_emu
