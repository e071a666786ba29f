// Scalar oracle for matmul.h: dequantizes each weight row with the reference dequantizers and
// accumulates in double, so its own rounding error is far below any kernel tolerance.
#include <cstring>
#include <vector>

#include "arc/kernels/matmul.h"
#include "arc/kernels/quant.h"
#include "arc/kernels/repack.h"

namespace arc::kernels::ref {

bool matmul(const MatmulArgs& a) {
  if (dtype_is_internal(a.w_type)) {  // interleaved rows: a row-major copy
    const DType file_type = row_major_type(a.w_type);
    const auto rb = dtype_row_bytes(file_type, static_cast<uint64_t>(a.n_in));
    if (!rb || a.n_out < 0 || (a.w_row_bytes != 0 && a.w_row_bytes != *rb)) return false;
    std::vector<uint8_t> rows(static_cast<size_t>(*rb * a.n_out));
    if (!rows.empty()) std::memcpy(rows.data(), a.w, rows.size());
    if (!repack_rows(a.w_type, file_type, rows.data(), a.n_out, a.n_in)) return false;
    MatmulArgs b = a;
    b.w = rows.data();
    b.w_type = file_type;
    return matmul(b);
  }
  if (!can_dequantize(a.w_type) || a.n_out < 0 || a.n_in < 0 || a.n_tokens < 0) return false;
  const auto row_bytes = dtype_row_bytes(a.w_type, static_cast<uint64_t>(a.n_in));
  if (!row_bytes) return false;
  const size_t w_row = a.w_row_bytes != 0 ? a.w_row_bytes : static_cast<size_t>(*row_bytes);
  const int64_t xs = a.x_stride != 0 ? a.x_stride : a.n_in;
  const int64_t ys = a.y_stride != 0 ? a.y_stride : a.n_out;
  std::vector<float> w(static_cast<size_t>(a.n_in));
  for (int64_t o = 0; o < a.n_out; ++o) {
    const auto* row = static_cast<const uint8_t*>(a.w) + static_cast<size_t>(o) * w_row;
    if (!dequantize_row(a.w_type, row, w.data(), a.n_in)) return false;
    for (int64_t t = 0; t < a.n_tokens; ++t) {
      const float* x = a.x + t * xs;  // [n_in]
      double acc = 0;
      for (int64_t i = 0; i < a.n_in; ++i) acc += static_cast<double>(w[i]) * x[i];
      float* y = a.y + t * ys + o;
      *y = a.accumulate ? *y + static_cast<float>(acc) : static_cast<float>(acc);
    }
  }
  return true;
}

}  // namespace arc::kernels::ref
