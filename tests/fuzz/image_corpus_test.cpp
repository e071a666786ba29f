// Regression run of the image fuzzer's corpus in the default build: every fixed image of
// tests/data/vision and every input in tests/data/image_corpus (inputs the fuzzer once found
// interesting or crashing) must decode or fail with a message, and what decodes must preprocess.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "arc/vision_image.h"

namespace arc::vision {
namespace {

std::vector<uint8_t> read_all(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

TEST(ImageCorpus, EveryInputDecodesOrFailsCleanly) {
  int n = 0;
  for (const char* sub : {"vision", "image_corpus"}) {
    const auto dir = std::filesystem::path(ARC_TEST_DATA_DIR) / sub;
    ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      const std::string name = entry.path().filename().string();
      if (name.ends_with(".py") || name.ends_with(".md") || name.ends_with(".c")) continue;
      const std::vector<uint8_t> bytes = read_all(entry.path());  // exact size, for ASan
      ++n;
      auto img = decode_image(bytes);
      if (!img.ok()) {
        EXPECT_FALSE(img.status().message().empty()) << name;
        continue;
      }
      ASSERT_EQ(img->rgb.size(), static_cast<size_t>(img->width) * img->height * 3) << name;
      PreprocessConfig cfg;
      cfg.min_pixels = 32 * 32;
      cfg.max_pixels = 128 * 128;
      auto g = preprocess(*img, cfg);
      if (g.ok()) {
        EXPECT_EQ(g->pixels.size(), static_cast<size_t>(g->n_patches()) * g->patch_dim) << name;
      }
    }
  }
  EXPECT_GE(n, 20);
}

}  // namespace
}  // namespace arc::vision
