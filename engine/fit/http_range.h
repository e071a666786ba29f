// A minimal HTTP(S) range reader for remote GGUF headers (cpp-httplib, OpenSSL): one GET with
// "Range: bytes=A-B", redirects followed by hand so the token is dropped when the origin changes,
// and never more than the asked bytes taken off the wire (a server that ignores Range and sends
// the whole 100 GB file is cut off after them).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "arc/status.h"

namespace arc::fit {

struct HttpRange {
  std::vector<uint8_t> bytes;  // exactly the asked bytes (fewer only at the end of the file)
  uint64_t total_size = 0;     // the whole file, from Content-Range or Content-Length
};

struct HttpRangeOptions {
  std::string bearer_token;
  int timeout_s = 30;
  int max_redirects = 10;
};

Result<HttpRange> http_get_range(const std::string& url, uint64_t first, uint64_t length,
                                 const HttpRangeOptions& options);

// "https://host:port/path?q" -> origin "https://host:port" and target "/path?q".
struct UrlParts {
  std::string origin;
  std::string target;
};
Result<UrlParts> split_url(const std::string& url);

}  // namespace arc::fit
