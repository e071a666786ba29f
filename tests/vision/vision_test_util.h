// Helpers shared by the vision tests and the image tests of the server, end to end and under TP:
// reading the fixed images of tests/data/vision, base64, and image requests for both APIs.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace arc::vision::test {

inline std::vector<uint8_t> read_image_file(const std::string& name) {
  const auto p = std::filesystem::path(ARC_TEST_DATA_DIR) / "vision" / name;
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// An independent base64 encoder (RFC 4648 table, '=' padding) for building image requests: the
// oracle of the server's decoder, so none of its code.
inline std::string base64(const std::vector<uint8_t>& in) {
  static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const uint32_t v = (in[i] << 16) | (in[i + 1] << 8) | in[i + 2];
    for (int s : {18, 12, 6, 0}) out.push_back(k[(v >> s) & 63]);
  }
  if (i + 1 == in.size()) {
    const uint32_t v = in[i] << 16;
    out += {k[(v >> 18) & 63], k[(v >> 12) & 63], '=', '='};
  } else if (i + 2 == in.size()) {
    const uint32_t v = (in[i] << 16) | (in[i + 1] << 8);
    out += {k[(v >> 18) & 63], k[(v >> 12) & 63], k[(v >> 6) & 63], '='};
  }
  return out;
}

// A greedy /v1/chat/completions request of `max_tokens`: one user message, the text "look: "
// then the image (`bytes`, declared as `media`) as a base64 data URI.
inline nlohmann::json openai_image_request(const std::vector<uint8_t>& bytes,
                                           const std::string& media, int max_tokens) {
  using nlohmann::json;
  const json parts =
      json::array({{{"type", "text"}, {"text", "look: "}},
                   {{"type", "image_url"},
                    {"image_url", {{"url", "data:" + media + ";base64," + base64(bytes)}}}}});
  return {{"model", "test"},
          {"temperature", 0},
          {"max_tokens", max_tokens},
          {"messages", json::array({{{"role", "user"}, {"content", parts}}})}};
}

// The same prompt as a /v1/messages request: the image as a base64 source block.
inline nlohmann::json anthropic_image_request(const std::vector<uint8_t>& bytes,
                                              const std::string& media, int max_tokens) {
  using nlohmann::json;
  const json parts = json::array(
      {{{"type", "text"}, {"text", "look: "}},
       {{"type", "image"},
        {"source", {{"type", "base64"}, {"media_type", media}, {"data", base64(bytes)}}}}});
  return {{"model", "test"},
          {"temperature", 0},
          {"max_tokens", max_tokens},
          {"messages", json::array({{{"role", "user"}, {"content", parts}}})}};
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
