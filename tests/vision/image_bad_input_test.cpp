// Hostile and broken images: every prefix of every fixed image (truncation), corrupted bytes,
// decompression bombs (huge dimensions in a tiny file), zero sizes, limits, unsupported formats.
// Each must give an INVALID_ARGUMENT (or RESOURCE_EXHAUSTED) with a reason; nothing may crash.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "arc/vision_image.h"
#include "vision_test_util.h"

namespace arc::vision {
namespace {

using test::read_image_file;
using ::testing::HasSubstr;

const char* kGood[] = {"rgb8.png",
                       "rgba8.png",
                       "gray8.png",
                       "graya8.png",
                       "rgb16.png",
                       "palette.png",
                       "rgb8_interlaced.png",
                       "rgba8_interlaced.png",
                       "quad.jpg",
                       "quad_progressive.jpg",
                       "quad_gray.jpg",
                       "cmyk.jpg",
                       "exif_orientation_6.jpg",
                       "rgb8_lossless.webp",
                       "rgba8_lossless.webp",
                       "quad_lossy.webp"};

TEST(ImageBadInput, EveryTruncationIsAnError) {
  for (const char* name : kGood) {
    const auto bytes = read_image_file(name);
    ASSERT_TRUE(decode_image(bytes).ok()) << name;
    for (size_t n = 0; n < bytes.size(); ++n) {
      // An exact-size heap copy, so over-reads show under ASan.
      const std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + n);
      auto r = decode_image(cut);
      ASSERT_FALSE(r.ok()) << name << " cut to " << n << " bytes decoded";
      EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << name << " " << n;
      EXPECT_FALSE(r.status().message().empty());
    }
  }
}

TEST(ImageBadInput, TruncationSaysSo) {
  const auto png = read_image_file("rgb8.png");
  auto r = decode_image(std::vector<uint8_t>(png.begin(), png.begin() + 60));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("PNG"));
  EXPECT_THAT(r.status().message(), HasSubstr("truncated"));
  const auto jpg = read_image_file("quad.jpg");
  r = decode_image(std::vector<uint8_t>(jpg.begin(), jpg.begin() + jpg.size() / 2 + 20));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("JPEG"));
  const auto webp = read_image_file("quad_lossy.webp");
  r = decode_image(std::vector<uint8_t>(webp.begin(), webp.begin() + webp.size() - 10));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("WebP"));
}

TEST(ImageBadInput, CorruptBytesNeverCrash) {
  std::mt19937 rng(1234);
  for (const char* name : kGood) {
    const auto bytes = read_image_file(name);
    for (int trial = 0; trial < 200; ++trial) {
      std::vector<uint8_t> b = bytes;
      const int flips = 1 + static_cast<int>(rng() % 4);
      for (int i = 0; i < flips; ++i) b[rng() % b.size()] ^= static_cast<uint8_t>(1 + rng() % 255);
      auto r = decode_image(b);
      if (r.ok()) {
        EXPECT_EQ(r->rgb.size(), static_cast<size_t>(r->width) * r->height * 3) << name;
      } else {
        EXPECT_FALSE(r.status().message().empty()) << name;
      }
    }
  }
}

TEST(ImageBadInput, BombsRefusedBeforeDecoding) {
  for (const char* name : {"bomb.png", "bomb.jpg", "bomb.webp"}) {
    const auto bytes = read_image_file(name);
    ASSERT_LT(bytes.size(), 1000u) << name;
    auto info = probe_image(bytes);
    ASSERT_FALSE(info.ok()) << name;
    EXPECT_THAT(info.status().message(), HasSubstr("limit")) << name;
    auto r = decode_image(bytes);
    ASSERT_FALSE(r.ok()) << name;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(r.status().message(), HasSubstr("limit")) << r.status().message();
  }
}

TEST(ImageBadInput, ProgressiveScanBombRefused) {
  // quad_progressive.jpg with its last scan repeated 400 times: a 5 KB file that would make the
  // decoder pass over the image hundreds of times.
  auto r = decode_image(read_image_file("many_scans.jpg"));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("progressive scans"));
  // The original, with its 10 scans, decodes.
  EXPECT_TRUE(decode_image(read_image_file("quad_progressive.jpg")).ok());
}

TEST(ImageBadInput, Limits) {
  const auto png = read_image_file("rgb8.png");  // 7x5 = 35 pixels
  DecodeLimits l;
  l.max_pixels = 34;
  auto r = decode_image(png, l);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("7x5"));
  l = DecodeLimits{};
  l.max_side = 6;
  r = decode_image(png, l);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("pixels per side"));
  l = DecodeLimits{};
  l.max_bytes = png.size() - 1;
  r = decode_image(png, l);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("bytes"));
  l.max_bytes = png.size();
  EXPECT_TRUE(decode_image(png, l).ok());
}

TEST(ImageBadInput, ZeroSizes) {
  EXPECT_THAT(decode_image({}).status().message(), HasSubstr("empty"));
  // rgb8.png with its IHDR width set to 0 (and the CRC left stale: refused either way).
  auto png = read_image_file("rgb8.png");
  png[16] = png[17] = png[18] = png[19] = 0;
  EXPECT_FALSE(decode_image(png).ok());
  // quad.jpg with its SOF0 height set to 0.
  auto jpg = read_image_file("quad.jpg");
  for (size_t i = 0; i + 8 < jpg.size(); ++i) {
    if (jpg[i] == 0xFF && jpg[i + 1] == 0xC0) {
      jpg[i + 5] = jpg[i + 6] = 0;
      break;
    }
  }
  auto r = decode_image(jpg);
  EXPECT_FALSE(r.ok());
}

TEST(ImageBadInput, UnsupportedFormatsNamed) {
  const std::vector<uint8_t> gif = {'G', 'I', 'F', '8', '9', 'a', 1, 0, 1, 0, 0, 0, 0};
  auto r = decode_image(gif);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("GIF"));
  EXPECT_THAT(r.status().message(), HasSubstr("PNG, JPEG or WebP"));
  auto anim = decode_image(read_image_file("animated.webp"));
  ASSERT_FALSE(anim.ok());
  EXPECT_THAT(anim.status().message(), HasSubstr("animated"));
  const std::string text = "hello, this is not an image";
  r = decode_image(std::vector<uint8_t>(text.begin(), text.end()));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("unsupported image format"));
}

}  // namespace
}  // namespace arc::vision
