// Device-side readers of the GGUF block formats (layouts in kernels/quant/blocks.h), two shapes:
//  - dequant16<T>(row, c, out): elements [16c, 16c + 16) of a row as floats (tensor-core tiles,
//    get_rows);
//  - load_unit<T>(row, u, a16, unit): the 32 elements [32u, 32u + 32) as 32 signed 8-bit values
//    plus scales, for dp4a against activations quantized to 8 bits in blocks of 32.
// T is the DType value; one instantiation per format keeps each kernel's registers to its own
// format instead of the union of all.
#pragma once

#include <type_traits>

#include "arc/kernels/dtype.h"
#include "cuda/common.cuh"

namespace arc::kernels::cuda::detail {

constexpr int kF32 = static_cast<int>(DType::F32);
constexpr int kF16 = static_cast<int>(DType::F16);
constexpr int kBF16 = static_cast<int>(DType::BF16);
constexpr int kQ8_0 = static_cast<int>(DType::Q8_0);
constexpr int kQ4_0 = static_cast<int>(DType::Q4_0);
constexpr int kQ4_K = static_cast<int>(DType::Q4_K);
constexpr int kQ5_K = static_cast<int>(DType::Q5_K);
constexpr int kQ6_K = static_cast<int>(DType::Q6_K);
constexpr int kMXFP4 = static_cast<int>(DType::MXFP4);

// 32 weights of one activation block: value = s_lo * q (elements 0..15) or s_hi * q (16..31),
// minus a per-block offset m * x.
//   dot(w, x) = (s_lo * dp4a(q[0..3], xq[0..3]) + s_hi * dp4a(q[4..7], xq[4..7])) * xd - m * xs
// where x = xd * xq and xs = xd * sum(xq).
struct Unit {
  int q[8];  // 32 int8, element 4i + b in byte b of q[i]
  float s_lo, s_hi;
  float m;
};

// 6-bit scale and min of sub-block j (Q4_K / Q5_K), as quant::unpack_scale_min_k4.
ARC_HOST_DEVICE void scale_min_k4(int j, const uint8_t* q, float* sc, float* m) {
  if (j < 4) {
    *sc = static_cast<float>(q[j] & 63);
    *m = static_cast<float>(q[j + 4] & 63);
  } else {
    *sc = static_cast<float>((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    *m = static_cast<float>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

// __byte_perm(x, y, s) for selectors whose nibbles are 0..7 (bit 3 clear: no sign replication):
// byte n of the result is byte s[4n + 2 : 4n] of the 8 bytes y:x.
ARC_HOST_DEVICE uint32_t byte_perm(uint32_t x, uint32_t y, uint32_t s) {
#if defined(__CUDA_ARCH__)
  return __byte_perm(x, y, s);
#else
  const uint64_t xy = (static_cast<uint64_t>(y) << 32) | x;
  uint32_t r = 0;
  for (int n = 0; n < 4; ++n)
    r |= static_cast<uint32_t>((xy >> (8 * ((s >> (4 * n)) & 7))) & 0xFF) << (8 * n);
  return r;
#endif
}

// __vsub4: a - b in each byte, modulo 256.
ARC_HOST_DEVICE uint32_t vsub4(uint32_t a, uint32_t b) {
#if defined(__CUDA_ARCH__)
  return __vsub4(a, b);
#else
  uint32_t r = 0;
  for (int n = 0; n < 4; ++n)
    r |= ((((a >> (8 * n)) & 0xFF) - ((b >> (8 * n)) & 0xFF)) & 0xFF) << (8 * n);
  return r;
#endif
}

// MXFP4: four 4-bit indices (one per byte) to the doubled E2M1 values as int8, via byte permutes
// of the 16-entry table held in four registers.
ARC_HOST_DEVICE int mxfp4_lookup4(uint32_t idx) {
  constexpr uint32_t t0 = 0x03020100u, t1 = 0x0C080604u;  // 0 1 2 3 | 4 6 8 12
  constexpr uint32_t t2 = 0xFDFEFF00u, t3 = 0xF4F8FAFCu;  // 0 -1 -2 -3 | -4 -6 -8 -12
  const uint32_t sel =
      (idx & 7u) | ((idx >> 4) & 0x70u) | ((idx >> 8) & 0x700u) | ((idx >> 12) & 0x7000u);
  const uint32_t lo = byte_perm(t0, t1, sel);
  const uint32_t hi = byte_perm(t2, t3, sel);
  const uint32_t mask = ((idx >> 3) & 0x01010101u) * 0xFFu;
  return static_cast<int>((lo & ~mask) | (hi & mask));
}

ARC_HOST_DEVICE float mxfp4_value(int idx) {
  return static_cast<float>(static_cast<int8_t>(mxfp4_lookup4(static_cast<uint32_t>(idx)) & 0xFF));
}

// Eight consecutive 32-bit words at p: one or two 16-byte loads when p is 16-byte aligned.
ARC_HOST_DEVICE void load_words8(const uint8_t* p, bool a16, uint32_t w[8]) {
  if (a16) {
    const uint4 a = load_readonly(reinterpret_cast<const uint4*>(p));
    const uint4 b = load_readonly(reinterpret_cast<const uint4*>(p) + 1);
    w[0] = a.x, w[1] = a.y, w[2] = a.z, w[3] = a.w, w[4] = b.x, w[5] = b.y, w[6] = b.z, w[7] = b.w;
  } else {
    ARC_UNROLL
    for (int i = 0; i < 8; ++i) w[i] = load_u32_a2(p + 4 * i);
  }
}

// Row must be at least 2-byte aligned (launchers check); a16: row and field offsets 16-aligned.
template <int T>
ARC_HOST_DEVICE void load_unit(const uint8_t* row, int64_t u, bool a16, Unit& r) {
  if constexpr (T == kQ8_0) {
    const uint8_t* b = row + u * 34;
    const float d = half_bits_to_float(*reinterpret_cast<const uint16_t*>(b));
    ARC_UNROLL
    for (int i = 0; i < 8; ++i) r.q[i] = static_cast<int>(load_u32_a2(b + 2 + 4 * i));
    r.s_lo = r.s_hi = d;
    r.m = 0.0f;
  } else if constexpr (T == kQ4_0) {
    const uint8_t* b = row + u * 18;
    const float d = half_bits_to_float(*reinterpret_cast<const uint16_t*>(b));
    ARC_UNROLL
    for (int i = 0; i < 4; ++i) {
      const uint32_t v = load_u32_a2(b + 2 + 4 * i);
      r.q[i] = static_cast<int>(vsub4(v & 0x0F0F0F0Fu, 0x08080808u));
      r.q[4 + i] = static_cast<int>(vsub4((v >> 4) & 0x0F0F0F0Fu, 0x08080808u));
    }
    r.s_lo = r.s_hi = d;
    r.m = 0.0f;
  } else if constexpr (T == kMXFP4) {
    const uint8_t* b = row + u * 17;
    const float d = e8m0_half(b[0]);
    ARC_UNROLL
    for (int i = 0; i < 4; ++i) {
      const uint32_t v = load_u32_a1(b + 1 + 4 * i);
      r.q[i] = mxfp4_lookup4(v & 0x0F0F0F0Fu);
      r.q[4 + i] = mxfp4_lookup4((v >> 4) & 0x0F0F0F0Fu);
    }
    r.s_lo = r.s_hi = d;
    r.m = 0.0f;
  } else if constexpr (T == kQ4_K || T == kQ5_K) {
    constexpr int kBytes = T == kQ4_K ? 144 : 176;
    constexpr int kQs = T == kQ4_K ? 16 : 48;
    const uint8_t* b = row + (u >> 3) * kBytes;
    const int j = static_cast<int>(u & 7);
    const uint32_t dd = *reinterpret_cast<const uint32_t*>(b);  // d | dmin << 16
    float sc, mn;
    scale_min_k4(j, b + 4, &sc, &mn);
    uint32_t w[8];
    load_words8(b + kQs + 32 * (j >> 1), a16, w);
    const int shift = 4 * (j & 1);
    if constexpr (T == kQ4_K) {
      ARC_UNROLL
      for (int i = 0; i < 8; ++i) r.q[i] = static_cast<int>((w[i] >> shift) & 0x0F0F0F0Fu);
    } else {
      uint32_t h[8];
      load_words8(b + 16, a16, h);
      ARC_UNROLL
      for (int i = 0; i < 8; ++i) {
        r.q[i] =
            static_cast<int>(((w[i] >> shift) & 0x0F0F0F0Fu) | (((h[i] >> j) & 0x01010101u) << 4));
      }
    }
    r.s_lo = r.s_hi = half_bits_to_float(static_cast<uint16_t>(dd & 0xFFFF)) * sc;
    r.m = half_bits_to_float(static_cast<uint16_t>(dd >> 16)) * mn;
  } else if constexpr (T == kQ6_K) {
    const uint8_t* b = row + (u >> 3) * 210;
    const int rr = static_cast<int>(u & 7);
    const int h = rr >> 2, s = rr & 3;
    const uint8_t* ql = b + 64 * h + 32 * (s & 1);
    const uint8_t* qh = b + 128 + 32 * h;
    const int lshift = 4 * (s >> 1), hshift = 2 * s;
    ARC_UNROLL
    for (int i = 0; i < 8; ++i) {
      const uint32_t lo = (load_u32_a2(ql + 4 * i) >> lshift) & 0x0F0F0F0Fu;
      const uint32_t hi = ((load_u32_a2(qh + 4 * i) >> hshift) & 0x03030303u) << 4;
      r.q[i] = static_cast<int>(vsub4(lo | hi, 0x20202020u));
    }
    const int8_t* sc = reinterpret_cast<const int8_t*>(b + 192);
    const float d = half_bits_to_float(*reinterpret_cast<const uint16_t*>(b + 208));
    r.s_lo = d * static_cast<float>(sc[8 * h + 2 * s]);
    r.s_hi = d * static_cast<float>(sc[8 * h + 2 * s + 1]);
    r.m = 0.0f;
  }
}

// Elements [16c, 16c + 16) of a quantized row (n_in is a multiple of the block size, so the
// chunk is always whole). Float formats are read by the callers directly (any n_in).
template <int T>
ARC_HOST_DEVICE void dequant16(const uint8_t* row, int64_t c, float out[16]) {
  if constexpr (T == kQ8_0) {
    const uint8_t* b = row + (c >> 1) * 34;
    const float d = half_bits_to_float(*reinterpret_cast<const uint16_t*>(b));
    const int8_t* q = reinterpret_cast<const int8_t*>(b + 2 + 16 * (c & 1));
    ARC_UNROLL
    for (int i = 0; i < 16; ++i) out[i] = d * static_cast<float>(q[i]);
  } else if constexpr (T == kQ4_0 || T == kMXFP4) {
    const uint8_t* b = row + (c >> 1) * (T == kQ4_0 ? 18 : 17);
    const int shift = 4 * static_cast<int>(c & 1);
    if constexpr (T == kQ4_0) {
      const float d = half_bits_to_float(*reinterpret_cast<const uint16_t*>(b));
      ARC_UNROLL
      for (int i = 0; i < 16; ++i) out[i] = d * static_cast<float>(((b[2 + i] >> shift) & 15) - 8);
    } else {
      const float d = e8m0_half(b[0]);
      ARC_UNROLL
      for (int i = 0; i < 16; ++i) out[i] = d * mxfp4_value((b[1 + i] >> shift) & 15);
    }
  } else if constexpr (T == kQ4_K || T == kQ5_K) {
    constexpr int kBytes = T == kQ4_K ? 144 : 176;
    constexpr int kQs = T == kQ4_K ? 16 : 48;
    const uint8_t* b = row + (c >> 4) * kBytes;
    const int c16 = static_cast<int>(c & 15);
    const int j = c16 >> 1, l0 = 16 * (c16 & 1);
    float sc, mn;
    scale_min_k4(j, b + 4, &sc, &mn);
    const float d = half_bits_to_float(*reinterpret_cast<const uint16_t*>(b)) * sc;
    const float m = half_bits_to_float(*reinterpret_cast<const uint16_t*>(b + 2)) * mn;
    const uint8_t* qs = b + kQs + 32 * (j >> 1) + l0;
    const int shift = 4 * (j & 1);
    ARC_UNROLL
    for (int i = 0; i < 16; ++i) {
      int q = (qs[i] >> shift) & 15;
      if constexpr (T == kQ5_K) q |= ((b[16 + l0 + i] >> j) & 1) << 4;
      out[i] = d * static_cast<float>(q) - m;
    }
  } else if constexpr (T == kQ6_K) {
    const uint8_t* b = row + (c >> 4) * 210;
    const int c16 = static_cast<int>(c & 15);
    const int rr = c16 >> 1, hh = c16 & 1;
    const int h = rr >> 2, s = rr & 3;
    const uint8_t* ql = b + 64 * h + 32 * (s & 1) + 16 * hh;
    const uint8_t* qh = b + 128 + 32 * h + 16 * hh;
    const float d =
        half_bits_to_float(*reinterpret_cast<const uint16_t*>(b + 208)) *
        static_cast<float>(reinterpret_cast<const int8_t*>(b + 192)[8 * h + 2 * s + hh]);
    const int lshift = 4 * (s >> 1), hshift = 2 * s;
    ARC_UNROLL
    for (int i = 0; i < 16; ++i) {
      const int q = ((ql[i] >> lshift) & 15) | (((qh[i] >> hshift) & 3) << 4);
      out[i] = d * static_cast<float>(q - 32);
    }
  }
}

// One element of a float-format row (F32 / F16 / BF16).
template <int T>
ARC_HOST_DEVICE float load_float_elem(const uint8_t* row, int64_t i) {
  if constexpr (T == kF32) {
    return load_readonly(reinterpret_cast<const float*>(row) + i);
  } else if constexpr (T == kF16) {
    return half_bits_to_float(load_readonly(reinterpret_cast<const unsigned short*>(row) + i));
  } else {
    return bf16_bits_to_float(load_readonly(reinterpret_cast<const unsigned short*>(row) + i));
  }
}

// True for the formats the kernels read.
inline bool is_quant_format(DType t) {
  switch (t) {
    case DType::Q8_0:
    case DType::Q4_0:
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K:
    case DType::MXFP4:
      return true;
    default:
      return false;
  }
}
inline bool is_float_format(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16;
}

// Calls f(std::integral_constant<int, T>{}) for a supported format; false otherwise.
template <typename F>
bool dispatch_format(DType t, F&& f) {
  switch (t) {
    case DType::F32:
      f(std::integral_constant<int, kF32>{});
      return true;
    case DType::F16:
      f(std::integral_constant<int, kF16>{});
      return true;
    case DType::BF16:
      f(std::integral_constant<int, kBF16>{});
      return true;
    case DType::Q8_0:
      f(std::integral_constant<int, kQ8_0>{});
      return true;
    case DType::Q4_0:
      f(std::integral_constant<int, kQ4_0>{});
      return true;
    case DType::Q4_K:
      f(std::integral_constant<int, kQ4_K>{});
      return true;
    case DType::Q5_K:
      f(std::integral_constant<int, kQ5_K>{});
      return true;
    case DType::Q6_K:
      f(std::integral_constant<int, kQ6_K>{});
      return true;
    case DType::MXFP4:
      f(std::integral_constant<int, kMXFP4>{});
      return true;
    default:
      return false;
  }
}

}  // namespace arc::kernels::cuda::detail
