// Stand-in for the CUDA runtime header under ARC_CUDA_EMULATION: the types, constants and runtime
// calls the kernels and the CUDA backend use, executed by the CPU emulation in kernels/cuda_emu
// (see arc_cuda_emu/emulator.h for what it checks and what only a real GPU can show).
// Signatures follow the CUDA 13 runtime API so the same sources compile against either.
#pragma once

#include <cstddef>
#include <cstdint>

#include "arc_cuda_emu/vector_types.h"

enum cudaError_t {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInitializationError = 3,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorInvalidDevicePointer = 17,
  cudaErrorInvalidMemcpyDirection = 21,
  cudaErrorNoDevice = 100,
  cudaErrorInvalidDevice = 101,
  cudaErrorInvalidResourceHandle = 400,
  cudaErrorNotReady = 600,
  cudaErrorIllegalAddress = 700,
  cudaErrorLaunchOutOfResources = 701,
  cudaErrorLaunchFailure = 719,
  cudaErrorStreamCaptureUnsupported = 900,
  cudaErrorStreamCaptureInvalidated = 901,
  cudaErrorStreamCaptureWrongThread = 908,
  cudaErrorUnknown = 999,
};

enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4,
};

enum cudaStreamCaptureMode {
  cudaStreamCaptureModeGlobal = 0,
  cudaStreamCaptureModeThreadLocal = 1,
  cudaStreamCaptureModeRelaxed = 2,
};

enum cudaStreamCaptureStatus {
  cudaStreamCaptureStatusNone = 0,
  cudaStreamCaptureStatusActive = 1,
  cudaStreamCaptureStatusInvalidated = 2,
};

enum cudaFuncAttribute {
  cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
};

enum cudaDeviceAttr {
  cudaDevAttrMaxThreadsPerBlock = 1,
  cudaDevAttrMaxSharedMemoryPerBlock = 8,
  cudaDevAttrMemoryClockRate = 36,
  cudaDevAttrGlobalMemoryBusWidth = 37,
  cudaDevAttrMultiProcessorCount = 16,
  cudaDevAttrComputeCapabilityMajor = 75,
  cudaDevAttrComputeCapabilityMinor = 76,
  cudaDevAttrMaxSharedMemoryPerBlockOptin = 97,
  cudaDevAttrMemoryPoolsSupported = 115,
};

inline constexpr unsigned cudaStreamDefault = 0x0;
inline constexpr unsigned cudaStreamNonBlocking = 0x1;
inline constexpr unsigned cudaEventDefault = 0x0;
inline constexpr unsigned cudaEventBlockingSync = 0x1;
inline constexpr unsigned cudaEventDisableTiming = 0x2;
inline constexpr unsigned cudaHostRegisterDefault = 0x0;
inline constexpr unsigned cudaHostRegisterPortable = 0x1;
inline constexpr unsigned cudaHostRegisterMapped = 0x2;
inline constexpr unsigned cudaHostAllocDefault = 0x0;

struct CUstream_st;
struct CUevent_st;
struct CUgraph_st;
struct CUgraphExec_st;
using cudaStream_t = CUstream_st*;
using cudaEvent_t = CUevent_st*;
using cudaGraph_t = CUgraph_st*;
using cudaGraphExec_t = CUgraphExec_st*;

struct cudaDeviceProp {
  char name[256];
  size_t totalGlobalMem;
  size_t sharedMemPerBlock;
  size_t sharedMemPerBlockOptin;
  size_t sharedMemPerMultiprocessor;
  int regsPerBlock;
  int warpSize;
  int maxThreadsPerBlock;
  int maxThreadsDim[3];
  int maxGridSize[3];
  int major;
  int minor;
  int multiProcessorCount;
  int integrated;
  int canMapHostMemory;
  int concurrentManagedAccess;
  int pageableMemoryAccess;
  int memoryBusWidth;
  int memoryClockRate;
  int l2CacheSize;
};

// ---- runtime calls (kernels/cuda_emu/runtime_*.cpp) ----
const char* cudaGetErrorString(cudaError_t error);
const char* cudaGetErrorName(cudaError_t error);
cudaError_t cudaGetLastError();
cudaError_t cudaPeekAtLastError();

cudaError_t cudaGetDeviceCount(int* count);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDevice(int* device);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device);
cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device);
cudaError_t cudaDriverGetVersion(int* version);
cudaError_t cudaRuntimeGetVersion(int* version);
cudaError_t cudaDeviceSynchronize();
cudaError_t cudaMemGetInfo(size_t* free, size_t* total);

cudaError_t cudaMalloc(void** ptr, size_t size);
cudaError_t cudaFree(void* ptr);
cudaError_t cudaMallocAsync(void** ptr, size_t size, cudaStream_t stream);
cudaError_t cudaFreeAsync(void* ptr, cudaStream_t stream);
cudaError_t cudaMallocHost(void** ptr, size_t size);
cudaError_t cudaHostAlloc(void** ptr, size_t size, unsigned flags);
cudaError_t cudaFreeHost(void* ptr);
cudaError_t cudaHostRegister(void* ptr, size_t size, unsigned flags);
cudaError_t cudaHostUnregister(void* ptr);

cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                            cudaStream_t stream = nullptr);
cudaError_t cudaMemset(void* ptr, int value, size_t count);
cudaError_t cudaMemsetAsync(void* ptr, int value, size_t count, cudaStream_t stream = nullptr);

cudaError_t cudaStreamCreate(cudaStream_t* stream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned flags);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaStreamQuery(cudaStream_t stream);
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned flags = 0);

cudaError_t cudaEventCreate(cudaEvent_t* event);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned flags);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = nullptr);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventQuery(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end);

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode mode);
cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* graph);
cudaError_t cudaStreamIsCapturing(cudaStream_t stream, cudaStreamCaptureStatus* status);
cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph,
                                 unsigned long long flags = 0);
cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream);
cudaError_t cudaGraphDestroy(cudaGraph_t graph);
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec);

// The typed overloads cuda_runtime.h adds for C++.
template <typename T>
cudaError_t cudaMalloc(T** ptr, size_t size) {
  return cudaMalloc(reinterpret_cast<void**>(ptr), size);
}
template <typename T>
cudaError_t cudaMallocHost(T** ptr, size_t size) {
  return cudaMallocHost(reinterpret_cast<void**>(ptr), size);
}
template <typename T>
cudaError_t cudaMallocAsync(T** ptr, size_t size, cudaStream_t stream) {
  return cudaMallocAsync(reinterpret_cast<void**>(ptr), size, stream);
}

// cudaFuncSetAttribute takes the kernel itself (a function pointer here, as under nvcc).
cudaError_t cudaEmuFuncSetAttribute(const void* func, cudaFuncAttribute attr, int value);
template <typename... P>
cudaError_t cudaFuncSetAttribute(void (*func)(P...), cudaFuncAttribute attr, int value) {
  return cudaEmuFuncSetAttribute(reinterpret_cast<const void*>(func), attr, value);
}

#include "arc_cuda_emu/dialect.h"
