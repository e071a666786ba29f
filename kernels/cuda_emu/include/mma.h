// Stand-in for mma.h under ARC_CUDA_EMULATION: nvcuda::wmma for the 16x16x16 shape with half
// inputs and float accumulators (what kernels/cuda/matmul.cu uses).
//
// The element-to-lane mapping of a WMMA fragment is opaque by specification (CUDA programming
// guide, "Warp Matrix Functions": "the mapping of matrix elements into fragment internal storage
// is unspecified"), so kernels may only touch fragments element-wise. Here lane l holds the 8
// elements 8l .. 8l + 7 of the 16x16 tile in row-major order. Every call is a warp collective:
// all 32 lanes must reach it, as on a GPU.
#pragma once

#include "cuda_fp16.h"
#include "cuda_runtime.h"

namespace nvcuda::wmma {

struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };

template <typename Use, int M, int N, int K, typename T, typename Layout = void>
struct fragment {
  static_assert(M == 16 && N == 16 && K == 16, "the emulator implements wmma 16x16x16 only");
  static constexpr int num_elements = 8;
  T x[num_elements];
};

namespace detail {

inline int lane() {
  return static_cast<int>(arc::cuda_emu::detail::lane_id());
}

// Element e (row-major in the 16x16 tile) at a memory layout with leading dimension ldm.
inline size_t offset(int e, unsigned ldm, bool row_major) {
  const int r = e / 16, c = e % 16;
  return row_major ? static_cast<size_t>(r) * ldm + c : static_cast<size_t>(c) * ldm + r;
}

struct MmaLane {
  float* d;
  const __half* a;  // this lane's 8 elements of A (rows of M x K)
  const __half* b;  // of B (rows of K x N)
  const float* c;
};

ARC_EMU_NOT_COUNTED inline void resolve_mma(void* const lanes[32], unsigned) {
  float A[16][16], B[16][16], C[16][16];
  for (int l = 0; l < 32; ++l) {
    const auto* me = static_cast<const MmaLane*>(lanes[l]);
    for (int i = 0; i < 8; ++i) {
      const int e = 8 * l + i;
      A[e / 16][e % 16] = __half2float(me->a[i]);
      B[e / 16][e % 16] = __half2float(me->b[i]);
      C[e / 16][e % 16] = me->c[i];
    }
  }
  for (int l = 0; l < 32; ++l) {
    auto* me = static_cast<MmaLane*>(lanes[l]);
    for (int i = 0; i < 8; ++i) {
      const int e = 8 * l + i, m = e / 16, n = e % 16;
      float acc = C[m][n];
      for (int k = 0; k < 16; ++k) acc += A[m][k] * B[k][n];
      me->d[i] = acc;
    }
  }
}

}  // namespace detail

template <typename Use, typename T, typename L>
void fill_fragment(fragment<Use, 16, 16, 16, T, L>& f, T v) {
  for (auto& e : f.x) e = v;
}
inline void fill_fragment(fragment<accumulator, 16, 16, 16, float>& f, float v) {
  for (float& e : f.x) e = v;
}

// A: element (m, k); B: element (k, n); row_major / col_major say how memory holds them.
template <typename Use, typename L>
void load_matrix_sync(fragment<Use, 16, 16, 16, __half, L>& f, const __half* p, unsigned ldm) {
  static_assert(std::is_same_v<L, row_major> || std::is_same_v<L, col_major>);
  const int l = detail::lane();
  for (int i = 0; i < 8; ++i)
    f.x[i] = p[detail::offset(8 * l + i, ldm, std::is_same_v<L, row_major>)];
  __syncwarp();
}

inline void load_matrix_sync(fragment<accumulator, 16, 16, 16, float>& f, const float* p,
                             unsigned ldm, layout_t layout) {
  const int l = detail::lane();
  for (int i = 0; i < 8; ++i) f.x[i] = p[detail::offset(8 * l + i, ldm, layout == mem_row_major)];
  __syncwarp();
}

inline void store_matrix_sync(float* p, const fragment<accumulator, 16, 16, 16, float>& f,
                              unsigned ldm, layout_t layout) {
  const int l = detail::lane();
  for (int i = 0; i < 8; ++i) p[detail::offset(8 * l + i, ldm, layout == mem_row_major)] = f.x[i];
  __syncwarp();
}

// d = a * b + c over the warp (products exact in float, sums in k order).
template <typename LA, typename LB>
void mma_sync(fragment<accumulator, 16, 16, 16, float>& d,
              const fragment<matrix_a, 16, 16, 16, __half, LA>& a,
              const fragment<matrix_b, 16, 16, 16, __half, LB>& b,
              const fragment<accumulator, 16, 16, 16, float>& c) {
  float out[8];
  detail::MmaLane me{out, a.x, b.x, c.x};
  arc::cuda_emu::warp_collective("wmma::mma_sync", 0xffffffffu, &me, &detail::resolve_mma);
  for (int i = 0; i < 8; ++i) d.x[i] = out[i];
}

}  // namespace nvcuda::wmma
