#include "cpu/matmul_kernels.h"

namespace arc::kernels::cpu {
RowsKernel rows_kernel_avx512(DType) {
  return {};
}
}  // namespace arc::kernels::cpu
