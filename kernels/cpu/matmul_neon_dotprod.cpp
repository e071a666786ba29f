// ARMv8.2-A dot-product matmul kernels (level kNeonDotprod): matmul_neon.inc built with
// -march=armv8.2-a+dotprod (kernels/CMakeLists.txt), so every int8 dot product is an SDOT.
// Chosen at run time when the kernel reports HWCAP_ASIMDDP (isa.cpp); nothing outside
// rows_kernel_neon_dotprod has external linkage, so no code built for this level is ever linked
// into a path that runs on a CPU without it.
#if defined(__aarch64__)
#include <arm_neon.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "cpu/matmul_kernels.h"
#include "quant/blocks.h"
#include "quant/half.h"

#if !defined(__ARM_FEATURE_DOTPROD)
#error "matmul_neon_dotprod.cpp must be built with the dot-product extension (+dotprod)"
#endif

namespace arc::kernels::cpu {
namespace neon_dotprod {
namespace {
#include "cpu/matmul_neon.inc"
}  // namespace
}  // namespace neon_dotprod

RowsKernel rows_kernel_neon_dotprod(DType t) {
  return neon_dotprod::kernel_for(t);
}

}  // namespace arc::kernels::cpu
#endif  // __aarch64__
