// Helpers shared by the vision tests: reading the fixed images of tests/data/vision.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace arc::vision::test {

inline std::vector<uint8_t> read_image_file(const std::string& name) {
  const auto p = std::filesystem::path(ARC_TEST_DATA_DIR) / "vision" / name;
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// The pattern tests/data/vision/make_images.py writes (an independent copy of its formula).
inline void pattern(int x, int y, uint8_t out[3]) {
  out[0] = static_cast<uint8_t>((x * 37 + y * 11) % 256);
  out[1] = static_cast<uint8_t>((x * 5 + y * 73) % 256);
  out[2] = static_cast<uint8_t>((x * y * 3 + 7) % 256);
}
inline int pattern_alpha(int x, int y) {
  return (x * 40 + y * 90) % 256;
}

}  // namespace arc::vision::test
