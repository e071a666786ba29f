// Byte-exact GGUF / ggml block layouts and the per-format reference row (de)quantizers. Internal
// to arc_kernels: the SIMD kernels read these structs; other code goes through quant.h.
#pragma once

#include <cstddef>
#include <cstdint>

namespace arc::kernels::quant {

constexpr int kQK = 32;    // elements per Q8_0 / Q4_0 / MXFP4 block
constexpr int kQKK = 256;  // elements per K-quant super-block

// Packed (alignment 1): rows of 34- or 17-byte blocks put blocks at any address, and tensors in a
// mapped file need not be aligned for these structs.

// x[i] = d * qs[i]
struct __attribute__((packed)) BlockQ8_0 {
  uint16_t d;  // fp16
  int8_t qs[kQK];
};
// x[j] = d * ((qs[j] & 15) - 8), x[j + 16] = d * ((qs[j] >> 4) - 8), j < 16
struct __attribute__((packed)) BlockQ4_0 {
  uint16_t d;  // fp16
  uint8_t qs[kQK / 2];
};
// x[j] = v[qs[j] & 15] * 2^(e-128), x[j + 16] = v[qs[j] >> 4] * 2^(e-128): v = kMxfp4Values
struct __attribute__((packed)) BlockMxfp4 {
  uint8_t e;  // E8M0 shared exponent
  uint8_t qs[kQK / 2];
};
// 8 sub-blocks of 32: x = d * sc[j] * q - dmin * m[j], q in [0, 15], sc/m 6-bit packed in scales.
// Element 64g + l (l < 32) is the low nibble of qs[32g + l], element 64g + 32 + l the high one.
struct __attribute__((packed)) BlockQ4K {
  uint16_t d;     // fp16, scale of the 6-bit sub-block scales
  uint16_t dmin;  // fp16, scale of the 6-bit sub-block mins
  uint8_t scales[12];
  uint8_t qs[kQKK / 2];
};
// As Q4_K with a fifth bit: element 64g + l takes bit 2g of qh[l], element 64g + 32 + l bit 2g+1.
struct __attribute__((packed)) BlockQ5K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qh[kQKK / 8];
  uint8_t qs[kQKK / 2];
};
// 16 sub-blocks of 16: x = d * scales[j] * (q - 32), q in [0, 63] split into 4 low bits (ql) and
// 2 high bits (qh). Per 128-element half h: element 128h + 32s + l (s < 4, l < 32) has its low bits
// in ql[64h + l + 32 * (s & 1)] (low nibble for s < 2, high for s >= 2) and its high bits at
// bit 2s of qh[32h + l].
struct __attribute__((packed)) BlockQ6K {
  uint8_t ql[kQKK / 2];
  uint8_t qh[kQKK / 4];
  int8_t scales[kQKK / 16];
  uint16_t d;  // fp16
};
// Activations for K-quant dot products: x = d * qs, bsums[j] = sum of qs[16j .. 16j+15].
struct __attribute__((packed)) BlockQ8K {
  float d;
  int8_t qs[kQKK];
  int16_t bsums[kQKK / 16];
};

static_assert(sizeof(BlockQ8_0) == 34);
static_assert(sizeof(BlockQ4_0) == 18);
static_assert(sizeof(BlockMxfp4) == 17);
static_assert(sizeof(BlockQ4K) == 144);
static_assert(sizeof(BlockQ5K) == 176);
static_assert(sizeof(BlockQ6K) == 210);
static_assert(sizeof(BlockQ8K) == 292);

// E2M1 values times two (ggml's kvalues_mxfp4): index = sign bit << 3 | exponent << 1 | mantissa.
inline constexpr int8_t kMxfp4Values[16] = {0, 1,  2,  3,  4,  6,  8,  12,
                                            0, -1, -2, -3, -4, -6, -8, -12};

// Sub-block j's 6-bit scale and min from the 12 packed bytes of Q4_K / Q5_K.
inline void unpack_scale_min_k4(int j, const uint8_t* q, uint8_t* sc, uint8_t* m) {
  if (j < 4) {
    *sc = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *sc = static_cast<uint8_t>((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    *m = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

// Row (de)quantizers; n is a multiple of the block size (checked by the callers in quant.cpp).
// src/dst floats: [n]; blocks: [n / block_elems].
void dequantize_row_f16(const void* src, float* dst, int64_t n);  // src: n fp16, any alignment
void quantize_row_f16(const float* src, void* dst, int64_t n);
void dequantize_row_bf16(const void* src, float* dst, int64_t n);
void quantize_row_bf16(const float* src, void* dst, int64_t n);
void dequantize_row_q8_0(const BlockQ8_0* src, float* dst, int64_t n);
void quantize_row_q8_0(const float* src, BlockQ8_0* dst, int64_t n);
void dequantize_row_q4_0(const BlockQ4_0* src, float* dst, int64_t n);
void quantize_row_q4_0(const float* src, BlockQ4_0* dst, int64_t n);
void dequantize_row_mxfp4(const BlockMxfp4* src, float* dst, int64_t n);
void quantize_row_mxfp4(const float* src, BlockMxfp4* dst, int64_t n);
void dequantize_row_q4_k(const BlockQ4K* src, float* dst, int64_t n);
void quantize_row_q4_k(const float* src, BlockQ4K* dst, int64_t n);
void dequantize_row_q5_k(const BlockQ5K* src, float* dst, int64_t n);
void quantize_row_q5_k(const float* src, BlockQ5K* dst, int64_t n);
void dequantize_row_q6_k(const BlockQ6K* src, float* dst, int64_t n);
void quantize_row_q6_k(const float* src, BlockQ6K* dst, int64_t n);
void dequantize_row_q8_k(const BlockQ8K* src, float* dst, int64_t n);
void quantize_row_q8_k(const float* src, BlockQ8K* dst, int64_t n);

}  // namespace arc::kernels::quant
