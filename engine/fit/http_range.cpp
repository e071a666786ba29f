// One ranged GET over cpp-httplib with redirects followed by hand (see http_range.h).
#include "http_range.h"

#include <algorithm>
#include <chrono>
#include <optional>

#include <fmt/format.h>
#include <httplib.h>

namespace arc::fit {

namespace {

bool is_redirect(int status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

// "bytes 0-1023/4096" -> 4096; nullopt when absent or "*".
std::optional<uint64_t> content_range_total(const std::string& v) {
  const size_t slash = v.rfind('/');
  if (slash == std::string::npos || slash + 1 >= v.size()) return std::nullopt;
  uint64_t total = 0;
  for (size_t i = slash + 1; i < v.size(); ++i) {
    if (v[i] < '0' || v[i] > '9') return std::nullopt;
    total = total * 10 + static_cast<uint64_t>(v[i] - '0');
  }
  return total;
}

// "bytes 1024-2047/4096" -> 1024.
std::optional<uint64_t> content_range_first(const std::string& v) {
  size_t i = v.find(' ');
  if (i == std::string::npos) return std::nullopt;
  uint64_t first = 0;
  bool any = false;
  for (++i; i < v.size() && v[i] >= '0' && v[i] <= '9'; ++i) {
    first = first * 10 + static_cast<uint64_t>(v[i] - '0');
    any = true;
  }
  return any ? std::optional<uint64_t>(first) : std::nullopt;
}

// Location may be absolute, origin-relative ("/api/resolve-cache/...") or path-relative.
std::string resolve_location(const UrlParts& base, const std::string& location) {
  if (location.find("://") != std::string::npos) return location;
  if (!location.empty() && location[0] == '/') return base.origin + location;
  std::string dir = base.target.substr(0, base.target.find('?'));
  dir = dir.substr(0, dir.rfind('/') + 1);
  return base.origin + dir + location;
}

std::string status_message(int status, const std::string& url) {
  switch (status) {
    case 401:
    case 403:
      return fmt::format(
          "{} answered {}: the repository is gated or private; accept its terms "
          "on the hub and give a token",
          url, status);
    case 404:
      return fmt::format("{} answered 404: no such file (check the repository and file name)", url);
    case 416:
      return fmt::format("{} answered 416: the range lies past the end of the file", url);
    default:
      return fmt::format("{} answered HTTP {}", url, status);
  }
}

}  // namespace

Result<UrlParts> split_url(const std::string& url) {
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos) {
    return invalid_argument("'" + url + "' is not a URL (http://... or https://...)");
  }
  const std::string scheme = url.substr(0, scheme_end);
  if (scheme != "http" && scheme != "https") {
    return invalid_argument("'" + url + "': only http and https URLs can be read");
  }
  const size_t path_at = url.find('/', scheme_end + 3);
  UrlParts p;
  p.origin = url.substr(0, path_at);
  p.target = path_at == std::string::npos ? "/" : url.substr(path_at);
  if (p.origin.size() <= scheme_end + 3) return invalid_argument("'" + url + "' has no host");
  return p;
}

Result<HttpRange> http_get_range(const std::string& url, uint64_t first, uint64_t length,
                                 const HttpRangeOptions& o) {
  if (length == 0) return invalid_argument("empty range asked of " + url);
  ARC_ASSIGN_OR_RETURN(const UrlParts start, split_url(url));
  std::string current = url;
  UrlParts parts = start;
  for (int hop = 0; hop <= o.max_redirects; ++hop) {
    httplib::Client cli(parts.origin);
    cli.set_connection_timeout(std::chrono::seconds(o.timeout_s));
    cli.set_read_timeout(std::chrono::seconds(o.timeout_s));
    cli.set_follow_location(false);
    httplib::Headers headers{
        {"Range", fmt::format("bytes={}-{}", first, first + length - 1)},
        {"User-Agent", "arclight-fit"},
        {"Accept-Encoding", "identity"},
    };
    // The token only goes to the origin it was given for (the hub), never to its storage.
    if (!o.bearer_token.empty() && parts.origin == start.origin) {
      headers.emplace("Authorization", "Bearer " + o.bearer_token);
    }

    int status = 0;
    std::string location, content_range;
    std::optional<uint64_t> content_length;
    uint64_t skip = 0;  // a 200 answer starts at byte 0: drop what precedes `first`
    HttpRange out;
    auto on_response = [&](const httplib::Response& r) {
      status = r.status;
      location = r.get_header_value("Location");
      content_range = r.get_header_value("Content-Range");
      if (r.has_header("Content-Length")) {
        content_length = std::strtoull(r.get_header_value("Content-Length").c_str(), nullptr, 10);
      }
      if (status == 200) skip = first;
      // Redirects and errors carry no file bytes worth reading.
      return status == 200 || status == 206;
    };
    auto on_data = [&](const char* data, size_t n) {
      uint64_t take_from = 0;
      if (skip > 0) {
        take_from = std::min<uint64_t>(skip, n);
        skip -= take_from;
      }
      const uint64_t want = length - out.bytes.size();
      const uint64_t take = std::min<uint64_t>(want, n - take_from);
      out.bytes.insert(out.bytes.end(), data + take_from, data + take_from + take);
      return out.bytes.size() < length;  // stop reading once the range is complete
    };
    httplib::Result res = cli.Get(parts.target, headers, on_response, on_data);
    if (status == 0) {
      return unavailable(
          fmt::format("cannot reach {}: {}", parts.origin, httplib::to_string(res.error())));
    }
    if (is_redirect(status)) {
      if (location.empty()) return unavailable(current + " redirects without a Location");
      current = resolve_location(parts, location);
      ARC_ASSIGN_OR_RETURN(parts, split_url(current));
      continue;
    }
    if (status != 200 && status != 206) {
      return Status(status == 404
                        ? StatusCode::kNotFound
                        : (status == 401 || status == 403 ? StatusCode::kFailedPrecondition
                                                          : StatusCode::kUnavailable),
                    status_message(status, current));
    }
    if (status == 206) {
      const auto total = content_range_total(content_range);
      const auto got_first = content_range_first(content_range);
      if (!total || !got_first || *got_first != first) {
        return unavailable(fmt::format("{} answered a range without a usable Content-Range ('{}')",
                                       current, content_range));
      }
      out.total_size = *total;
    } else {
      if (!content_length) {
        return unavailable(current +
                           " ignores Range and gives no Content-Length; its size is "
                           "unknown");
      }
      out.total_size = *content_length;
    }
    // A short body is fine only at the end of the file; anything else is a broken connection.
    const uint64_t expected =
        first >= out.total_size ? 0 : std::min<uint64_t>(length, out.total_size - first);
    if (out.bytes.size() < expected) {
      return unavailable(fmt::format("{}: the connection ended after {} of {} bytes ({})", current,
                                     out.bytes.size(), expected, httplib::to_string(res.error())));
    }
    return out;
  }
  return unavailable(
      fmt::format("{}: more than {} redirects; the server loops", url, o.max_redirects));
}

}  // namespace arc::fit
