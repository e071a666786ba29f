// The CUDA C++ dialect the kernels use, for the host compiler: execution-space keywords, the
// built-in index variables, barriers, warp collectives with their masks, atomics and the integer
// and float intrinsics. Every device intrinsic here follows the CUDA programming guide's
// definition; the warp collectives run through the block scheduler (emulator.h).
#pragma once

#include <math.h>

#include <atomic>
#include <bit>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>

#include "arc_cuda_emu/emulator.h"

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __launch_bounds__(...)
#define __align__(n) alignas(n)
#define __constant__ const

#define threadIdx (::arc::cuda_emu::current_thread().thread_idx)
#define blockIdx (::arc::cuda_emu::current_thread().block_idx)
#define blockDim (::arc::cuda_emu::current_thread().block_dim)
#define gridDim (::arc::cuda_emu::current_thread().grid_dim)
inline constexpr int warpSize = 32;

inline void __syncthreads() {
  ::arc::cuda_emu::sync_threads();
}

// ---- warp collectives ----
namespace arc::cuda_emu::detail {

inline unsigned lane_id() {
  return static_cast<unsigned>(current_thread().linear) % 32u;
}

// Bytes a lane receives from a lane outside the mask (undefined on a GPU): the NaN pattern.
template <typename T>
T poison() {
  T v;
  std::memset(&v, 0xFF, sizeof v);
  return v;
}

enum class ShflKind { kIdx, kUp, kDown, kXor };

template <typename T>
struct ShflLane {
  T in;
  T out;
  int arg;
  int width;
  ShflKind kind;
};

template <typename T>
ARC_EMU_NOT_COUNTED void resolve_shfl(void* const lanes[32], unsigned mask) {
  for (int i = 0; i < 32; ++i) {
    auto* me = static_cast<ShflLane<T>*>(lanes[i]);
    if (me == nullptr) continue;
    const int w = me->width;
    const int seg = i / w * w;  // first lane of this lane's segment
    int src = i;
    switch (me->kind) {
      case ShflKind::kIdx:
        src = seg + (me->arg % w + w) % w;
        break;
      case ShflKind::kUp:
        src = i - seg >= me->arg ? i - me->arg : i;
        break;
      case ShflKind::kDown:
        src = i - seg + me->arg < w ? i + me->arg : i;
        break;
      case ShflKind::kXor:
        src = i ^ me->arg;
        if (src >= seg + w) src = i;  // later groups: the caller's own value
        break;
    }
    const bool in_mask = src >= 0 && src < 32 && ((mask >> src) & 1u) && lanes[src] != nullptr;
    me->out = in_mask ? static_cast<ShflLane<T>*>(lanes[src])->in : poison<T>();
  }
}

template <typename T>
T shfl(const char* what, ShflKind kind, unsigned mask, T var, int arg, int width) {
  static_assert(std::is_trivially_copyable_v<T>, "__shfl_*_sync needs a trivially copyable type");
  if (width <= 0 || width > 32 || (width & (width - 1)) != 0) {
    kernel_fault(std::string(what) + ": width must be a power of two up to 32");
  }
  ShflLane<T> me{var, T{}, arg, width, kind};
  warp_collective(what, mask, &me, &resolve_shfl<T>);
  return me.out;
}

struct VoteLane {
  int pred;
  unsigned out;
};
ARC_EMU_NOT_COUNTED inline void resolve_ballot(void* const lanes[32], unsigned) {
  unsigned bits = 0;
  for (int i = 0; i < 32; ++i)
    if (lanes[i] != nullptr && static_cast<VoteLane*>(lanes[i])->pred) bits |= 1u << i;
  for (int i = 0; i < 32; ++i)
    if (lanes[i] != nullptr) static_cast<VoteLane*>(lanes[i])->out = bits;
}

struct MatchLane {
  uint64_t value;
  unsigned out;
};
ARC_EMU_NOT_COUNTED inline void resolve_match_any(void* const lanes[32], unsigned) {
  for (int i = 0; i < 32; ++i) {
    auto* me = static_cast<MatchLane*>(lanes[i]);
    if (me == nullptr) continue;
    unsigned bits = 0;
    for (int j = 0; j < 32; ++j)
      if (lanes[j] != nullptr && static_cast<MatchLane*>(lanes[j])->value == me->value)
        bits |= 1u << j;
    me->out = bits;
  }
}

ARC_EMU_NOT_COUNTED inline void resolve_nothing(void* const[32], unsigned) {}

}  // namespace arc::cuda_emu::detail

