// Block formats: reference quantize / dequantize of rows, byte-exact with GGUF's layouts.
// n (values per row) must be a multiple of the type's block size (dtype_info(t)->block_elems).
#pragma once

#include <cstdint>

#include "arc/kernels/dtype.h"

namespace arc::kernels {

bool can_dequantize(DType t);
bool can_quantize(DType t);

// src: one row in `t`; dst: [n] floats. Returns false for an unsupported type or bad n.
bool dequantize_row(DType t, const void* src, float* dst, int64_t n);
// src: [n] floats; dst: one row in `t` (dtype_row_bytes(t, n) bytes). Returns false likewise.
bool quantize_row(DType t, const float* src, void* dst, int64_t n);

}  // namespace arc::kernels
