// Baseline ARMv8-A matmul kernels (level kNeon): every aarch64 CPU runs them. The kernels are in
// matmul_neon.inc, shared with the dotprod and i8mm levels.
#if defined(__aarch64__)
#include <arm_neon.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "cpu/matmul_kernels.h"
#include "quant/blocks.h"
#include "quant/half.h"

namespace arc::kernels::cpu {
namespace neon {
namespace {
#include "cpu/matmul_neon.inc"
}  // namespace
}  // namespace neon

RowsKernel rows_kernel_neon(DType t) {
  return neon::kernel_for(t);
}

}  // namespace arc::kernels::cpu
#endif  // __aarch64__
