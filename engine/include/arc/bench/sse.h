// Incremental parser of a text/event-stream body (the Server-Sent Events of the WHATWG HTML
// spec, as OpenAI-compatible servers stream completions): bytes arrive in arbitrary pieces, a
// line ends with LF, CRLF or CR, an empty line ends an event, "data:" lines of one event are
// joined with '\n', lines starting with ':' are comments (keep-alives).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "arc/status.h"

namespace arc::bench {

struct SseEvent {
  std::string event;  // the "event:" field; empty for the default "message"
  std::string data;   // the "data:" lines joined with '\n'
};

class SseParser {
 public:
  // A line longer than this is an error rather than unbounded buffering (a server that never
  // sends a newline must not eat the client's memory).
  static constexpr size_t kMaxLineBytes = 4 << 20;

  // Parses bytes; every event completed by them is appended to out.
  Status feed(std::string_view bytes, std::vector<SseEvent>& out);

  // True while an event has fields but its closing empty line has not arrived; at the end of a
  // stream such an event was cut off.
  bool has_partial_event() const { return has_fields_ || !line_.empty(); }

 private:
  void end_line(std::vector<SseEvent>& out);

  std::string line_;
  bool after_cr_ = false;  // the previous byte was CR: a following LF belongs to that line end
  bool has_fields_ = false;
  bool has_data_ = false;
  SseEvent current_;
};

}  // namespace arc::bench