template <typename T>
T __shfl_sync(unsigned mask, T var, int src_lane, int width = 32) {
  using namespace arc::cuda_emu::detail;
  return shfl("__shfl_sync", ShflKind::kIdx, mask, var, src_lane, width);
}
template <typename T>
T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = 32) {
  using namespace arc::cuda_emu::detail;
  return shfl("__shfl_up_sync", ShflKind::kUp, mask, var, static_cast<int>(delta), width);
}
template <typename T>
T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = 32) {
  using namespace arc::cuda_emu::detail;
  return shfl("__shfl_down_sync", ShflKind::kDown, mask, var, static_cast<int>(delta), width);
}
template <typename T>
T __shfl_xor_sync(unsigned mask, T var, int lane_mask, int width = 32) {
  using namespace arc::cuda_emu::detail;
  return shfl("__shfl_xor_sync", ShflKind::kXor, mask, var, lane_mask, width);
}

inline unsigned __ballot_sync(unsigned mask, int pred) {
  arc::cuda_emu::detail::VoteLane me{pred, 0};
  arc::cuda_emu::warp_collective("__ballot_sync", mask, &me,
                                 &arc::cuda_emu::detail::resolve_ballot);
  return me.out;
}
template <typename T>
unsigned __match_any_sync(unsigned mask, T value) {
  static_assert(std::is_integral_v<T> && sizeof(T) <= 8, "__match_any_sync: 32/64-bit integers");
  arc::cuda_emu::detail::MatchLane me{static_cast<uint64_t>(value), 0};
  arc::cuda_emu::warp_collective("__match_any_sync", mask, &me,
                                 &arc::cuda_emu::detail::resolve_match_any);
  return me.out;
}
inline void __syncwarp(unsigned mask = 0xffffffffu) {
  arc::cuda_emu::warp_collective("__syncwarp", mask, nullptr,
                                 &arc::cuda_emu::detail::resolve_nothing);
}

// ---- atomics (blocks run on several OS threads: real atomic read-modify-writes) ----
template <typename T>
T atomicAdd(T* address, T val) {
  return std::atomic_ref<T>(*address).fetch_add(val);
}
// ---- integer and float intrinsics ----
inline int __dp4a(int a, int b, int c) {
  for (int i = 0; i < 4; ++i)
    c += static_cast<int8_t>(static_cast<uint32_t>(a) >> (8 * i)) *
         static_cast<int8_t>(static_cast<uint32_t>(b) >> (8 * i));
  return c;
}
inline unsigned __dp4a(unsigned a, unsigned b, unsigned c) {
  for (int i = 0; i < 4; ++i) c += ((a >> (8 * i)) & 0xFFu) * ((b >> (8 * i)) & 0xFFu);
  return c;
}
inline int __popc(unsigned x) {
  return __builtin_popcount(x);
}
inline int __ffs(int x) {
  return __builtin_ffs(x);
}
inline float __uint_as_float(unsigned u) {
  return std::bit_cast<float>(u);
}
inline unsigned __float_as_uint(float f) {
  return std::bit_cast<unsigned>(f);
}
// Round to nearest, ties to even (the default rounding mode of the host).
inline int __float2int_rn(float x) {
  return static_cast<int>(nearbyintf(x));
}
inline float __int2float_rn(int x) {
  return static_cast<float>(x);
}
// The _rn operations are never contracted into FMAs on a GPU; this file is built with
// -ffp-contract=off, so plain operators are exactly that.
inline float __fadd_rn(float a, float b) {
  return a + b;
}
inline float __fsub_rn(float a, float b) {
  return a - b;
}
inline float __fmul_rn(float a, float b) {
  return a * b;
}
inline float __fdiv_rn(float a, float b) {
  return a / b;
}
inline float rsqrtf(float x) {
  return 1.0f / sqrtf(x);
}
template <typename T>
T __ldg(const T* p) {
  return *p;
}

