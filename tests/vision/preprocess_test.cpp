// Qwen-VL preprocessing: smart_resize against values worked out by hand from the formula
// (factor 32 = patch 16 x merge 2, pixels within [65536, 16777216], Python's round-half-even),
// the bicubic kernel against hand-computed weights, normalisation and the patch order at pixels
// whose patch and offset were located by hand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "arc/vision_image.h"
#include "vision_test_util.h"

namespace arc::vision {
namespace {

ResizedSize sr(int h, int w, const PreprocessConfig& cfg = {}) {
  auto r = smart_resize(h, w, cfg);
  EXPECT_TRUE(r.ok()) << h << "x" << w << ": " << r.status().to_string();
  return r.ok() ? *r : ResizedSize{};
}

TEST(SmartResize, HandComputedSizes) {
  // 1920x1080: 1080/32 = 33.75 -> 34 -> 1088; 1920/32 = 60 -> 1920; 2,088,960 px is in range.
  auto a = sr(1080, 1920);
  EXPECT_EQ(a.height, 1088);
  EXPECT_EQ(a.width, 1920);
  // 640x480: already multiples of 32, 307,200 px.
  auto b = sr(480, 640);
  EXPECT_EQ(b.height, 480);
  EXPECT_EQ(b.width, 640);
  // 7x5 (tiny): rounds to 32x32 = 1024 < 65536; beta = sqrt(65536 / 35) = 43.27;
  // ceil(5 * 43.27 / 32) = ceil(6.76) = 7 -> 224; ceil(7 * 43.27 / 32) = ceil(9.47) = 10 -> 320.
  auto c = sr(5, 7);
  EXPECT_EQ(c.height, 224);
  EXPECT_EQ(c.width, 320);
  // 5000x5000: 4992^2 > 16777216; beta = 5000 / 4096 exactly; floor(4096 / 32) * 32 = 4096.
  auto d = sr(5000, 5000);
  EXPECT_EQ(d.height, 4096);
  EXPECT_EQ(d.width, 4096);
  // 3000x40: 40/32 = 1.25 -> 32; 3000/32 = 93.75 -> 94 -> 3008; 96,256 px is in range.
  auto e = sr(40, 3000);
  EXPECT_EQ(e.height, 32);
  EXPECT_EQ(e.width, 3008);
}

TEST(SmartResize, RoundsHalfToEvenLikePython) {
  PreprocessConfig cfg;
  cfg.min_pixels = 0;
  // 80/32 = 2.5 -> 2 (not 3) -> 64; 112/32 = 3.5 -> 4 -> 128.
  EXPECT_EQ(sr(80, 800, cfg).height, 64);
  EXPECT_EQ(sr(112, 800, cfg).height, 128);
}

TEST(SmartResize, GridSizesAndTokens) {
  // Grid in patches = size / 16; tokens after the 2x2 merge = grid / 4.
  Image img;
  img.width = 1920;
  img.height = 1080;
  img.rgb.assign(static_cast<size_t>(1920) * 1080 * 3, 128);
  auto g = preprocess(img);
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  EXPECT_EQ(g->t, 1);
  EXPECT_EQ(g->h, 68);   // 1088 / 16
  EXPECT_EQ(g->w, 120);  // 1920 / 16
  EXPECT_EQ(g->patch_dim, 3 * 2 * 16 * 16);
  EXPECT_EQ(g->n_patches(), 68 * 120);
  EXPECT_EQ(g->pixels.size(), static_cast<size_t>(68 * 120) * 1536);
  EXPECT_EQ(g->n_patches() / 4, 2040);
}

TEST(SmartResize, Refusals) {
  EXPECT_FALSE(smart_resize(0, 10).ok());
  EXPECT_FALSE(smart_resize(10, -1).ok());
  auto r = smart_resize(1, 300);  // aspect ratio 300 > 200
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), ::testing::HasSubstr("aspect ratio"));
  EXPECT_TRUE(smart_resize(1, 200).ok());
}

TEST(ResizeBicubic, HandComputedDownscale) {
  // [0, 0, 255, 255] -> 2 pixels. Output 0: centre 1.0, scale 2, kernel widened x2; taps at
  // x = 0..3 weigh cubic((x - 0.5) / 2) = cubic(-0.25, 0.25, 0.75, 1.25)
  // = 0.8671875, 0.8671875, 0.2265625, -0.0703125 (sum 1.890625);
  // value = 255 * (0.2265625 - 0.0703125) / 1.890625 = 21.07 -> 21; output 1 by symmetry 234.
  Image img;
  img.width = 4;
  img.height = 1;
  for (int v : {0, 0, 255, 255})
    for (int c = 0; c < 3; ++c) img.rgb.push_back(static_cast<uint8_t>(v));
  Image out = resize_bicubic(img, 2, 1);
  ASSERT_EQ(out.rgb.size(), 6u);
  EXPECT_EQ(out.rgb[0], 21);
  EXPECT_EQ(out.rgb[3], 234);
}

TEST(ResizeBicubic, ConstantStaysConstant) {
  Image img;
  img.width = 13;
  img.height = 7;
  img.rgb.assign(13 * 7 * 3, 77);
  for (auto [w, h] : {std::pair{32, 32}, std::pair{5, 3}, std::pair{64, 7}}) {
    Image out = resize_bicubic(img, w, h);
    ASSERT_EQ(out.rgb.size(), static_cast<size_t>(w) * h * 3);
    for (uint8_t v : out.rgb) ASSERT_EQ(v, 77);
  }
}

