// Block formats: hand-assembled blocks (bytes written from ggml's documented bit layout, not by
// our quantizer) must dequantize to hand-computed values; quantize -> dequantize stays within a
// per-format error bound.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "arc/kernels/ops.h"
#include "arc/kernels/quant.h"

namespace arc::kernels {
namespace {

std::vector<float> deq(DType t, const std::vector<uint8_t>& bytes, int64_t n) {
  std::vector<float> out(static_cast<size_t>(n), NAN);
  EXPECT_TRUE(dequantize_row(t, bytes.data(), out.data(), n));
  return out;
}

TEST(QuantLayout, F16AndBF16) {
  // Little-endian halves: 1.0, -2.0, 65504 (max), 2^-24 (smallest subnormal), +inf.
  const std::vector<uint8_t> h = {0x00, 0x3c, 0x00, 0xc0, 0xff, 0x7b, 0x01, 0x00, 0x00, 0x7c};
  const auto f = deq(DType::F16, h, 5);
  EXPECT_EQ(f[0], 1.0f);
  EXPECT_EQ(f[1], -2.0f);
  EXPECT_EQ(f[2], 65504.0f);
  EXPECT_EQ(f[3], std::ldexp(1.0f, -24));
  EXPECT_TRUE(std::isinf(f[4]));
  // bf16 0x3f80 = 1.0, 0xc0a0 = -5.0.
  const auto b = deq(DType::BF16, {0x80, 0x3f, 0xa0, 0xc0}, 2);
  EXPECT_EQ(b[0], 1.0f);
  EXPECT_EQ(b[1], -5.0f);

  // Quantize: round to nearest even, overflow to inf at 65520.
  const float in[5] = {1.0f / 3.0f, 65519.0f, 65520.0f, std::ldexp(1.0f, -25) * 3, -0.0f};
  uint16_t out[5];
  ASSERT_TRUE(quantize_row(DType::F16, in, out, 5));
  EXPECT_EQ(out[0], 0x3555);
  EXPECT_EQ(out[1], 0x7bff);
  EXPECT_EQ(out[2], 0x7c00);
  EXPECT_EQ(out[3], 0x0002);  // 1.5 * 2^-24 ties to even: 2 * 2^-24
  EXPECT_EQ(out[4], 0x8000);
  float bin[2];
  uint32_t bits = 0x3f808000;  // exactly halfway between bf16 0x3f80 and 0x3f81: even wins
  std::memcpy(&bin[0], &bits, 4);
  bits = 0x3f818000;  // halfway between 0x3f81 and 0x3f82: even (0x3f82) wins
  std::memcpy(&bin[1], &bits, 4);
  uint16_t bout[2];
  ASSERT_TRUE(quantize_row(DType::BF16, bin, bout, 2));
  EXPECT_EQ(bout[0], 0x3f80);
  EXPECT_EQ(bout[1], 0x3f82);
}

TEST(QuantLayout, Q8_0) {
  std::vector<uint8_t> blk(34, 0);
  blk[0] = 0x00;  // d = fp16 0x3800 = 0.5
  blk[1] = 0x38;
  blk[2] = 1;
  blk[3] = static_cast<uint8_t>(-2);
  blk[4] = 127;
  blk[5] = 0x80;  // -128
  const auto y = deq(DType::Q8_0, blk, 32);
  EXPECT_EQ(y[0], 0.5f);
  EXPECT_EQ(y[1], -1.0f);
  EXPECT_EQ(y[2], 63.5f);
  EXPECT_EQ(y[3], -64.0f);
  EXPECT_EQ(y[31], 0.0f);
}

TEST(QuantLayout, Q4_0) {
  std::vector<uint8_t> blk(18, 0x88);  // every nibble 8 -> 0
  blk[0] = 0x00;                       // d = fp16 0x4000 = 2.0
  blk[1] = 0x40;
  blk[2] = 0x1f;  // element 0: (15 - 8) * 2 = 14; element 16: (1 - 8) * 2 = -14
  blk[3] = 0x80;  // element 1: (0 - 8) * 2 = -16; element 17: 0
  const auto y = deq(DType::Q4_0, blk, 32);
  EXPECT_EQ(y[0], 14.0f);
  EXPECT_EQ(y[16], -14.0f);
  EXPECT_EQ(y[1], -16.0f);
  EXPECT_EQ(y[17], 0.0f);
  EXPECT_EQ(y[5], 0.0f);
}

TEST(QuantLayout, Mxfp4) {
  // E2M1 code -> value: 0 0, 1 0.5, 2 1, 3 1.5, 4 2, 5 3, 6 4, 7 6, sign in bit 3.
  std::vector<uint8_t> blk(17 * 3, 0);
  blk[0] = 128;    // scale 2^(128 - 127) = 2
  blk[1] = 0x71;   // element 0: 0.5 * 2 = 1; element 16: 6 * 2 = 12
  blk[2] = 0xf9;   // element 1: -0.5 * 2 = -1; element 17: -6 * 2 = -12
  blk[17] = 127;   // scale 1
  blk[18] = 0x05;  // element 32: 3
  blk[34] = 0;     // scale 2^-127
  blk[35] = 0x02;  // element 64: 1 * 2^-127
  const auto y = deq(DType::MXFP4, blk, 96);
  EXPECT_EQ(y[0], 1.0f);
  EXPECT_EQ(y[16], 12.0f);
  EXPECT_EQ(y[1], -1.0f);
  EXPECT_EQ(y[17], -12.0f);
  EXPECT_EQ(y[2], 0.0f);
  EXPECT_EQ(y[32], 3.0f);
  EXPECT_EQ(y[64], std::ldexp(1.0f, -127));
}

// Q4_K / Q5_K share the header: d = 1.0, dmin = 0.5 and 12 bytes of packed 6-bit scales/mins.
// Sub-block 0: scale 1, min 2 (bytes 0 and 4, low 6 bits). Sub-block 1: scale 3, min 0.
// Sub-block 4: scale 37 = 0b10'0101, min 26 = 0b01'1010: low nibbles in byte 8 (0xA5), high two
// bits in the top bits of bytes 0 (scale) and 4 (min).
void k4_header(std::vector<uint8_t>& b) {
  b[0] = 0x00, b[1] = 0x3c;  // d
  b[2] = 0x00, b[3] = 0x38;  // dmin
  uint8_t* sc = b.data() + 4;
  sc[0] = 0x01 | 0x80;
  sc[1] = 0x03;
  sc[4] = 0x02 | 0x40;
  sc[5] = 0x00;
  sc[8] = 0xa5;
}

TEST(QuantLayout, Q4_K) {
  std::vector<uint8_t> b(144, 0);
  k4_header(b);
  uint8_t* qs = b.data() + 16;
  qs[0] = 0x4b;   // element 0: 1 * 11 - 0.5 * 2 = 10; element 32: 3 * 4 - 0 = 12
  qs[64] = 0x07;  // element 128 (sub-block 4): 37 * 7 - 0.5 * 26 = 246; element 160: 0
  const auto y = deq(DType::Q4_K, b, 256);
  EXPECT_EQ(y[0], 10.0f);
  EXPECT_EQ(y[32], 12.0f);
  EXPECT_EQ(y[1], -1.0f);  // 0 - 0.5 * 2
  EXPECT_EQ(y[128], 246.0f);
  EXPECT_EQ(y[130], -13.0f);  // 0 - 0.5 * 26
  EXPECT_EQ(y[160], 0.0f);
}

TEST(QuantLayout, Q5_K) {
  std::vector<uint8_t> b(176, 0);
  k4_header(b);
  uint8_t* qh = b.data() + 16;
  uint8_t* qs = b.data() + 48;
  qh[0] = 0x12;  // bit 1: element 32 gets +16; bit 4: element 128 gets +16
  qs[0] = 0x4b;
  qs[64] = 0x07;
  const auto y = deq(DType::Q5_K, b, 256);
  EXPECT_EQ(y[0], 10.0f);     // 1 * 11 - 1
  EXPECT_EQ(y[32], 60.0f);    // 3 * (4 + 16)
  EXPECT_EQ(y[128], 838.0f);  // 37 * (7 + 16) - 13
  EXPECT_EQ(y[1], -1.0f);     // 0 - 0.5 * 2
  EXPECT_EQ(y[64], 0.0f);     // sub-block 2: scale 0, min 0
}

TEST(QuantLayout, Q6_K) {
  std::vector<uint8_t> b(210, 0);
  uint8_t* ql = b.data();
  uint8_t* qh = b.data() + 128;
  auto* sc = reinterpret_cast<int8_t*>(b.data() + 192);
  b[208] = 0x00, b[209] = 0x34;  // d = 0.25
  sc[0] = 2, sc[2] = -3, sc[4] = 4, sc[6] = 1, sc[12] = 5;
  ql[0] = 0x3a;   // element 0 low bits 10, element 64 low bits 3
  ql[32] = 0x05;  // element 32 low bits 5, element 96 low bits 0
  qh[0] = 0x1b;   // high bits: element 0: 3, element 32: 2, element 64: 1, element 96: 0
  ql[67] = 0xf0;  // element 128 + 64 + 3 low bits 15
  qh[35] = 0x30;  // its high bits 3
  const auto y = deq(DType::Q6_K, b, 256);
  EXPECT_EQ(y[0], 13.0f);     // 0.25 * 2 * (58 - 32)
  EXPECT_EQ(y[32], -3.75f);   // 0.25 * -3 * (37 - 32)
  EXPECT_EQ(y[64], -13.0f);   // 0.25 * 4 * (19 - 32)
  EXPECT_EQ(y[96], -8.0f);    // 0.25 * 1 * (0 - 32)
  EXPECT_EQ(y[1], -16.0f);    // 0.25 * 2 * (0 - 32)
  EXPECT_EQ(y[195], 38.75f);  // 0.25 * 5 * (63 - 32)
}

TEST(QuantLayout, Q8_K) {
  std::vector<uint8_t> b(292, 0);
  const float d = 0.5f;
  std::memcpy(b.data(), &d, 4);
  b[4] = static_cast<uint8_t>(-7);
  b[4 + 255] = 100;
  const auto y = deq(DType::Q8_K, b, 256);
  EXPECT_EQ(y[0], -3.5f);
  EXPECT_EQ(y[255], 50.0f);
}

TEST(Quant, RejectsBadInput) {
  float x[64] = {};
  uint8_t buf[256] = {};
  EXPECT_FALSE(dequantize_row(DType::Q4_K, buf, x, 64));  // not a multiple of 256
  EXPECT_FALSE(quantize_row(DType::Q8_0, x, buf, 33));
  EXPECT_FALSE(dequantize_row(DType::IQ2_XXS, buf, x, 256));
  EXPECT_FALSE(can_quantize(DType::Q2_K));
}

// Worst-case |x - dequant(quant(x))| for a block, in terms of the block's largest magnitude amax
// (range = max - min for the asymmetric K-quants), derived from each format's rounding:
//   F16 / BF16: half an ulp (2^-11 / 2^-8 relative per value, checked per value below);
//   Q8_0, Q8_K: half a step amax/127, plus the fp16 rounding of d (127 * 2^-11 relative);
//   Q4_0: the largest value may clamp from +8 to +7 steps: one full step amax/8;
//   MXFP4: the top E2M1 gap (4 -> 6) and clipping above 6: up to amax / 2;
//   Q4_K / Q5_K: one step of the coarsest sub-block (range / 15 or 31) plus 6-bit scale rounding;
//   Q6_K: one step amax / 32 of the coarsest sub-block plus 8-bit scale rounding.
struct RoundTrip {
  DType t;
  int block;
  double bound_of_amax;  // bound as a fraction of the block's amax (or range)
  double rms_of_amax;    // mean-square bound for the row, fraction of amax
};

class QuantRoundTrip : public ::testing::TestWithParam<RoundTrip> {};

TEST_P(QuantRoundTrip, ErrorWithinBound) {
  const RoundTrip p = GetParam();
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  const int64_t n = 256 * 8;
  std::vector<float> x(n);
  for (auto& v : x) v = nd(rng);
  x[5] = 0;  // exact zeros and a zero block must survive
  for (int i = 256; i < 256 + p.block; ++i) x[i] = 0;
  std::vector<uint8_t> q(*dtype_row_bytes(p.t, n));
  ASSERT_TRUE(quantize_row(p.t, x.data(), q.data(), n));
  std::vector<float> y(n);
  ASSERT_TRUE(dequantize_row(p.t, q.data(), y.data(), n));
  double se = 0, sx = 0;
  for (int64_t b0 = 0; b0 < n; b0 += p.block) {
    float amax = 0, lo = 0, hi = 0;
    for (int i = 0; i < p.block; ++i) {
      amax = std::max(amax, std::fabs(x[b0 + i]));
      lo = std::min(lo, x[b0 + i]);
      hi = std::max(hi, x[b0 + i]);
    }
    const double scale = (p.t == DType::Q4_K || p.t == DType::Q5_K) ? hi - lo : amax;
    for (int i = 0; i < p.block; ++i) {
      const double err = std::fabs(static_cast<double>(x[b0 + i]) - y[b0 + i]);
      ASSERT_LE(err, p.bound_of_amax * scale + 1e-7) << dtype_name(p.t) << " at " << b0 + i;
      se += err * err;
      sx += static_cast<double>(amax) * amax;
    }
  }
  EXPECT_EQ(y[256], 0.0f);
  EXPECT_LE(std::sqrt(se / sx), p.rms_of_amax) << dtype_name(p.t);
}

INSTANTIATE_TEST_SUITE_P(Formats, QuantRoundTrip,
                         ::testing::Values(RoundTrip{DType::F32, 1, 0.0, 0.0},
                                           RoundTrip{DType::F16, 1, 1.0 / 2048, 1.0 / 2048},
                                           RoundTrip{DType::BF16, 1, 1.0 / 256, 1.0 / 256},
                                           RoundTrip{DType::Q8_0, 32, 1.0 / 254 + 1.0 / 2048 + 1e-6,
                                                     0.004},
                                           RoundTrip{DType::Q8_K, 256, 1.0 / 254 + 1e-6, 0.004},
                                           RoundTrip{DType::Q4_0, 32, 1.0 / 8 + 1.0 / 2048, 0.06},
                                           RoundTrip{DType::MXFP4, 32, 0.5, 0.12},
                                           RoundTrip{DType::Q4_K, 256, 1.5 / 15, 0.03},
                                           RoundTrip{DType::Q5_K, 256, 1.5 / 31, 0.015},
                                           RoundTrip{DType::Q6_K, 256, 1.5 / 32, 0.01}),
                         [](const auto& info) { return std::string(dtype_name(info.param.t)); });

TEST(GetRows, GathersDequantizedRows) {
  const int64_t d = 256, n_rows = 5;
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> ud(-1, 1);
  std::vector<float> table(d * n_rows);
  for (auto& v : table) v = ud(rng);
  for (DType t : {DType::F32, DType::F16, DType::Q4_K, DType::Q6_K, DType::Q8_0, DType::MXFP4}) {
    const size_t rb = *dtype_row_bytes(t, d);
    std::vector<uint8_t> q(rb * n_rows);
    for (int64_t r = 0; r < n_rows; ++r) quantize_row(t, &table[r * d], q.data() + r * rb, d);
    const int32_t ids[3] = {4, 0, 4};
    std::vector<float> out(3 * d), expect(d);
    ASSERT_TRUE(get_rows(t, q.data(), n_rows, d, ids, 3, out.data()));
    for (int j = 0; j < 3; ++j) {
      dequantize_row(t, q.data() + ids[j] * rb, expect.data(), d);
      EXPECT_EQ(0, std::memcmp(expect.data(), &out[j * d], d * sizeof(float))) << dtype_name(t);
    }
    const int32_t bad[1] = {5};
    EXPECT_FALSE(get_rows(t, q.data(), n_rows, d, bad, 1, out.data()));
  }
}

}  // namespace
}  // namespace arc::kernels
