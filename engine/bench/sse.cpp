#include "arc/bench/sse.h"

namespace arc::bench {

Status SseParser::feed(std::string_view bytes, std::vector<SseEvent>& out) {
  for (char c : bytes) {
    if (after_cr_) {
      after_cr_ = false;
      if (c == '\n') continue;
    }
    if (c == '\r' || c == '\n') {
      after_cr_ = c == '\r';
      end_line(out);
      continue;
    }
    if (line_.size() >= kMaxLineBytes) {
      return data_loss("the server sent an event-stream line longer than " +
                       std::to_string(kMaxLineBytes) + " bytes; this is not a valid SSE stream");
    }
    line_.push_back(c);
  }
  return ok_status();
}

void SseParser::end_line(std::vector<SseEvent>& out) {
  if (line_.empty()) {
    // An empty line dispatches the event; one without data is dropped, as the spec says.
    if (has_data_) out.push_back(std::move(current_));
    current_ = {};
    has_fields_ = has_data_ = false;
    return;
  }
  if (line_[0] == ':') {  // comment
    line_.clear();
    return;
  }
  std::string_view line(line_);
  std::string_view field = line, value;
  if (auto colon = line.find(':'); colon != std::string_view::npos) {
    field = line.substr(0, colon);
    value = line.substr(colon + 1);
    if (!value.empty() && value[0] == ' ') value.remove_prefix(1);
  }
  if (field == "data") {
    if (has_data_) current_.data.push_back('\n');
    current_.data.append(value);
    has_data_ = true;
    has_fields_ = true;
  } else if (field == "event") {
    current_.event.assign(value);
    has_fields_ = true;
  }
  // "id", "retry" and unknown fields are ignored, as the spec says.
  line_.clear();
}

}  // namespace arc::bench
