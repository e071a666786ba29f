// libFuzzer target for the transport: request-head parser, browser policy and chunked decoder.
// Built only with -DARC_BUILD_FUZZ=ON and clang (see tests/server/CMakeLists.txt).
#include <algorithm>
#include <cstdint>
#include <string>

#include "http_head.h"
#include "http_policy.h"

using namespace arc::server;  // NOLINT: a fuzz entry point only

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  HeadLimits l;
  l.max_body_bytes = 1 << 16;
  size_t end = find_head_end(in, size % 7);
  RequestHead h;
  std::string_view head = end == std::string_view::npos ? in : in.substr(0, end);
  if (!parse_request_head(head, l, &h)) {
    BrowserPolicy p;
    p.bound_host = "127.0.0.1";
    (void)check_browser_policy(h, p);
    (void)canonical_head(h, 3);
    if (h.has_header("Origin")) (void)preflight_response(h);
  }
  // The rest (or everything) as a chunked body, fed in pieces.
  std::string_view rest = end == std::string_view::npos ? in : in.substr(end);
  ChunkedDecoder d(1 << 16);
  size_t at = 0, step = 1 + size % 13;
  while (at < rest.size()) {
    size_t used = 0;
    auto p = d.feed(rest.substr(at, std::min(step, rest.size() - at)), &used);
    if (used > std::min(step, rest.size() - at)) __builtin_trap();
    at += used;
    if (p != ChunkedDecoder::Progress::kNeedMore) break;
    if (used == 0) break;
  }
  return 0;
}
