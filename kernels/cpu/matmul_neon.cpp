// aarch64 Advanced SIMD matmul kernels. Same structure as the x86 ones (matmul_x86.inc): int8 dot
// products against Q8_0 / Q8_K activations for the block formats, F32 FMA for float weights. Uses
// SDOT when the compiler targets it (__ARM_FEATURE_DOTPROD, e.g. -march=armv8.2-a+dotprod or the
// Grace / GB10 cores), widening multiplies otherwise.
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

constexpr int kTile = 4;
using quant::BlockMxfp4;
using quant::BlockQ4_0;
using quant::BlockQ4K;
using quant::BlockQ5K;
using quant::BlockQ6K;
using quant::BlockQ8_0;
using quant::BlockQ8K;
using quant::kQK;
using quant::kQKK;

// acc + sums of 4 adjacent a * b products.
inline int32x4_t dot16(int32x4_t acc, int8x16_t a, int8x16_t b) {
#if defined(__ARM_FEATURE_DOTPROD)
  return vdotq_s32(acc, a, b);
#else
  const int16x8_t lo = vmull_s8(vget_low_s8(a), vget_low_s8(b));  // |products| <= 128 * 127
  const int16x8_t hi = vmull_high_s8(a, b);
  return vpadalq_s16(vpadalq_s16(acc, lo), hi);
#endif
}
// Sum of the 32 products of (a0, a1) with (b0, b1).
inline int32_t dot32(int8x16_t a0, int8x16_t a1, const int8_t* b) {
  return vaddvq_s32(dot16(dot16(vdupq_n_s32(0), a0, vld1q_s8(b)), a1, vld1q_s8(b + 16)));
}

struct DecodeQ8_0 {
  static void run(const BlockQ8_0& b, int8x16_t* q0, int8x16_t* q1, float* d) {
    *d = quant::fp16_to_f32(b.d);
    *q0 = vld1q_s8(b.qs);
    *q1 = vld1q_s8(b.qs + 16);
  }
};
struct DecodeQ4_0 {
  static void run(const BlockQ4_0& b, int8x16_t* q0, int8x16_t* q1, float* d) {
    *d = quant::fp16_to_f32(b.d);
    const uint8x16_t raw = vld1q_u8(b.qs);
    const int8x16_t eight = vdupq_n_s8(8);
    *q0 = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(raw, vdupq_n_u8(0x0F))), eight);
    *q1 = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(raw, 4)), eight);
  }
};
struct DecodeMxfp4 {
  static void run(const BlockMxfp4& b, int8x16_t* q0, int8x16_t* q1, float* d) {
    *d = quant::e8m0_to_f32_half(b.e);
    const int8x16_t table = vld1q_s8(quant::kMxfp4Values);
    const uint8x16_t raw = vld1q_u8(b.qs);
    *q0 = vqtbl1q_s8(table, vandq_u8(raw, vdupq_n_u8(0x0F)));
    *q1 = vqtbl1q_s8(table, vshrq_n_u8(raw, 4));
  }
};

template <class Block, class Decode>
struct Block32Kernel {
  template <int NT>
  static void dot(int64_t n_in, const uint8_t* wrow, const uint8_t* xa, size_t xs, float* out) {
    const auto* w = reinterpret_cast<const Block*>(wrow);  // [n_in / 32]
    float32x4_t acc[NT];
    for (int t = 0; t < NT; ++t) acc[t] = vdupq_n_f32(0);
    for (int64_t b = 0; b < n_in / kQK; ++b) {
      int8x16_t q0, q1;
      float dw;
      Decode::run(w[b], &q0, &q1, &dw);
      for (int t = 0; t < NT; ++t) {
        const auto* xb = reinterpret_cast<const BlockQ8_0*>(xa + t * xs) + b;
        const int32x4_t p =
            dot16(dot16(vdupq_n_s32(0), q0, vld1q_s8(xb->qs)), q1, vld1q_s8(xb->qs + 16));
        acc[t] = vfmaq_n_f32(acc[t], vcvtq_f32_s32(p), dw * quant::fp16_to_f32(xb->d));
      }
    }
    for (int t = 0; t < NT; ++t) out[t] = vaddvq_f32(acc[t]);
  }
};

// The 12 packed bytes of Q4_K / Q5_K scales -> bytes 0..7 scales, 8..15 mins.
inline void unpack_scales_k4(const uint8_t* packed, uint8_t* out16) {
  for (int j = 0; j < 8; ++j) quant::unpack_scale_min_k4(j, packed, &out16[j], &out16[8 + j]);
}

