// UTF-8 helpers, the GPT-2 byte <-> character table and NFC (utf8proc).
#include <utf8proc.h>

#include <array>
#include <cstdlib>
#include <memory>

#include <fmt/format.h>

#include "tokenizer_impl.h"

namespace arc {

namespace {

struct ByteLevelTable {
  std::array<std::string, 256> chars;
  std::array<uint32_t, 256> code_points{};
  ByteLevelTable() {
    // Printable Latin-1 bytes stand for themselves; the rest are moved to U+0100 upwards, in
    // byte order (GPT-2's bytes_to_unicode).
    uint32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      bool keep = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
      code_points[b] = keep ? uint32_t(b) : next++;
      append_utf8(code_points[b], chars[b]);
    }
  }
};

const ByteLevelTable& byte_level_table() {
  static const ByteLevelTable t;
  return t;
}

}  // namespace

const std::string& byte_level_char(uint8_t byte) {
  return byte_level_table().chars[byte];
}

int byte_level_byte(uint32_t cp) {
  if (cp >= 33 && cp <= 126) return int(cp);
  if ((cp >= 161 && cp <= 172) || (cp >= 174 && cp <= 255)) return int(cp);
  if (cp >= 256 && cp < 256 + 68) {
    // The moved bytes, in order: 0-32, 127-160, 173.
    uint32_t k = cp - 256;
    if (k <= 32) return int(k);
    if (k <= 32 + 34) return int(127 + (k - 33));
    return 173;
  }
  return -1;
}

void append_utf8(uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out.push_back(char(cp));
  } else if (cp < 0x800) {
    out.push_back(char(0xC0 | (cp >> 6)));
    out.push_back(char(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(char(0xE0 | (cp >> 12)));
    out.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(char(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(char(0xF0 | (cp >> 18)));
    out.push_back(char(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(char(0x80 | (cp & 0x3F)));
  }
}

uint32_t next_code_point(std::string_view s, size_t& i) {
  auto b = [&](size_t k) { return uint32_t(uint8_t(s[k])); };
  uint32_t c = b(i);
  size_t len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
  if (c < 0x80) {
    i += 1;
    return c;
  }
  if (i + len > s.size()) {
    // Vocabulary strings from a GGUF file are not validated: never read past the end.
    i += 1;
    return 0xFFFD;
  }
  uint32_t cp;
  if (len == 2) {
    cp = ((c & 0x1F) << 6) | (b(i + 1) & 0x3F);
  } else if (len == 3) {
    cp = ((c & 0x0F) << 12) | ((b(i + 1) & 0x3F) << 6) | (b(i + 2) & 0x3F);
  } else {
    cp = ((c & 0x07) << 18) | ((b(i + 1) & 0x3F) << 12) | ((b(i + 2) & 0x3F) << 6) |
         (b(i + 3) & 0x3F);
  }
  i += len;
  return cp;
}

namespace {

// Length of the valid UTF-8 sequence at s[i]: > 0 when complete and valid; 0 when the input ends
// inside a sequence that could still become valid; -k when the first k bytes are a maximal
// invalid subpart (to be replaced by one U+FFFD).
int utf8_step(std::string_view s, size_t i) {
  auto b = [&](size_t k) { return uint8_t(s[k]); };
  uint8_t c = b(i);
  if (c < 0x80) return 1;
  int need;
  uint8_t lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    need = 1;
  } else if (c >= 0xE0 && c <= 0xEF) {
    need = 2;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    need = 3;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return -1;
  }
  for (int k = 1; k <= need; ++k) {
    if (i + k >= s.size()) return 0;
    uint8_t x = b(i + k);
    if (x < lo || x > hi) return -k;
    lo = 0x80;
    hi = 0xBF;
  }
  return need + 1;
}

}  // namespace

size_t find_invalid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    // ASCII fast path.
    if (uint8_t(s[i]) < 0x80) {
      ++i;
      continue;
    }
    int n = utf8_step(s, i);
    if (n <= 0) return i;
    i += size_t(n);
  }
  return std::string_view::npos;
}

size_t utf8_sanitize(std::string_view in, bool final, std::string& out) {
  size_t i = 0;
  while (i < in.size()) {
    int n = utf8_step(in, i);
    if (n > 0) {
      out.append(in.data() + i, size_t(n));
      i += size_t(n);
    } else if (n < 0) {
      out.append("\xEF\xBF\xBD");
      i += size_t(-n);
    } else if (final) {
      out.append("\xEF\xBF\xBD");  // a truncated sequence is one maximal subpart
      i = in.size();
    } else {
      break;  // may still complete
    }
  }
  return i;
}

Result<std::string> nfc(std::string_view s) {
  // Pure ASCII is already NFC; skip the library call for the common case.
  bool ascii = true;
  for (char c : s) {
    if (uint8_t(c) >= 0x80) {
      ascii = false;
      break;
    }
  }
  if (ascii) return std::string(s);
  utf8proc_uint8_t* res = nullptr;
  utf8proc_ssize_t n =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(s.data()), utf8proc_ssize_t(s.size()),
                   &res, utf8proc_option_t(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  if (n < 0) {
    return invalid_argument(fmt::format("NFC normalisation failed: {}", utf8proc_errmsg(n)));
  }
  std::string out(reinterpret_cast<const char*>(res), size_t(n));
  std::free(res);
  return out;
}

}  // namespace arc
