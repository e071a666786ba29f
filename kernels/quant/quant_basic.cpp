// Reference (de)quantizers for the float formats and the 32-element block formats (Q8_0, Q4_0,
// MXFP4). The quantizers follow ggml's reference rounding so files round-trip with other tools.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "quant/blocks.h"
#include "quant/half.h"

namespace arc::kernels::quant {

// 16-bit rows are read and written through memcpy: a row may start at any byte (weights sit at
// arbitrary offsets in a GGUF file's data section, and the tests misalign them on purpose).
namespace {
uint16_t load_u16(const void* p, int64_t i) {
  uint16_t v;
  std::memcpy(&v, static_cast<const unsigned char*>(p) + 2 * i, 2);
  return v;
}
void store_u16(void* p, int64_t i, uint16_t v) {
  std::memcpy(static_cast<unsigned char*>(p) + 2 * i, &v, 2);
}
}  // namespace

void dequantize_row_f16(const void* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = fp16_to_f32(load_u16(src, i));
}
void quantize_row_f16(const float* src, void* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) store_u16(dst, i, f32_to_fp16(src[i]));
}
void dequantize_row_bf16(const void* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(load_u16(src, i));
}
void quantize_row_bf16(const float* src, void* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) store_u16(dst, i, f32_to_bf16(src[i]));
}

void dequantize_row_q8_0(const BlockQ8_0* src, float* dst, int64_t n) {
  for (int64_t b = 0; b < n / kQK; ++b) {
    const float d = fp16_to_f32(src[b].d);
    for (int j = 0; j < kQK; ++j) dst[b * kQK + j] = d * static_cast<float>(src[b].qs[j]);
  }
}

void quantize_row_q8_0(const float* src, BlockQ8_0* dst, int64_t n) {
  for (int64_t b = 0; b < n / kQK; ++b) {
    const float* x = src + b * kQK;
    float amax = 0.0f;
    for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    dst[b].d = f32_to_fp16(d);
    for (int j = 0; j < kQK; ++j) dst[b].qs[j] = static_cast<int8_t>(std::lround(x[j] * id));
  }
}

void dequantize_row_q4_0(const BlockQ4_0* src, float* dst, int64_t n) {
  for (int64_t b = 0; b < n / kQK; ++b) {
    const float d = fp16_to_f32(src[b].d);
    float* y = dst + b * kQK;
    for (int j = 0; j < kQK / 2; ++j) {
      y[j] = d * static_cast<float>((src[b].qs[j] & 0xF) - 8);
      y[j + kQK / 2] = d * static_cast<float>((src[b].qs[j] >> 4) - 8);
    }
  }
}

void quantize_row_q4_0(const float* src, BlockQ4_0* dst, int64_t n) {
  for (int64_t b = 0; b < n / kQK; ++b) {
    const float* x = src + b * kQK;
    // The value of largest magnitude maps to -8 (the asymmetric end), as ggml does.
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < kQK; ++j) {
      if (std::fabs(x[j]) > amax) {
        amax = std::fabs(x[j]);
        max = x[j];
      }
    }
    const float d = max / -8.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    dst[b].d = f32_to_fp16(d);
    for (int j = 0; j < kQK / 2; ++j) {
      const int q0 = std::min(15, static_cast<int>(x[j] * id + 8.5f));
      const int q1 = std::min(15, static_cast<int>(x[j + kQK / 2] * id + 8.5f));
      dst[b].qs[j] = static_cast<uint8_t>(std::max(0, q0) | (std::max(0, q1) << 4));
    }
  }
}

void dequantize_row_mxfp4(const BlockMxfp4* src, float* dst, int64_t n) {
  for (int64_t b = 0; b < n / kQK; ++b) {
    const float d = e8m0_to_f32_half(src[b].e);
    float* y = dst + b * kQK;
    for (int j = 0; j < kQK / 2; ++j) {
      y[j] = d * static_cast<float>(kMxfp4Values[src[b].qs[j] & 0xF]);
      y[j + kQK / 2] = d * static_cast<float>(kMxfp4Values[src[b].qs[j] >> 4]);
    }
  }
}

namespace {
// Index of the table value nearest to x / d (ties to the lower index, as ggml).
uint8_t best_index_mxfp4(float x, float d) {
  const float v = d != 0.0f ? x / d : 0.0f;
  int best = 0;
  float best_err = std::fabs(v - kMxfp4Values[0]);
  for (int i = 1; i < 16; ++i) {
    const float err = std::fabs(v - kMxfp4Values[i]);
    if (err < best_err) {
      best_err = err;
      best = i;
    }
  }
  return static_cast<uint8_t>(best);
}
}  // namespace

void quantize_row_mxfp4(const float* src, BlockMxfp4* dst, int64_t n) {
  for (int64_t b = 0; b < n / kQK; ++b) {
    const float* x = src + b * kQK;
    float amax = 0.0f;
    for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(x[j]));
    // Largest E2M1 magnitude is 6 = 1.5 * 2^2: the shared exponent is floor(log2(amax)) - 2.
    int e = 0;
    if (amax > 0.0f) e = static_cast<int>(std::floor(std::log2(amax))) - 2 + 127;
    e = std::clamp(e, 0, 254);
    const float d = e8m0_to_f32_half(static_cast<uint8_t>(e));
    dst[b].e = static_cast<uint8_t>(e);
    for (int j = 0; j < kQK / 2; ++j) {
      dst[b].qs[j] = static_cast<uint8_t>(best_index_mxfp4(x[j], d) |
                                          (best_index_mxfp4(x[j + kQK / 2], d) << 4));
    }
  }
}

}  // namespace arc::kernels::quant