template <bool HighBits>
struct KQuant45Kernel {
  using Block = std::conditional_t<HighBits, BlockQ5K, BlockQ4K>;
  template <int NT>
  static void dot(int64_t n_in, const uint8_t* wrow, const uint8_t* xa, size_t xs, float* out) {
    const auto* w = reinterpret_cast<const Block*>(wrow);  // [n_in / 256]
    const uint8x16_t low4 = vdupq_n_u8(0x0F), one = vdupq_n_u8(1);
    float acc[NT] = {};
    for (int64_t b = 0; b < n_in / kQKK; ++b) {
      uint8_t sm[16];
      unpack_scales_k4(w[b].scales, sm);
      int32_t sumi[NT] = {};
      [[maybe_unused]] uint8x16_t hb0, hb1;
      if constexpr (HighBits) {
        hb0 = vld1q_u8(w[b].qh);
        hb1 = vld1q_u8(w[b].qh + 16);
      }
      for (int g = 0; g < 4; ++g) {
        const uint8x16_t r0 = vld1q_u8(w[b].qs + 32 * g), r1 = vld1q_u8(w[b].qs + 32 * g + 16);
        uint8x16_t lo0 = vandq_u8(r0, low4), lo1 = vandq_u8(r1, low4);
        uint8x16_t hi0 = vshrq_n_u8(r0, 4), hi1 = vshrq_n_u8(r1, 4);
        if constexpr (HighBits) {
          lo0 = vorrq_u8(lo0, vshlq_n_u8(vandq_u8(hb0, one), 4));
          lo1 = vorrq_u8(lo1, vshlq_n_u8(vandq_u8(hb1, one), 4));
          hi0 = vorrq_u8(hi0, vshlq_n_u8(vandq_u8(vshrq_n_u8(hb0, 1), one), 4));
          hi1 = vorrq_u8(hi1, vshlq_n_u8(vandq_u8(vshrq_n_u8(hb1, 1), one), 4));
          hb0 = vshrq_n_u8(hb0, 2);
          hb1 = vshrq_n_u8(hb1, 2);
        }
        for (int t = 0; t < NT; ++t) {
          const auto* xb = reinterpret_cast<const BlockQ8K*>(xa + t * xs) + b;
          const int32_t s_lo =
              dot32(vreinterpretq_s8_u8(lo0), vreinterpretq_s8_u8(lo1), xb->qs + 64 * g);
          const int32_t s_hi =
              dot32(vreinterpretq_s8_u8(hi0), vreinterpretq_s8_u8(hi1), xb->qs + 64 * g + 32);
          sumi[t] += s_lo * sm[2 * g] + s_hi * sm[2 * g + 1];
        }
      }
      const float d = quant::fp16_to_f32(w[b].d), dmin = quant::fp16_to_f32(w[b].dmin);
      for (int t = 0; t < NT; ++t) {
        const auto* xb = reinterpret_cast<const BlockQ8K*>(xa + t * xs) + b;
        int32_t summ = 0;
        for (int j = 0; j < 8; ++j) summ += sm[8 + j] * (xb->bsums[2 * j] + xb->bsums[2 * j + 1]);
        acc[t] += d * xb->d * static_cast<float>(sumi[t]) - dmin * xb->d * static_cast<float>(summ);
      }
    }
    for (int t = 0; t < NT; ++t) out[t] = acc[t];
  }
};

struct Q6KKernel {
  template <int NT>
  static void dot(int64_t n_in, const uint8_t* wrow, const uint8_t* xa, size_t xs, float* out) {
    const auto* w = reinterpret_cast<const BlockQ6K*>(wrow);  // [n_in / 256]
    const uint8x16_t low4 = vdupq_n_u8(0x0F), three = vdupq_n_u8(3);
    const int8x16_t m32 = vdupq_n_s8(32);
    float acc[NT] = {};
    for (int64_t b = 0; b < n_in / kQKK; ++b) {
      int32_t sumi[NT] = {};
      for (int h = 0; h < 2; ++h) {
        const uint8_t* ql = w[b].ql + 64 * h;
        const uint8_t* qhp = w[b].qh + 32 * h;
        for (int half = 0; half < 2; ++half) {  // l < 16, then l >= 16
          const uint8x16_t l0 = vld1q_u8(ql + 16 * half), l1 = vld1q_u8(ql + 32 + 16 * half);
          const uint8x16_t qh = vld1q_u8(qhp + 16 * half);
          const uint8x16_t q[4] = {
              vorrq_u8(vandq_u8(l0, low4), vshlq_n_u8(vandq_u8(qh, three), 4)),
              vorrq_u8(vandq_u8(l1, low4), vshlq_n_u8(vandq_u8(vshrq_n_u8(qh, 2), three), 4)),
              vorrq_u8(vshrq_n_u8(l0, 4), vshlq_n_u8(vandq_u8(vshrq_n_u8(qh, 4), three), 4)),
              vorrq_u8(vshrq_n_u8(l1, 4), vshlq_n_u8(vshrq_n_u8(qh, 6), 4)),
          };
          for (int s = 0; s < 4; ++s) {
            const int8x16_t qs = vsubq_s8(vreinterpretq_s8_u8(q[s]), m32);
            const int sc = w[b].scales[8 * h + 2 * s + half];
            for (int t = 0; t < NT; ++t) {
              const auto* xb = reinterpret_cast<const BlockQ8K*>(xa + t * xs) + b;
              const int8x16_t xv = vld1q_s8(xb->qs + 128 * h + 32 * s + 16 * half);
              sumi[t] += sc * vaddvq_s32(dot16(vdupq_n_s32(0), qs, xv));
            }
          }
        }
      }
      const float d = quant::fp16_to_f32(w[b].d);
      for (int t = 0; t < NT; ++t) {
        const auto* xb = reinterpret_cast<const BlockQ8K*>(xa + t * xs) + b;
        acc[t] += d * xb->d * static_cast<float>(sumi[t]);
      }
    }
    for (int t = 0; t < NT; ++t) out[t] = acc[t];
  }
};

