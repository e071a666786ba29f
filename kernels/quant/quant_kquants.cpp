// Reference (de)quantizers for the K-quant super-blocks (Q4_K, Q5_K, Q6_K, Q8_K). Dequantization
// is bit-exact with ggml. Quantization searches a few scales per sub-block and keeps the one
// with the least squared error; it need not match ggml's choices byte for byte (any valid block
// dequantizes identically everywhere).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "quant/blocks.h"
#include "quant/half.h"

namespace arc::kernels::quant {
namespace {

int nearest_int(float v) {
  return static_cast<int>(std::lround(v));
}

// Fits x[0..n) ~ scale * l - min_out with l in [0, nmax], min_out >= 0. Writes l to L.
float fit_scale_min(const float* x, int n, int nmax, uint8_t* L, float* min_out) {
  float lo = x[0], hi = x[0];
  for (int i = 1; i < n; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
  lo = std::min(lo, 0.0f);
  if (hi <= lo) {
    std::memset(L, 0, static_cast<size_t>(n));
    *min_out = -lo;
    return 0.0f;
  }
  float best_scale = (hi - lo) / static_cast<float>(nmax);
  float best_min = lo;
  float best_err = INFINITY;
  uint8_t tmp[32];
  for (int step = -10; step <= 10; ++step) {
    const float iscale = (static_cast<float>(nmax) + 0.1f * static_cast<float>(step)) / (hi - lo);
    double sl = 0, sl2 = 0, sxl = 0, sx = 0;
    for (int i = 0; i < n; ++i) {
      const int l = std::clamp(nearest_int(iscale * (x[i] - lo)), 0, nmax);
      tmp[i] = static_cast<uint8_t>(l);
      sl += l;
      sl2 += static_cast<double>(l) * l;
      sxl += static_cast<double>(x[i]) * l;
      sx += x[i];
    }
    // Least squares for x ~ scale * l + mn given l; mn must stay <= 0.
    const double det = n * sl2 - sl * sl;
    if (det <= 0) continue;
    double scale = (n * sxl - sx * sl) / det;
    double mn = (sl2 * sx - sl * sxl) / det;
    if (mn > 0) {
      mn = 0;
      scale = sxl / sl2;
    }
    double err = 0;
    for (int i = 0; i < n; ++i) {
      const double diff = scale * tmp[i] + mn - x[i];
      err += diff * diff;
    }
    if (err < best_err) {
      best_err = static_cast<float>(err);
      best_scale = static_cast<float>(scale);
      best_min = static_cast<float>(mn);
    }
  }
  *min_out = -best_min;
  return std::max(best_scale, 0.0f);
}

// Packs 6-bit scales and mins of 8 sub-blocks into ggml's 12-byte layout.
void pack_scale_min_k4(const uint8_t* ls, const uint8_t* lm, uint8_t* q) {
  std::memset(q, 0, 12);
  for (int j = 0; j < 8; ++j) {
    if (j < 4) {
      q[j] = ls[j];
      q[j + 4] = lm[j];
    } else {
      q[j + 4] = static_cast<uint8_t>((ls[j] & 0xF) | ((lm[j] & 0xF) << 4));
      q[j - 4] |= static_cast<uint8_t>((ls[j] >> 4) << 6);
      q[j] |= static_cast<uint8_t>((lm[j] >> 4) << 6);
    }
  }
}

// Shared by Q4_K (nmax 15) and Q5_K (nmax 31): per sub-block scale/min, 6-bit quantized against
// the super-block's d / dmin, then the values re-quantized with the stored scales. L: [256].
template <typename Block>
void quantize_superblock_k(const float* x, int nmax, Block* blk, uint8_t* L) {
  float scales[8], mins[8];
  float max_scale = 0, max_min = 0;
  for (int j = 0; j < 8; ++j) {
    scales[j] = fit_scale_min(x + 32 * j, 32, nmax, L + 32 * j, &mins[j]);
    max_scale = std::max(max_scale, scales[j]);
    max_min = std::max(max_min, mins[j]);
  }
  const float inv_scale = max_scale > 0 ? 63.0f / max_scale : 0.0f;
  const float inv_min = max_min > 0 ? 63.0f / max_min : 0.0f;
  uint8_t ls[8], lm[8];
  for (int j = 0; j < 8; ++j) {
    ls[j] = static_cast<uint8_t>(std::min(63, nearest_int(inv_scale * scales[j])));
    lm[j] = static_cast<uint8_t>(std::min(63, nearest_int(inv_min * mins[j])));
  }
  blk->d = f32_to_fp16(max_scale / 63.0f);
  blk->dmin = f32_to_fp16(max_min / 63.0f);
  pack_scale_min_k4(ls, lm, blk->scales);
  const float d = fp16_to_f32(blk->d), dmin = fp16_to_f32(blk->dmin);
  for (int j = 0; j < 8; ++j) {
    const float dj = d * ls[j];
    const float mj = dmin * lm[j];
    for (int i = 0; i < 32; ++i) {
      const int l = dj != 0.0f ? nearest_int((x[32 * j + i] + mj) / dj) : 0;
      L[32 * j + i] = static_cast<uint8_t>(std::clamp(l, 0, nmax));
    }
  }
}

}  // namespace

void dequantize_row_q4_k(const BlockQ4K* src, float* dst, int64_t n) {
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const BlockQ4K& blk = src[b];
    const float d = fp16_to_f32(blk.d), dmin = fp16_to_f32(blk.dmin);
    float* y = dst + b * kQKK;
    for (int g = 0; g < 4; ++g) {
      uint8_t sc0, m0, sc1, m1;
      unpack_scale_min_k4(2 * g, blk.scales, &sc0, &m0);
      unpack_scale_min_k4(2 * g + 1, blk.scales, &sc1, &m1);
      const float d0 = d * sc0, min0 = dmin * m0, d1 = d * sc1, min1 = dmin * m1;
      const uint8_t* q = blk.qs + 32 * g;
      for (int l = 0; l < 32; ++l) {
        y[64 * g + l] = d0 * static_cast<float>(q[l] & 0xF) - min0;
        y[64 * g + 32 + l] = d1 * static_cast<float>(q[l] >> 4) - min1;
      }
    }
  }
}

void quantize_row_q4_k(const float* src, BlockQ4K* dst, int64_t n) {
  uint8_t L[kQKK];
  for (int64_t b = 0; b < n / kQKK; ++b) {
    quantize_superblock_k(src + b * kQKK, 15, &dst[b], L);
    for (int g = 0; g < 4; ++g) {
      for (int l = 0; l < 32; ++l) {
        dst[b].qs[32 * g + l] = static_cast<uint8_t>(L[64 * g + l] | (L[64 * g + 32 + l] << 4));
      }
    }
  }
}

void dequantize_row_q5_k(const BlockQ5K* src, float* dst, int64_t n) {
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const BlockQ5K& blk = src[b];
    const float d = fp16_to_f32(blk.d), dmin = fp16_to_f32(blk.dmin);
    float* y = dst + b * kQKK;
    for (int g = 0; g < 4; ++g) {
      uint8_t sc0, m0, sc1, m1;
      unpack_scale_min_k4(2 * g, blk.scales, &sc0, &m0);
      unpack_scale_min_k4(2 * g + 1, blk.scales, &sc1, &m1);
      const float d0 = d * sc0, min0 = dmin * m0, d1 = d * sc1, min1 = dmin * m1;
      const uint8_t* q = blk.qs + 32 * g;
      for (int l = 0; l < 32; ++l) {
        const int hi0 = (blk.qh[l] >> (2 * g)) & 1;
        const int hi1 = (blk.qh[l] >> (2 * g + 1)) & 1;
        y[64 * g + l] = d0 * static_cast<float>((q[l] & 0xF) + 16 * hi0) - min0;
        y[64 * g + 32 + l] = d1 * static_cast<float>((q[l] >> 4) + 16 * hi1) - min1;
      }
    }
  }
}

