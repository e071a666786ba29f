// Streaming detokenization: text out as soon as characters are complete, never half of one.
#include "arc/tokenizer.h"

namespace arc {

StreamingDetokenizer::StreamingDetokenizer(const Tokenizer& tokenizer, bool skip_special)
    : tokenizer_(&tokenizer), skip_special_(skip_special) {}

std::string StreamingDetokenizer::feed(TokenId id) {
  if (skip_special_ && tokenizer_->is_special(id)) return {};
  std::string_view b = tokenizer_->token_bytes(id);
  if (b.empty()) return {};
  if (at_start_) {
    at_start_ = false;
    // SentencePiece puts ▁ before the first word; the decoder takes its space away again.
    if (tokenizer_->strips_leading_space() && b.front() == ' ') b.remove_prefix(1);
  }
  pending_.append(b);
  std::string out;
  size_t used = utf8_sanitize(pending_, /*final=*/false, out);
  pending_.erase(0, used);
  return out;
}

std::string StreamingDetokenizer::flush() {
  std::string out;
  utf8_sanitize(pending_, /*final=*/true, out);
  reset();
  return out;
}

void StreamingDetokenizer::reset() {
  pending_.clear();
  at_start_ = true;
}

std::string escape_token_text(std::string_view bytes) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  size_t i = 0;
  while (i < bytes.size()) {
    unsigned char c = static_cast<unsigned char>(bytes[i]);
    if (c >= 0x80) {
      std::string one;
      size_t n = utf8_sanitize(bytes.substr(i, 4), /*final=*/false, one);
      // Only a complete, valid first character is shown as itself.
      if (n > 0 && one.rfind("\xEF\xBF\xBD", 0) != 0) {
        size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
        out.append(bytes.substr(i, len));
        i += len;
        continue;
      }
    }
    switch (c) {
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      default:
        if (c < 0x20 || c >= 0x7F) {
          out += "\\x";
          out += hex[c >> 4];
          out += hex[c & 15];
        } else {
          out += char(c);
        }
    }
    ++i;
  }
  return out;
}

}  // namespace arc