struct LoadF32 {
  static float32x4_t load4(const uint8_t* p) {
    return vld1q_f32(reinterpret_cast<const float*>(p));
  }
  static float load1(const uint8_t* p) {
    float v;
    std::memcpy(&v, p, 4);
    return v;
  }
  static constexpr int kBytes = 4;
};
struct LoadF16 {
  static float32x4_t load4(const uint8_t* p) {
    return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(reinterpret_cast<const uint16_t*>(p))));
  }
  static float load1(const uint8_t* p) {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return quant::fp16_to_f32(v);
  }
  static constexpr int kBytes = 2;
};
struct LoadBF16 {
  static float32x4_t load4(const uint8_t* p) {
    return vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(reinterpret_cast<const uint16_t*>(p)), 16));
  }
  static float load1(const uint8_t* p) {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return quant::bf16_to_f32(v);
  }
  static constexpr int kBytes = 2;
};

template <class L>
struct FloatKernel {
  template <int NT>
  static void dot(int64_t n, const uint8_t* w, const uint8_t* xa, size_t xs, float* out) {
    float32x4_t acc0[NT], acc1[NT];
    for (int t = 0; t < NT; ++t) acc0[t] = acc1[t] = vdupq_n_f32(0);
    const float* x[NT];
    for (int t = 0; t < NT; ++t) x[t] = reinterpret_cast<const float*>(xa + t * xs);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
      const float32x4_t w0 = L::load4(w + i * L::kBytes), w1 = L::load4(w + (i + 4) * L::kBytes);
      for (int t = 0; t < NT; ++t) {
        acc0[t] = vfmaq_f32(acc0[t], w0, vld1q_f32(x[t] + i));
        acc1[t] = vfmaq_f32(acc1[t], w1, vld1q_f32(x[t] + i + 4));
      }
    }
    for (int t = 0; t < NT; ++t) {
      float tail = 0;
      for (int64_t k = i; k < n; ++k) tail += L::load1(w + k * L::kBytes) * x[t][k];
      out[t] = vaddvq_f32(vaddq_f32(acc0[t], acc1[t])) + tail;
    }
  }
};

#include "cpu/matmul_rows.inc"

}  // namespace
}  // namespace neon

RowsKernel rows_kernel_neon(DType t) {
  using namespace neon;
  switch (t) {
    case DType::F32:
      return {rows<FloatKernel<LoadF32>>, ActFormat::kF32};
    case DType::F16:
      return {rows<FloatKernel<LoadF16>>, ActFormat::kF32};
    case DType::BF16:
      return {rows<FloatKernel<LoadBF16>>, ActFormat::kF32};
    case DType::Q8_0:
      return {rows<Block32Kernel<BlockQ8_0, DecodeQ8_0>>, ActFormat::kQ8_0};
    case DType::Q4_0:
      return {rows<Block32Kernel<BlockQ4_0, DecodeQ4_0>>, ActFormat::kQ8_0};
    case DType::MXFP4:
      return {rows<Block32Kernel<BlockMxfp4, DecodeMxfp4>>, ActFormat::kQ8_0};
    case DType::Q4_K:
      return {rows<KQuant45Kernel<false>>, ActFormat::kQ8_K};
    case DType::Q5_K:
      return {rows<KQuant45Kernel<true>>, ActFormat::kQ8_K};
    case DType::Q6_K:
      return {rows<Q6KKernel>, ActFormat::kQ8_K};
    default:
      return {};
  }
}

}  // namespace arc::kernels::cpu
#endif  // __aarch64__