// A 64x32 image (no resize with min_pixels 0: both sides are multiples of 32) whose pixel
// values encode their position, so each patch entry can be traced back.
Image positional_image() {
  Image img;
  img.width = 64;
  img.height = 32;
  img.rgb.resize(64 * 32 * 3);
  for (int y = 0; y < 32; ++y)
    for (int x = 0; x < 64; ++x) {
      uint8_t* p = &img.rgb[(y * 64 + x) * 3];
      p[0] = static_cast<uint8_t>(x * 4);
      p[1] = static_cast<uint8_t>(y * 8);
      p[2] = static_cast<uint8_t>((x + y) % 256);
    }
  return img;
}

float norm(int v) {
  return (v / 255.0f - 0.5f) / 0.5f;
}

TEST(Preprocess, PatchOrderAndNormalisation) {
  PreprocessConfig cfg;
  cfg.min_pixels = 0;
  auto g = preprocess(positional_image(), cfg);
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  ASSERT_EQ(g->h, 2);
  ASSERT_EQ(g->w, 4);
  const int D = g->patch_dim;  // 1536
  auto at = [&](int patch, int offset) { return g->pixels[patch * D + offset]; };
  // Pixel (x=20, y=3): patch column 1, row 0 -> merge block 0, inside it (0, 1) -> patch 1;
  // inside the patch px = 4, py = 3. Channel 1 (G = y * 8 = 24), frame 0:
  // ((1 * 2 + 0) * 16 + 3) * 16 + 4 = 564; frame 1: ((1 * 2 + 1) * 16 + 3) * 16 + 4 = 820.
  EXPECT_NEAR(at(1, 564), norm(24), 1e-6);
  EXPECT_NEAR(at(1, 820), norm(24), 1e-6);
  // Channel 0 of the same pixel (R = 80): (0 * 16 + 3) * 16 + 4 = 52.
  EXPECT_NEAR(at(1, 52), norm(80), 1e-6);
  // Pixel (x=40, y=20): patch column 2, row 1 -> merge block 1 (columns 2-3), inside it (1, 0)
  // -> patch 4 + 2 = 6; px = 8, py = 4. Channel 0 (R = 160): (0 * 16 + 4) * 16 + 8 = 72.
  EXPECT_NEAR(at(6, 72), norm(160), 1e-6);
  // Channel 2 (B = 60), frame 1: ((2 * 2 + 1) * 16 + 4) * 16 + 8 = 1352.
  EXPECT_NEAR(at(6, 1352), norm(60), 1e-6);
  // Pixel (x=63, y=31), the last: patch 7, px = py = 15, channel 2 frame 1 = the last entry.
  EXPECT_NEAR(at(7, D - 1), norm((63 + 31) % 256), 1e-6);
  // Normalisation ends: 0 -> -1, 255 -> +1.
  EXPECT_FLOAT_EQ(norm(0), -1.0f);
  EXPECT_NEAR(at(0, 0), -1.0f, 1e-6);  // R of (0, 0) is 0
}

TEST(Preprocess, EveryEntryTracesBackToItsPixel) {
  // The HF processor's reshape (t, T, C, gh/m, m, p, gw/m, m, p) and transpose to
  // (t, gh/m, gw/m, m, m, C, T, p, p), written as an index walk over the output.
  PreprocessConfig cfg;
  cfg.min_pixels = 0;
  const Image img = positional_image();
  auto g = preprocess(img, cfg);
  ASSERT_TRUE(g.ok());
  const int p = 16, m = 2, T = 2;
  size_t i = 0;
  for (int bh = 0; bh < g->h / m; ++bh)
    for (int bw = 0; bw < g->w / m; ++bw)
      for (int mh = 0; mh < m; ++mh)
        for (int mw = 0; mw < m; ++mw)
          for (int c = 0; c < 3; ++c)
            for (int t = 0; t < T; ++t)
              for (int py = 0; py < p; ++py)
                for (int px = 0; px < p; ++px, ++i) {
                  const int y = (bh * m + mh) * p + py, x = (bw * m + mw) * p + px;
                  ASSERT_NEAR(g->pixels[i], norm(img.rgb[(y * 64 + x) * 3 + c]), 1e-6)
                      << "entry " << i;
                }
  EXPECT_EQ(i, g->pixels.size());
}

TEST(Preprocess, DecodedFileEndToEnd) {
  // The 7x5 PNG grows to 320x224 (see HandComputedSizes): a 20x14 grid, 70 merged tokens.
  const auto bytes = test::read_image_file("rgb8.png");
  auto img = decode_image(bytes);
  ASSERT_TRUE(img.ok());
  auto g = preprocess(*img);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->h, 14);
  EXPECT_EQ(g->w, 20);
  EXPECT_EQ(g->n_patches() / 4, 70);
  for (float v : g->pixels) {
    ASSERT_GE(v, -1.0f);
    ASSERT_LE(v, 1.0f);
  }
}

TEST(Preprocess, Qwen2VlConfig) {
  // Patch 14 (factor 28): 640x480 -> 480/28 = 17.14 -> 476, 640/28 = 22.86 -> 644;
  // 306,544 px within Qwen2-VL's [3136, 12845056].
  PreprocessConfig cfg;
  cfg.patch_size = 14;
  cfg.min_pixels = 3136;
  cfg.max_pixels = 12845056;
  auto s = sr(480, 640, cfg);
  EXPECT_EQ(s.height, 476);
  EXPECT_EQ(s.width, 644);
}

}  // namespace
}  // namespace arc::vision
