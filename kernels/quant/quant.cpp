// quant.h: one switch from DType to the per-format reference row (de)quantizers.
#include "arc/kernels/quant.h"

#include <cstring>

#include "quant/blocks.h"

namespace arc::kernels {
namespace {

bool supported(DType t) {
  switch (t) {
    case DType::F32:
    case DType::F16:
    case DType::BF16:
    case DType::Q8_0:
    case DType::Q4_0:
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K:
    case DType::Q8_K:
    case DType::MXFP4:
      return true;
    default:
      return false;
  }
}

bool valid_n(DType t, int64_t n) {
  const DTypeInfo* info = dtype_info(t);
  return info != nullptr && n >= 0 && n % info->block_elems == 0;
}

}  // namespace

bool can_dequantize(DType t) {
  return supported(t);
}
bool can_quantize(DType t) {
  return supported(t);
}

bool dequantize_row(DType t, const void* src, float* dst, int64_t n) {
  using namespace quant;
  if (!supported(t) || !valid_n(t, n)) return false;
  switch (t) {
    case DType::F32:
      std::memmove(dst, src, static_cast<size_t>(n) * sizeof(float));
      return true;
    case DType::F16:
      dequantize_row_f16(src, dst, n);
      return true;
    case DType::BF16:
      dequantize_row_bf16(src, dst, n);
      return true;
    case DType::Q8_0:
      dequantize_row_q8_0(static_cast<const BlockQ8_0*>(src), dst, n);
      return true;
    case DType::Q4_0:
      dequantize_row_q4_0(static_cast<const BlockQ4_0*>(src), dst, n);
      return true;
    case DType::Q4_K:
      dequantize_row_q4_k(static_cast<const BlockQ4K*>(src), dst, n);
      return true;
    case DType::Q5_K:
      dequantize_row_q5_k(static_cast<const BlockQ5K*>(src), dst, n);
      return true;
    case DType::Q6_K:
      dequantize_row_q6_k(static_cast<const BlockQ6K*>(src), dst, n);
      return true;
    case DType::Q8_K:
      dequantize_row_q8_k(static_cast<const BlockQ8K*>(src), dst, n);
      return true;
    case DType::MXFP4:
      dequantize_row_mxfp4(static_cast<const BlockMxfp4*>(src), dst, n);
      return true;
    default:
      return false;
  }
}

bool quantize_row(DType t, const float* src, void* dst, int64_t n) {
  using namespace quant;
  if (!supported(t) || !valid_n(t, n)) return false;
  switch (t) {
    case DType::F32:
      std::memmove(dst, src, static_cast<size_t>(n) * sizeof(float));
      return true;
    case DType::F16:
      quantize_row_f16(src, dst, n);
      return true;
    case DType::BF16:
      quantize_row_bf16(src, dst, n);
      return true;
    case DType::Q8_0:
      quantize_row_q8_0(src, static_cast<BlockQ8_0*>(dst), n);
      return true;
    case DType::Q4_0:
      quantize_row_q4_0(src, static_cast<BlockQ4_0*>(dst), n);
      return true;
    case DType::Q4_K:
      quantize_row_q4_k(src, static_cast<BlockQ4K*>(dst), n);
      return true;
    case DType::Q5_K:
      quantize_row_q5_k(src, static_cast<BlockQ5K*>(dst), n);
      return true;
    case DType::Q6_K:
      quantize_row_q6_k(src, static_cast<BlockQ6K*>(dst), n);
      return true;
    case DType::Q8_K:
      quantize_row_q8_k(src, static_cast<BlockQ8K*>(dst), n);
      return true;
    case DType::MXFP4:
      quantize_row_mxfp4(src, static_cast<BlockMxfp4*>(dst), n);
      return true;
    default:
      return false;
  }
}

}  // namespace arc::kernels
