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

}  // namespace arc
