// Embedding gather: dequantizes the requested rows of a table in any supported format.
#include <cstddef>

#include "arc/kernels/ops.h"
#include "arc/kernels/quant.h"

namespace arc::kernels {

bool get_rows(DType t, const void* table, int64_t n_rows, int64_t d, const int32_t* ids,
              int64_t n_ids, float* out) {
  if (!can_dequantize(t) || d < 0 || n_ids < 0) return false;
  const auto row_bytes = dtype_row_bytes(t, static_cast<uint64_t>(d));
  if (!row_bytes) return false;
  for (int64_t j = 0; j < n_ids; ++j) {
    if (ids[j] < 0 || ids[j] >= n_rows) return false;
  }
  for (int64_t j = 0; j < n_ids; ++j) {
    const auto* row = static_cast<const uint8_t*>(table) + static_cast<size_t>(ids[j]) * *row_bytes;
    dequantize_row(t, row, out + j * d, d);  // out: [n_ids, d]
  }
  return true;
}

}  // namespace arc::kernels
