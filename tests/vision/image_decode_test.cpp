// Decoding the fixed images of tests/data/vision (written by make_images.py): PNG pixels exactly
// as the formula that wrote them, lossless WebP exactly, JPEG and lossy WebP within a tolerance,
// EXIF orientations 1-8 all upright, alpha flattened onto white.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "arc/vision_image.h"
#include "vision_test_util.h"

namespace arc::vision {
namespace {

using test::pattern;
using test::pattern_alpha;
using test::read_image_file;

Image decode_file(const std::string& name) {
  const auto bytes = read_image_file(name);
  EXPECT_FALSE(bytes.empty()) << name;
  auto r = decode_image(bytes);
  EXPECT_TRUE(r.ok()) << name << ": " << r.status().to_string();
  return r.ok() ? *r : Image{};
}

const uint8_t* px(const Image& img, int x, int y) {
  return &img.rgb[(static_cast<size_t>(y) * img.width + x) * 3];
}

// c over white with alpha a, from the definition (not the decoder's integer form).
int on_white(int c, int a) {
  return static_cast<int>(std::lround((c * a + 255.0 * (255 - a)) / 255.0));
}

TEST(ImageSniff, MagicBytesNotNames) {
  EXPECT_EQ(sniff_image_format(read_image_file("rgb8.png")), ImageFormat::kPng);
  EXPECT_EQ(sniff_image_format(read_image_file("quad.jpg")), ImageFormat::kJpeg);
  EXPECT_EQ(sniff_image_format(read_image_file("rgb8_lossless.webp")), ImageFormat::kWebp);
  const std::vector<uint8_t> gif = {'G', 'I', 'F', '8', '9', 'a', 1, 0, 1, 0};
  EXPECT_EQ(sniff_image_format(gif), ImageFormat::kUnknown);
  EXPECT_EQ(sniff_image_format({}), ImageFormat::kUnknown);
}

TEST(ImageDecode, PngRgb8Exact) {
  Image img = decode_file("rgb8.png");
  ASSERT_EQ(img.width, 7);
  ASSERT_EQ(img.height, 5);
  EXPECT_EQ(img.format, ImageFormat::kPng);
  for (int y = 0; y < 5; ++y)
    for (int x = 0; x < 7; ++x) {
      uint8_t e[3];
      pattern(x, y, e);
      for (int c = 0; c < 3; ++c) ASSERT_EQ(px(img, x, y)[c], e[c]) << x << "," << y << "," << c;
    }
}

TEST(ImageDecode, Png16BitToRgb8) {
  Image img = decode_file("rgb16.png");
  ASSERT_EQ(img.width, 7);
  for (int y = 0; y < 5; ++y)
    for (int x = 0; x < 7; ++x) {
      uint8_t e[3];
      pattern(x, y, e);
      for (int c = 0; c < 3; ++c) ASSERT_EQ(px(img, x, y)[c], e[c]);
    }
}

TEST(ImageDecode, PngGrayToRgb) {
  Image img = decode_file("gray8.png");
  ASSERT_EQ(img.width, 7);
  for (int y = 0; y < 5; ++y)
    for (int x = 0; x < 7; ++x) {
      uint8_t e[3];
      pattern(x, y, e);
      for (int c = 0; c < 3; ++c) ASSERT_EQ(px(img, x, y)[c], e[0]);
    }
}

TEST(ImageDecode, PngAlphaOnWhite) {
  Image img = decode_file("rgba8.png");
  ASSERT_EQ(img.width, 7);
  int seen_clear = 0, seen_opaque = 0;
  for (int y = 0; y < 5; ++y)
    for (int x = 0; x < 7; ++x) {
      uint8_t e[3];
      pattern(x, y, e);
      const int a = pattern_alpha(x, y);
      seen_clear += a == 0;
      seen_opaque += a >= 250;
      for (int c = 0; c < 3; ++c)
        ASSERT_NEAR(px(img, x, y)[c], on_white(e[c], a), 1) << x << "," << y << " a=" << a;
    }
  EXPECT_GT(seen_clear, 0);  // (0,0) is fully transparent: white
  EXPECT_EQ(px(img, 0, 0)[0], 255);
  EXPECT_GT(seen_opaque, 0);
}

TEST(ImageDecode, PngGrayAlphaOnWhite) {
  Image img = decode_file("graya8.png");
  for (int y = 0; y < 5; ++y)
    for (int x = 0; x < 7; ++x) {
      uint8_t e[3];
      pattern(x, y, e);
      for (int c = 0; c < 3; ++c)
        ASSERT_NEAR(px(img, x, y)[c], on_white(e[0], pattern_alpha(x, y)), 1);
    }
}

TEST(ImageDecode, PngPaletteWithTransparency) {
  Image img = decode_file("palette.png");
  const int pal[4][3] = {{255, 0, 0}, {0, 255, 0}, {0, 0, 255}, {10, 20, 30}};
  const int pal_alpha[4] = {255, 255, 255, 128};
  for (int y = 0; y < 5; ++y)
    for (int x = 0; x < 7; ++x) {
      const int i = (x + y) % 4;
      for (int c = 0; c < 3; ++c)
        ASSERT_NEAR(px(img, x, y)[c], on_white(pal[i][c], pal_alpha[i]), 1);
    }
  // Entry 3 at half alpha: 10 over white is about 133.
  EXPECT_NEAR(px(img, 3, 0)[0], 133, 1);
}

TEST(ImageDecode, PngInterlaced) {
  // Adam7, 11x9: every pass has pixels; the RGBA one takes the whole-frame path.
  Image rgb = decode_file("rgb8_interlaced.png");
  Image rgba = decode_file("rgba8_interlaced.png");
  ASSERT_EQ(rgb.width, 11);
  ASSERT_EQ(rgb.height, 9);
  ASSERT_EQ(rgba.width, 11);
  for (int y = 0; y < 9; ++y)
    for (int x = 0; x < 11; ++x) {
      uint8_t e[3];
      pattern(x, y, e);
      for (int c = 0; c < 3; ++c) {
        ASSERT_EQ(px(rgb, x, y)[c], e[c]) << x << "," << y;
        ASSERT_NEAR(px(rgba, x, y)[c], on_white(e[c], pattern_alpha(x, y)), 1) << x << "," << y;
      }
    }
}

TEST(ImageDecode, WebpLosslessExact) {
  Image img = decode_file("rgb8_lossless.webp");
  ASSERT_EQ(img.width, 7);
  ASSERT_EQ(img.height, 5);
  EXPECT_EQ(img.format, ImageFormat::kWebp);
  for (int y = 0; y < 5; ++y)
    for (int x = 0; x < 7; ++x) {
      uint8_t e[3];
      pattern(x, y, e);
      for (int c = 0; c < 3; ++c) ASSERT_EQ(px(img, x, y)[c], e[c]);
    }
}

TEST(ImageDecode, WebpAlphaOnWhite) {
  Image img = decode_file("rgba8_lossless.webp");
  ASSERT_EQ(img.width, 7);
  for (int y = 0; y < 5; ++y)
    for (int x = 0; x < 7; ++x) {
      uint8_t e[3];
      pattern(x, y, e);
      for (int c = 0; c < 3; ++c)
        ASSERT_NEAR(px(img, x, y)[c], on_white(e[c], pattern_alpha(x, y)), 1);
    }
}

// The four flat quadrants of make_images.py, checked at each quadrant's centre region.
const int kQuad[4][3] = {{200, 30, 40}, {30, 180, 60}, {40, 60, 220}, {230, 220, 50}};

void expect_quadrants(const Image& img, int tol, const std::string& name, bool gray = false) {
  ASSERT_EQ(img.width, 32) << name;
  ASSERT_EQ(img.height, 16) << name;
  for (int q = 0; q < 4; ++q) {
    const int x0 = (q % 2) * 16, y0 = (q / 2) * 8;
    for (int y = y0 + 2; y < y0 + 6; ++y)
      for (int x = x0 + 4; x < x0 + 12; ++x) {
        const uint8_t* p = px(img, x, y);
        if (gray) {
          const double luma = 0.299 * kQuad[q][0] + 0.587 * kQuad[q][1] + 0.114 * kQuad[q][2];
          for (int c = 0; c < 3; ++c) ASSERT_NEAR(p[c], luma, tol) << name << " q" << q;
        } else {
          for (int c = 0; c < 3; ++c)
            ASSERT_NEAR(p[c], kQuad[q][c], tol) << name << " q" << q << " at " << x << "," << y;
        }
      }
  }
}

TEST(ImageDecode, JpegWithinTolerance) {
  expect_quadrants(decode_file("quad.jpg"), 4, "quad.jpg");
  expect_quadrants(decode_file("quad_progressive.jpg"), 4, "quad_progressive.jpg");
  expect_quadrants(decode_file("quad_gray.jpg"), 4, "quad_gray.jpg", /*gray=*/true);
}

TEST(ImageDecode, JpegCmykAdobe) {
  // make_cmyk_jpeg.c stores each quadrant's (R, G, B) as inverted C, M, Y with no black ink
  // (K = 255), except the bottom-right quadrant, full black ink (K = 0): it decodes black.
  Image img = decode_file("cmyk.jpg");
  ASSERT_EQ(img.width, 32);
  ASSERT_EQ(img.height, 16);
  for (int q = 0; q < 4; ++q) {
    const uint8_t* p = px(img, (q % 2) * 16 + 8, (q / 2) * 8 + 4);
    for (int c = 0; c < 3; ++c) EXPECT_NEAR(p[c], q == 3 ? 0 : kQuad[q][c], 4) << "q" << q;
  }
}

TEST(ImageDecode, WebpLossyWithinTolerance) {
  expect_quadrants(decode_file("quad_lossy.webp"), 12, "quad_lossy.webp");
}

// JPEG APP1, PNG eXIf and WebP EXIF chunks (both byte orders in each format).
TEST(ImageDecode, ExifOrientationsAllUpright) {
  for (const char* ext : {".jpg", ".png", ".webp"})
    for (int o = 1; o <= 8; ++o) {
      const std::string name = "exif_orientation_" + std::to_string(o) + ext;
      const auto bytes = read_image_file(name);
      auto info = probe_image(bytes);
      ASSERT_TRUE(info.ok()) << name;
      EXPECT_EQ(info->orientation, o) << name;
      // As stored: orientations 5-8 keep the picture transposed (16 wide, 32 high).
      EXPECT_EQ(info->width, o >= 5 ? 16 : 32) << name;
      expect_quadrants(decode_file(name), 4, name);
    }
}

TEST(ImageProbe, HeaderOnly) {
  auto png = probe_image(read_image_file("rgb8.png"));
  ASSERT_TRUE(png.ok());
  EXPECT_EQ(png->format, ImageFormat::kPng);
  EXPECT_EQ(png->width, 7);
  EXPECT_EQ(png->height, 5);
  auto webp = probe_image(read_image_file("quad_lossy.webp"));
  ASSERT_TRUE(webp.ok());
  EXPECT_EQ(webp->width, 32);
  EXPECT_EQ(webp->height, 16);
}

}  // namespace
}  // namespace arc::vision