// CUDA's min/max on arithmetic types of any mix (the device library's overloads).
template <typename A, typename B>
requires(std::is_arithmetic_v<A>&& std::is_arithmetic_v<B>) constexpr std::common_type_t<A, B> min(
    A a, B b) {
  using C = std::common_type_t<A, B>;
  return static_cast<C>(b) < static_cast<C>(a) ? static_cast<C>(b) : static_cast<C>(a);
}
template <typename A, typename B>
requires(std::is_arithmetic_v<A>&& std::is_arithmetic_v<B>) constexpr std::common_type_t<A, B> max(
    A a, B b) {
  using C = std::common_type_t<A, B>;
  return static_cast<C>(a) < static_cast<C>(b) ? static_cast<C>(b) : static_cast<C>(a);
}

// ---- shared memory and launches (the kernels spell them with these macros, common.cuh) ----
// ARC_SHARED(float, red, [32]) declares `float red[32]` in the block's shared memory.
#define ARC_EMU_SHARED(type, name, dims)                                    \
  static const char arc_shared_key_##name = 0;                              \
  using arc_shared_type_##name = type dims;                                 \
  arc_shared_type_##name& name =                                            \
      *static_cast<arc_shared_type_##name*>(::arc::cuda_emu::shared_static( \
          &arc_shared_key_##name, sizeof(arc_shared_type_##name),           \
          alignof(arc_shared_type_##name) < 16 ? 16 : alignof(arc_shared_type_##name)))
#define ARC_EMU_DYNAMIC_SHARED(type, name) \
  type* name = static_cast<type*>(::arc::cuda_emu::shared_dynamic())

namespace arc::cuda_emu {

// Binds a kernel and its launch configuration; operator() copies the arguments (converted to the
// kernel's parameter types, as a launch does) and enqueues the grid.
template <typename... P>
class Launcher {
 public:
  Launcher(void (*kernel)(P...), const char* name, dim3 grid, dim3 block, size_t shared,
           void* stream)
      : kernel_(kernel) {
    spec_.name = name;
    spec_.func = reinterpret_cast<const void*>(kernel);
    spec_.grid = grid;
    spec_.block = block;
    spec_.shared_bytes = shared;
    spec_.stream = stream;
  }
  template <typename... A>
  void operator()(A&&... args) const {
    static_assert(sizeof...(A) == sizeof...(P), "kernel launched with the wrong argument count");
    auto kernel = kernel_;
    std::tuple<std::decay_t<P>...> params(std::forward<A>(args)...);
    launch_kernel(spec_, [kernel, params]() { std::apply(kernel, params); });
  }

 private:
  void (*kernel_)(P...);
  LaunchSpec spec_;
};

template <typename... P>
Launcher<P...> make_launcher(void (*kernel)(P...), const char* name, dim3 grid, dim3 block,
                             size_t shared, void* stream) {
  return Launcher<P...>(kernel, name, grid, block, shared, stream);
}

}  // namespace arc::cuda_emu

#define ARC_EMU_LAUNCH(grid, block, shared, stream, ...) \
  ::arc::cuda_emu::make_launcher(__VA_ARGS__, #__VA_ARGS__, dim3(grid), dim3(block), shared, stream)
#include "arc_cuda_emu/mma_ptx.h"
