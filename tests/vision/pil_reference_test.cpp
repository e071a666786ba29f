// arc::vision against Pillow (the library the Hugging Face Qwen-VL processor resizes with):
// JPEG decoding (same libjpeg-turbo, accurate IDCT) and BICUBIC resizing, up and down, from the
// raw outputs make_pil_reference.py committed. Within one level of 8 bits.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>

#include "arc/vision_image.h"
#include "vision_test_util.h"

namespace arc::vision {
namespace {

using test::read_image_file;

int max_abs_diff(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  int m = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

TEST(PilReference, JpegDecodeMatches) {
  for (const char* name :
       {"quad", "exif_orientation_6", "exif_orientation_7", "quad_progressive"}) {
    auto img = decode_image(read_image_file(std::string(name) + ".jpg"));
    ASSERT_TRUE(img.ok()) << name;
    const auto ref = read_image_file(std::string("pil_decode_") + name + ".rgb");
    ASSERT_EQ(img->rgb.size(), ref.size()) << name;
    EXPECT_LE(max_abs_diff(img->rgb, ref), 1) << name;
  }
}

TEST(PilReference, BicubicResizeMatches) {
  struct Case {
    const char* file;
    const char* stem;
    int w, h;
  };
  for (const Case& c : {Case{"rgb8.png", "rgb8", 160, 112}, Case{"rgb8.png", "rgb8", 3, 2},
                        Case{"busy.png", "busy", 32, 64}, Case{"busy.png", "busy", 150, 90},
                        Case{"busy.png", "busy", 96, 32}, Case{"quad.jpg", "quad", 64, 32},
                        Case{"quad.jpg", "quad", 20, 9}}) {
    const std::string ref_name = std::string("pil_") + c.stem + "_" + std::to_string(c.w) + "x" +
                                 std::to_string(c.h) + ".rgb";
    auto img = decode_image(read_image_file(c.file));
    ASSERT_TRUE(img.ok()) << c.file;
    const Image out = resize_bicubic(*img, c.w, c.h);
    const auto ref = read_image_file(ref_name);
    ASSERT_EQ(out.rgb.size(), ref.size()) << ref_name;
    EXPECT_LE(max_abs_diff(out.rgb, ref), 1) << ref_name;
  }
}

}  // namespace
}  // namespace arc::vision

namespace arc::vision {
namespace {

TEST(PilReference, PreprocessMatchesNumpyPipeline) {
  // make_pil_reference.py: PIL resize + the HF processor's reshape/transpose in numpy.
  auto img = decode_image(test::read_image_file("busy.png"));
  ASSERT_TRUE(img.ok());
  PreprocessConfig cfg;
  cfg.min_pixels = 0;
  cfg.max_pixels = 4096;
  auto g = preprocess(*img, cfg);
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  EXPECT_EQ(g->h, 2);
  EXPECT_EQ(g->w, 4);
  const auto raw = test::read_image_file("qwen_busy_32x64.f32");
  ASSERT_EQ(raw.size(), g->pixels.size() * 4);
  std::vector<float> ref(g->pixels.size());
  std::memcpy(ref.data(), raw.data(), raw.size());  // little-endian f32, as written
  float worst = 0;
  for (size_t i = 0; i < ref.size(); ++i) worst = std::max(worst, std::fabs(ref[i] - g->pixels[i]));
  // One 8-bit level is 2/255 after normalisation.
  EXPECT_LE(worst, 2.0f / 255.0f + 1e-5f);
}

}  // namespace
}  // namespace arc::vision