void quantize_row_q5_k(const float* src, BlockQ5K* dst, int64_t n) {
  uint8_t L[kQKK];
  for (int64_t b = 0; b < n / kQKK; ++b) {
    quantize_superblock_k(src + b * kQKK, 31, &dst[b], L);
    std::memset(dst[b].qh, 0, sizeof(dst[b].qh));
    for (int g = 0; g < 4; ++g) {
      for (int l = 0; l < 32; ++l) {
        const int l0 = L[64 * g + l], l1 = L[64 * g + 32 + l];
        dst[b].qs[32 * g + l] = static_cast<uint8_t>((l0 & 0xF) | ((l1 & 0xF) << 4));
        dst[b].qh[l] |= static_cast<uint8_t>(((l0 >> 4) << (2 * g)) | ((l1 >> 4) << (2 * g + 1)));
      }
    }
  }
}

void dequantize_row_q6_k(const BlockQ6K* src, float* dst, int64_t n) {
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const BlockQ6K& blk = src[b];
    const float d = fp16_to_f32(blk.d);
    float* y = dst + b * kQKK;
    for (int h = 0; h < 2; ++h) {
      const uint8_t* ql = blk.ql + 64 * h;
      const uint8_t* qh = blk.qh + 32 * h;
      const int8_t* sc = blk.scales + 8 * h;
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        const int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
        const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        y[128 * h + l] = d * static_cast<float>(sc[is + 0]) * static_cast<float>(q1);
        y[128 * h + l + 32] = d * static_cast<float>(sc[is + 2]) * static_cast<float>(q2);
        y[128 * h + l + 64] = d * static_cast<float>(sc[is + 4]) * static_cast<float>(q3);
        y[128 * h + l + 96] = d * static_cast<float>(sc[is + 6]) * static_cast<float>(q4);
      }
    }
  }
}

