// Reusable scratch memory for the CPU kernels. Each slot keeps the largest buffer asked of it, so
// after the first decode step a step allocates nothing (per-call vectors cost a malloc, and above
// the mmap threshold an mmap, page faults and an munmap every call). Not thread-safe: one caller
// at a time uses a Workspace (the CPU backend owns one).
#pragma once

#include <array>
#include <cstddef>
#include <cstdlib>
#include <memory>

namespace arc::kernels {

class Workspace {
 public:
  // Slots used by different kernels so nested uses never share a buffer.
  enum Slot : int {
    kMatmulAct = 0,  // matmul: prepared activations
    kMatmulAct2,     // matmul_multi: prepared activations of a second format
    kMoeMeta,        // moe_ffn: routing bookkeeping
    kMoeXq,          // moe_ffn: per-token prepared activations
    kMoeXs,          // moe_ffn: activations in expert order (gate)
    kMoeXs2,         // moe_ffn: activations in expert order (up, when its format differs)
    kMoeGate,        // moe_ffn: gate / SwiGLU output in expert order
    kMoeUp,          // moe_ffn: up output in expert order
    kMoeHq,          // moe_ffn: prepared SwiGLU output
    kMoeOut,         // moe_ffn: down output in expert order
    kNumSlots
  };

  // `count` elements of T in `slot`, 64-byte aligned; contents unspecified. Null when out of
  // memory. Valid until the next get() of the same slot.
  template <typename T>
  T* get(Slot slot, size_t count) {
    return static_cast<T*>(raw(slot, count * sizeof(T)));
  }

  void* raw(Slot slot, size_t bytes) {
    Buf& b = bufs_[slot];
    if (bytes > b.size || b.p == nullptr) {
      const size_t rounded = (bytes + 63) / 64 * 64 + 64;  // a little slack for SIMD over-reads
      b.p.reset(std::aligned_alloc(64, rounded));
      b.size = b.p ? rounded - 64 : 0;
    }
    return b.p.get();
  }

 private:
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  struct Buf {
    std::unique_ptr<void, Free> p;
    size_t size = 0;
  };
  std::array<Buf, kNumSlots> bufs_;
};

}  // namespace arc::kernels
