// Shared pieces of the CUDA kernels: the check macro, the launch and shared-memory spellings,
// warp reductions, unaligned loads and the scratch carving helper. Included by every
// kernels/cuda/*.cu.
//
// One source, two builds: nvcc compiles these files for the GPU; with ARC_CUDA_EMULATION the host
// compiler compiles them against kernels/cuda_emu (its cuda_runtime.h, cuda_fp16.h and mma.h),
// which runs every CUDA thread as a fiber (arc_cuda_emu/emulator.h). The three macros below are
// the only spellings that differ:
//   ARC_LAUNCH(grid, block, shared_bytes, stream, kernel)(args...)   kernel<<<...>>>(args...)
//   ARC_SHARED(type, name, [dims]);                                  __shared__ type name[dims];
//   ARC_DYNAMIC_SHARED(type, name);                          extern __shared__ type name[];
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "arc/kernels/cuda_ops.h"

#if defined(ARC_CUDA_EMULATION)
#define ARC_LAUNCH(grid, block, shared, stream, ...) \
  ARC_EMU_LAUNCH(grid, block, shared, stream, __VA_ARGS__)
#define ARC_SHARED(type, name, dims) ARC_EMU_SHARED(type, name, dims)
#define ARC_DYNAMIC_SHARED(type, name) ARC_EMU_DYNAMIC_SHARED(type, name)
#else
#define ARC_LAUNCH(grid, block, shared, stream, ...) __VA_ARGS__<<<grid, block, shared, stream>>>
#define ARC_SHARED(type, name, dims) __shared__ type name dims
#define ARC_DYNAMIC_SHARED(type, name) extern __shared__ __align__(16) type name[]
#endif

namespace arc::kernels::cuda {

// Records "<call> failed at file:line: <cudaGetErrorString>" for last_error() (per thread).
void record_error(const char* call, const char* file, int line, cudaError_t err);

}  // namespace arc::kernels::cuda

// Runs a CUDA runtime call; on failure records which call failed and where, and returns false
// from the enclosing function (every launcher returns bool).
#define ARC_CUDA_CHECK(expr)                                                        \
  do {                                                                              \
    const cudaError_t arc_cuda_err_ = (expr);                                       \
    if (arc_cuda_err_ != cudaSuccess) {                                             \
      ::arc::kernels::cuda::record_error(#expr, __FILE__, __LINE__, arc_cuda_err_); \
      return false;                                                                 \
    }                                                                               \
  } while (0)

namespace arc::kernels::cuda::detail {

inline constexpr int kWarp = 32;

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// Sum over a whole block (blockDim.x a multiple of 32, at most 1024); every thread gets the result.
// red: shared [32].
__device__ __forceinline__ float block_sum(float v, float* red) {
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  v = warp_sum(v);
  __syncthreads();  // red may still be read by a previous call
  if (lane == 0) red[warp] = v;
  __syncthreads();
  const int n_warps = blockDim.x / kWarp;
  v = lane < n_warps ? red[lane] : 0.0f;
  return warp_sum(v);
}

__device__ __forceinline__ float block_max(float v, float* red) {
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  v = warp_max(v);
  __syncthreads();
  if (lane == 0) red[warp] = v;
  __syncthreads();
  const int n_warps = blockDim.x / kWarp;
  v = lane < n_warps ? red[lane] : -INFINITY;
  return warp_max(v);
}

// The bit-level helpers below and the block readers of quant_blocks.cuh also compile for the
// host, where tests/kernels_cuda/quant_blocks_host_test.cu checks their layouts against the CPU
// reference on machines without a GPU. Device intrinsics get exact host stand-ins.
#define ARC_HOST_DEVICE __host__ __device__ __forceinline__
// `#pragma unroll` in those, for the device pass only (the host compiler warns about it).
#if defined(__CUDA_ARCH__)
#define ARC_UNROLL _Pragma("unroll")
#else
#define ARC_UNROLL
#endif

ARC_HOST_DEVICE float bits_as_float(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
#endif
}

// *p through the read-only data cache on the device.
template <typename T>
ARC_HOST_DEVICE T load_readonly(const T* p) {
#if defined(__CUDA_ARCH__)
  return __ldg(p);
#else
  return *p;
#endif
}

ARC_HOST_DEVICE float half_bits_to_float(uint16_t h) {
  return __half2float(__ushort_as_half(h));
}

ARC_HOST_DEVICE float bf16_bits_to_float(uint16_t h) {
  return bits_as_float(static_cast<uint32_t>(h) << 16);
}

// Little-endian loads from addresses with only 1- or 2-byte alignment (block formats of 17, 18,
// 34 and 210 bytes put their fields anywhere).
ARC_HOST_DEVICE uint16_t load_u16(const uint8_t* p) {
  return static_cast<uint16_t>(p[0] | (p[1] << 8));
}
ARC_HOST_DEVICE uint32_t load_u32_a2(const uint8_t* p) {  // p 2-byte aligned
  const uint16_t* q = reinterpret_cast<const uint16_t*>(p);
  return static_cast<uint32_t>(q[0]) | (static_cast<uint32_t>(q[1]) << 16);
}
ARC_HOST_DEVICE uint32_t load_u32_a1(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}

// MXFP4 block scale 2^(e-128) (the E2M1 table is stored doubled), as quant/half.h.
ARC_HOST_DEVICE float e8m0_half(uint8_t e) {
  const uint32_t bits = e >= 2 ? static_cast<uint32_t>(e - 1) << 23 : 0x00200000u << e;
  return bits_as_float(bits);
}

// Carves aligned regions out of the per-stream scratch. A Carve over a null base only counts,
// so the same code computes scratch_bytes() and the real offsets.
class Carve {
 public:
  explicit Carve(void* base) : base_(static_cast<uint8_t*>(base)) {}
  template <typename T>
  T* take(size_t count) {
    used_ = (used_ + 255) & ~static_cast<size_t>(255);
    T* p = base_ ? reinterpret_cast<T*>(base_ + used_) : nullptr;
    used_ += count * sizeof(T);
    return p;
  }
  size_t used() const { return used_; }

 private:
  uint8_t* base_;
  size_t used_ = 0;
};

inline unsigned ceil_div(int64_t a, int64_t b) {
  return static_cast<unsigned>((a + b - 1) / b);
}

}  // namespace arc::kernels::cuda::detail
