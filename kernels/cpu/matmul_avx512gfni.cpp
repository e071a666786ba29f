// AVX-512 VNNI + GFNI matmul kernels (level kAvx512Gfni) for the K-quants; every other type runs
// the kAvx512Vnni kernel. The kernels are those of matmul_avx512vnni.cpp (the shared
// cpu/matmul_kquant_vnni.inc) built with GFNI: each nibble or 2-bit field of the weights comes
// out of one vgf2p8affineqb instead of a shift and a mask. Decode of these formats is compute
// bound per core (see matmul_avx512vnni.cpp), so the fewer instructions show: MatvecL2/Q4_K one
// thread 9.4 -> 8.7 us (bench_kernels). Separate from kAvx512Vnni because some VNNI CPUs
// (Cascade Lake) lack GFNI.
// GCC 12 reports false "may be used uninitialized" inside its own AVX-512 intrinsics (GCC bug
// 105593: _mm512_undefined_* placeholders); the warning is about the header, not this code.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "cpu/matmul_kernels.h"
#include "quant/blocks.h"
#include "quant/half.h"

namespace arc::kernels::cpu {
namespace avx512gfni {
namespace {
constexpr int kTile = 4;
#include "cpu/matmul_x86.inc"
// After matmul_x86.inc, whose helpers it uses.
#include "cpu/matmul_kquant_vnni.inc"
}  // namespace
}  // namespace avx512gfni

RowsKernel rows_kernel_avx512gfni(DType t) {
  using namespace avx512gfni;
  switch (t) {
    case DType::Q4_K:
      return {rows<KQuant45Vnni<false>>, ActFormat::kQ8_K};
    case DType::Q5_K:
      return {rows<KQuant45Vnni<true>>, ActFormat::kQ8_K};
    case DType::Q6_K:
      return {rows<Q6KVnni>, ActFormat::kQ8_K};
    default:
      return rows_kernel_avx512vnni(t);
  }
}

}  // namespace arc::kernels::cpu
