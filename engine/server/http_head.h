// The transport's view of an HTTP/1.1 request before any handler sees it: the request head parsed
// and checked against hard limits (header count and size, one unambiguous body length), and the
// chunked body decoder. Everything here is pure and bounded, so the front acceptor can refuse a
// request early (413 before reading the body, 431 for a huge head) without a worker thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace arc::server {

// Why a request is refused at the transport: an HTTP status and a message for the client.
struct HttpRefusal {
  int status = 400;
  std::string message;
};

struct HeadLimits {
  size_t max_head_bytes = 64u << 10;  // request line + headers
  size_t max_headers = 100;
  size_t max_header_line_bytes = 8u << 10;  // what the router accepts per line
  size_t max_target_bytes = 8u << 10;
  uint64_t max_body_bytes = 64u << 20;
};

struct RequestHead {
  std::string method;
  std::string target;
  std::string version;                                       // "HTTP/1.1" or "HTTP/1.0"
  std::vector<std::pair<std::string, std::string>> headers;  // in order, values trimmed
  std::optional<uint64_t> content_length;
  bool chunked = false;
  bool expect_continue = false;
  bool keep_alive = true;  // false for "Connection: close" and HTTP/1.0 without keep-alive

  // First value of a header (case-insensitive name), or "" when absent.
  std::string_view header(std::string_view name) const;
  bool has_header(std::string_view name) const;
  std::string path() const;  // target without the query
};

// Offset just past the blank line that ends the head ("\r\n\r\n" or "\n\n"), or npos.
// `from` lets a caller resume the search where the previous one stopped.
size_t find_head_end(std::string_view buf, size_t from = 0);

// Parses and checks a complete head (`head` ends with its blank line).
std::optional<HttpRefusal> parse_request_head(std::string_view head, const HeadLimits& limits,
                                              RequestHead* out);

// The head as handed to the routing layer: the request line and headers, without
// Transfer-Encoding, Content-Length and Expect, then "Content-Length: body_size".
std::string canonical_head(const RequestHead& head, size_t body_size);

// Incremental decoder for "Transfer-Encoding: chunked" with a cap on the decoded size and on
// the size of chunk lines and trailers.
class ChunkedDecoder {
 public:
  enum class Progress { kNeedMore, kDone, kError, kTooLarge };

  explicit ChunkedDecoder(uint64_t max_body_bytes) : max_body_(max_body_bytes) {}

  // Consumes bytes from `in`; *consumed says how many. kDone: body() is complete and the
  // rest of `in` belongs to the next request.
  Progress feed(std::string_view in, size_t* consumed);
  std::string& body() { return body_; }
  const std::string& error() const { return error_; }

 private:
  enum class State { kSize, kData, kDataEnd, kTrailer, kDone };
  Progress fail(std::string message);

  uint64_t max_body_;
  State state_ = State::kSize;
  std::string line_;
  uint64_t remaining_ = 0;
  size_t trailer_bytes_ = 0;
  std::string body_;
  std::string error_;
};

// Case-insensitive ASCII comparison.
bool iequals(std::string_view a, std::string_view b);

}  // namespace arc::server