void quantize_row_q6_k(const float* src, BlockQ6K* dst, int64_t n) {
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const float* x = src + b * kQKK;
    // Per 16-element sub-block: the value of largest magnitude maps to -32 (the wide end).
    float sub_scale[16];
    float max_scale = 0, amax_scale = 0;
    for (int j = 0; j < 16; ++j) {
      float amax = 0, max = 0;
      for (int i = 0; i < 16; ++i) {
        if (std::fabs(x[16 * j + i]) > amax) {
          amax = std::fabs(x[16 * j + i]);
          max = x[16 * j + i];
        }
      }
      sub_scale[j] = max / -32.0f;
      if (std::fabs(sub_scale[j]) > amax_scale) {
        amax_scale = std::fabs(sub_scale[j]);
        max_scale = sub_scale[j];
      }
    }
    BlockQ6K& blk = dst[b];
    uint8_t L[kQKK];
    if (amax_scale == 0.0f) {
      std::memset(&blk, 0, sizeof(blk));
      continue;
    }
    const float iscale = -128.0f / max_scale;
    blk.d = f32_to_fp16(1.0f / iscale);
    const float d = fp16_to_f32(blk.d);
    for (int j = 0; j < 16; ++j) {
      const int s = std::clamp(nearest_int(iscale * sub_scale[j]), -128, 127);
      blk.scales[j] = static_cast<int8_t>(s);
      const float dj = d * static_cast<float>(s);
      for (int i = 0; i < 16; ++i) {
        const int l = dj != 0.0f ? nearest_int(x[16 * j + i] / dj) : 0;
        L[16 * j + i] = static_cast<uint8_t>(std::clamp(l, -32, 31) + 32);
      }
    }
    for (int h = 0; h < 2; ++h) {
      uint8_t* ql = blk.ql + 64 * h;
      uint8_t* qh = blk.qh + 32 * h;
      const uint8_t* Lh = L + 128 * h;
      for (int l = 0; l < 32; ++l) {
        ql[l] = static_cast<uint8_t>((Lh[l] & 0xF) | ((Lh[l + 64] & 0xF) << 4));
        ql[l + 32] = static_cast<uint8_t>((Lh[l + 32] & 0xF) | ((Lh[l + 96] & 0xF) << 4));
        qh[l] = static_cast<uint8_t>((Lh[l] >> 4) | ((Lh[l + 32] >> 4) << 2) |
                                     ((Lh[l + 64] >> 4) << 4) | ((Lh[l + 96] >> 4) << 6));
      }
    }
  }
}

void dequantize_row_q8_k(const BlockQ8K* src, float* dst, int64_t n) {
  for (int64_t b = 0; b < n / kQKK; ++b) {
    for (int j = 0; j < kQKK; ++j) dst[b * kQKK + j] = src[b].d * static_cast<float>(src[b].qs[j]);
  }
}

void quantize_row_q8_k(const float* src, BlockQ8K* dst, int64_t n) {
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const float* x = src + b * kQKK;
    float amax = 0;
    for (int j = 0; j < kQKK; ++j) amax = std::max(amax, std::fabs(x[j]));
    BlockQ8K& blk = dst[b];
    if (amax == 0.0f) {
      std::memset(&blk, 0, sizeof(blk));
      continue;
    }
    // Symmetric to +-127 so the int8 values never saturate in maddubs-style kernels.
    const float iscale = 127.0f / amax;
    for (int j = 0; j < kQKK; ++j) {
      blk.qs[j] = static_cast<int8_t>(std::clamp(nearest_int(iscale * x[j]), -127, 127));
    }
    for (int j = 0; j < kQKK / 16; ++j) {
      int sum = 0;
      for (int i = 0; i < 16; ++i) sum += blk.qs[16 * j + i];
      blk.bsums[j] = static_cast<int16_t>(sum);
    }
    blk.d = 1.0f / iscale;
  }
}

}  // namespace arc::kernels::quant
