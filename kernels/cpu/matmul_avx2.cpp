// AVX2 + FMA + F16C matmul kernels (the kernels themselves are in matmul_x86.inc).
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "cpu/matmul_kernels.h"
#include "quant/blocks.h"
#include "quant/half.h"

namespace arc::kernels::cpu {
namespace avx2 {
namespace {
constexpr int kTile = 4;
#include "cpu/matmul_x86.inc"
}  // namespace
}  // namespace avx2

RowsKernel rows_kernel_avx2(DType t) {
  return avx2::x86_rows_kernel(t);
}

}  // namespace arc::kernels::cpu
