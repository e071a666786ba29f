// mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 for the emulator: the warp-wide product of
// the PTX instruction, with the fragment layouts of the PTX ISA, section "Matrix Fragments for
// mma.m16n8k16 with floating point type" (9.7.14.5.8 in PTX ISA 8.x). With
// groupID = lane >> 2 and tig = lane % 4 (thread ID in group):
//  - A (16 x 16, row): four .f16x2 registers a0..a3 holding elements a_0..a_7 (low half first):
//      row = groupID       for a_0, a_1, a_4, a_5;  groupID + 8 for a_2, a_3, a_6, a_7
//      col = tig * 2 + (i & 1)  for i < 4;          tig * 2 + (i & 1) + 8 for i >= 4
//  - B (16 x 8, col): two .f16x2 registers b0, b1 holding b_0..b_3:
//      row (k) = tig * 2 + (i & 1) for i < 2;  tig * 2 + (i & 1) + 8 for i >= 2;  col (n) = groupID
//  - C and D (16 x 8, f32): c_0..c_3:
//      row = groupID for c_0, c_1;  groupID + 8 for c_2, c_3;  col = tig * 2 + (i & 1)
#pragma once

#include <cstdint>

#include "arc/kernels/fp16.h"
#include "arc_cuda_emu/emulator.h"

namespace arc::cuda_emu {
namespace detail {

struct Mma16816Lane {
  float* c;  // [4], read as C and written as D
  uint32_t a[4];
  uint32_t b[2];
};

inline float half_of(uint32_t reg, int i) {
  return arc::kernels::fp16_to_fp32(static_cast<uint16_t>(i == 0 ? reg & 0xFFFFu : reg >> 16));
}

ARC_EMU_NOT_COUNTED inline void resolve_mma16816(void* const lanes[32], unsigned) {
  float A[16][16], B[16][8], C[16][8];
  for (int lane = 0; lane < 32; ++lane) {
    const auto* me = static_cast<const Mma16816Lane*>(lanes[lane]);
    const int g = lane >> 2, t = lane % 4;
    for (int i = 0; i < 8; ++i) {
      const int row = (i == 0 || i == 1 || i == 4 || i == 5) ? g : g + 8;
      const int col = t * 2 + (i & 1) + (i >= 4 ? 8 : 0);
      A[row][col] = half_of(me->a[i / 2], i % 2);
    }
    for (int i = 0; i < 4; ++i) {
      const int k = t * 2 + (i & 1) + (i >= 2 ? 8 : 0);
      B[k][g] = half_of(me->b[i / 2], i % 2);
    }
    for (int i = 0; i < 4; ++i) C[i < 2 ? g : g + 8][t * 2 + (i & 1)] = me->c[i];
  }
  for (int lane = 0; lane < 32; ++lane) {
    auto* me = static_cast<Mma16816Lane*>(lanes[lane]);
    const int g = lane >> 2, t = lane % 4;
    for (int i = 0; i < 4; ++i) {
      const int m = i < 2 ? g : g + 8, n = t * 2 + (i & 1);
      float acc = C[m][n];
      for (int k = 0; k < 16; ++k) acc += A[m][k] * B[k][n];
      me->c[i] = acc;
    }
  }
}

}  // namespace detail

// c += a * b over the warp; every lane of the warp must call it (the instruction is .aligned).
inline void mma_m16n8k16_row_col_f32_f16(float (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                                         uint32_t b1) {
  detail::Mma16816Lane me{c, {a[0], a[1], a[2], a[3]}, {b0, b1}};
  warp_collective("mma.sync.m16n8k16", 0xffffffffu, &me, &detail::resolve_mma16816);
}

}  // namespace arc::cuda_emu
