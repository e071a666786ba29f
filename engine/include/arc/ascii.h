// ASCII case folding for protocol tokens, media types, file suffixes and enum names. Unlike
// std::tolower it ignores the C locale and never touches bytes >= 0x80 (UTF-8 stays intact).
#pragma once

#include <string>
#include <string_view>

namespace arc {

inline char ascii_lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c;
}

inline std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = ascii_lower(c);
  return out;
}

}  // namespace arc
