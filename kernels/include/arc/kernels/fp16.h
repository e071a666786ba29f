// IEEE 754 binary16 <-> binary32 conversions in plain C++, bit-exact with the hardware
// instructions (F16C vcvtps2ph with round-to-nearest-even, vcvtph2ps): subnormals, infinities and
// NaN payloads (quietened) included. Used by references, the KV cache and block formats.
#pragma once

#include <cstdint>
#include <cstring>

namespace arc::kernels {

inline uint32_t f32_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

inline float f32_from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Exact: every binary16 value is representable in binary32.
inline float fp16_to_fp32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1Fu;
  uint32_t mant = h & 0x3FFu;
  if (exp == 0x1F) return f32_from_bits(sign | 0x7F800000u | (mant << 13));  // inf / NaN
  if (exp != 0) return f32_from_bits(sign | ((exp + 112u) << 23) | (mant << 13));
  if (mant == 0) return f32_from_bits(sign);  // +-0
  // Subnormal: normalise the mantissa.
  uint32_t e = 113;
  while ((mant & 0x400u) == 0) {
    mant <<= 1;
    --e;
  }
  return f32_from_bits(sign | (e << 23) | ((mant & 0x3FFu) << 13));
}

// Round to nearest, ties to even; overflow gives infinity; NaN stays NaN (quiet bit set, payload
// truncated like vcvtps2ph).
inline uint16_t fp32_to_fp16(float f) {
  const uint32_t u = f32_bits(f);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t abs = u & 0x7FFFFFFFu;
  if (abs > 0x7F800000u) return sign | 0x7E00u | static_cast<uint16_t>((abs >> 13) & 0x3FFu);
  if (abs >= 0x477FF000u) return sign | 0x7C00u;  // >= 65520 rounds to infinity
  if (abs < 0x38800000u) {
    // Result is subnormal (or zero): value / 2^-24 rounded to an integer, ties to even.
    if (abs < 0x33000000u) return sign;  // < 2^-25: rounds to zero (2^-25 itself ties to 0)
    const uint32_t exp = abs >> 23;
    const uint32_t mant = (abs & 0x7FFFFFu) | 0x800000u;
    const uint32_t shift = 126 - exp;  // 14..24 for exp in [102, 112]
    uint32_t q = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1u))) ++q;
    return sign | static_cast<uint16_t>(q);
  }
  // Normal: rebias the exponent and round the 13 dropped mantissa bits; a carry into the exponent
  // is the correct result (including up to the largest finite value).
  uint32_t r = abs - 0x38000000u;  // exponent 127 -> 15 bias
  const uint32_t rem = r & 0x1FFFu;
  r >>= 13;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r;
  return sign | static_cast<uint16_t>(r);
}

// Row helpers. src/dst: [n].
inline void fp16_to_fp32_row(const uint16_t* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = fp16_to_fp32(src[i]);
}
inline void fp32_to_fp16_row(const float* src, uint16_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = fp32_to_fp16(src[i]);
}

}  // namespace arc::kernels
