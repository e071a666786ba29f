#include "http_head.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace arc::server {

namespace {

bool is_tchar(char c) {
  // RFC 9110 token characters.
  return std::isalnum(static_cast<unsigned char>(c)) ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool is_token(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), is_tchar);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

HttpRefusal refuse(int status, std::string message) {
  return HttpRefusal{status, std::move(message)};
}

// Splits the next line off `rest` (LF or CRLF); false when no line is left.
bool next_line(std::string_view* rest, std::string_view* line) {
  size_t nl = rest->find('\n');
  if (nl == std::string_view::npos) return false;
  *line = rest->substr(0, nl);
  if (!line->empty() && line->back() == '\r') line->remove_suffix(1);
  rest->remove_prefix(nl + 1);
  return true;
}

bool parse_decimal(std::string_view s, uint64_t* v) {
  if (s.empty() || s.size() > 19) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view RequestHead::header(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (iequals(k, name)) return v;
  return {};
}

bool RequestHead::has_header(std::string_view name) const {
  return std::any_of(headers.begin(), headers.end(),
                     [&](const auto& kv) { return iequals(kv.first, name); });
}

std::string RequestHead::path() const {
  return target.substr(0, target.find('?'));
}

size_t find_head_end(std::string_view buf, size_t from) {
  // Resume a little before `from`: the terminator may straddle two reads.
  size_t pos = from >= 3 ? from - 3 : 0;
  while ((pos = buf.find('\n', pos)) != std::string_view::npos) {
    if (pos + 1 < buf.size() && buf[pos + 1] == '\n') return pos + 2;
    if (pos + 2 < buf.size() && buf[pos + 1] == '\r' && buf[pos + 2] == '\n') return pos + 3;
    ++pos;
  }
  return std::string_view::npos;
}

std::optional<HttpRefusal> parse_request_head(std::string_view head, const HeadLimits& limits,
                                              RequestHead* out) {
  if (head.size() > limits.max_head_bytes) {
    return refuse(
        431, "request headers larger than " + std::to_string(limits.max_head_bytes) + " bytes");
  }
  std::string_view rest = head, line;
  // Tolerate empty lines before the request line (RFC 9112 2.2).
  do {
    if (!next_line(&rest, &line)) return refuse(400, "malformed HTTP request: no request line");
  } while (line.empty());

  size_t sp1 = line.find(' ');
  size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) {
    return refuse(400, "malformed HTTP request line");
  }
  out->method = std::string(line.substr(0, sp1));
  out->target = std::string(line.substr(sp1 + 1, sp2 - sp1 - 1));
  out->version = std::string(line.substr(sp2 + 1));
  if (!is_token(out->method) || out->target.empty()) {
    return refuse(400, "malformed HTTP request line");
  }
  if (out->target.size() > limits.max_target_bytes) {
    return refuse(
        414, "request target longer than " + std::to_string(limits.max_target_bytes) + " bytes");
  }
  if (out->version != "HTTP/1.1" && out->version != "HTTP/1.0") {
    return refuse(505, "only HTTP/1.1 and HTTP/1.0 are supported");
  }

  bool close = false, keep_alive_token = false;
  int te_count = 0;
  while (next_line(&rest, &line) && !line.empty()) {
    if (out->headers.size() >= limits.max_headers) {
      return refuse(431, "more than " + std::to_string(limits.max_headers) + " request headers");
    }
    if (line.size() > limits.max_header_line_bytes) {
      return refuse(431, "a request header line is longer than " +
                             std::to_string(limits.max_header_line_bytes) + " bytes");
    }
    if (line.front() == ' ' || line.front() == '\t') {
      return refuse(400, "folded header lines (obs-fold) are not accepted");
    }
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || !is_token(line.substr(0, colon))) {
      return refuse(400, "malformed header line");
    }
    std::string_view name = line.substr(0, colon);
    std::string_view value = trim(line.substr(colon + 1));
    if (value.find_first_of(std::string_view("\0\r", 2)) != std::string_view::npos) {
      return refuse(400, "header '" + std::string(name) + "' holds a control character");
    }
    if (iequals(name, "Content-Length")) {
      uint64_t n = 0;
      if (!parse_decimal(value, &n)) return refuse(400, "invalid Content-Length");
      if (out->content_length && *out->content_length != n) {
        return refuse(400, "conflicting Content-Length headers");
      }
      out->content_length = n;
    } else if (iequals(name, "Transfer-Encoding")) {
      ++te_count;
      if (!iequals(value, "chunked")) {
        return refuse(501, "Transfer-Encoding '" + std::string(value.substr(0, 64)) +
                               "' is not supported; send the body with Content-Length or "
                               "'Transfer-Encoding: chunked'");
      }
      out->chunked = true;
    } else if (iequals(name, "Expect")) {
      if (!iequals(value, "100-continue")) return refuse(417, "unsupported Expect header");
      out->expect_continue = true;
    } else if (iequals(name, "Connection")) {
      // A comma-separated list of options.
      std::string_view v = value;
      while (!v.empty()) {
        size_t comma = v.find(',');
        std::string_view opt = trim(v.substr(0, comma));
        if (iequals(opt, "close")) close = true;
        if (iequals(opt, "keep-alive")) keep_alive_token = true;
        v = comma == std::string_view::npos ? std::string_view() : v.substr(comma + 1);
      }
    }
    out->headers.emplace_back(std::string(name), std::string(value));
  }
  if (te_count > 1) return refuse(400, "more than one Transfer-Encoding header");
  if (out->chunked && out->content_length) {
    return refuse(400, "Content-Length together with Transfer-Encoding is ambiguous; send one");
  }
  if (out->version == "HTTP/1.1" && !out->has_header("Host")) {
    return refuse(400, "HTTP/1.1 request without a Host header");
  }
  if (out->content_length && *out->content_length > limits.max_body_bytes) {
    return refuse(413, "request body of " + std::to_string(*out->content_length) +
                           " bytes is larger than the limit of " +
                           std::to_string(limits.max_body_bytes) +
                           " bytes; images count toward it (base64 adds a third): send smaller "
                           "or fewer images, or raise serve --max-body-bytes");
  }
  out->keep_alive = !close && (out->version == "HTTP/1.1" || keep_alive_token);
  return std::nullopt;
}

std::string canonical_head(const RequestHead& head, size_t body_size) {
  std::string s = head.method + " " + head.target + " " + head.version + "\r\n";
  for (const auto& [k, v] : head.headers) {
    if (iequals(k, "Transfer-Encoding") || iequals(k, "Content-Length") || iequals(k, "Expect")) {
      continue;
    }
    s += k;
    s += ": ";
    s += v;
    s += "\r\n";
  }
  s += "Content-Length: " + std::to_string(body_size) + "\r\n\r\n";
  return s;
}

ChunkedDecoder::Progress ChunkedDecoder::fail(std::string message) {
  error_ = std::move(message);
  return Progress::kError;
}

ChunkedDecoder::Progress ChunkedDecoder::feed(std::string_view in, size_t* consumed) {
  constexpr size_t kMaxLine = 4096;      // chunk-size line with extensions
  constexpr size_t kMaxTrailer = 16384;  // all trailer lines together
  size_t i = 0;
  auto done = [&](Progress p) {
    *consumed = i;
    return p;
  };
  while (i < in.size()) {
    switch (state_) {
      case State::kSize:
      case State::kDataEnd:
      case State::kTrailer: {
        size_t nl = in.find('\n', i);
        size_t take = (nl == std::string_view::npos ? in.size() : nl + 1) - i;
        line_.append(in.substr(i, take));
        i += take;
        if (line_.size() > (state_ == State::kTrailer ? kMaxTrailer : kMaxLine)) {
          return done(fail("chunked body: line too long"));
        }
        if (nl == std::string_view::npos) return done(Progress::kNeedMore);
        std::string_view l = line_;
        l.remove_suffix(1);
        if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
        if (state_ == State::kDataEnd) {
          if (!l.empty()) return done(fail("chunked body: missing CRLF after chunk data"));
          state_ = State::kSize;
        } else if (state_ == State::kTrailer) {
          trailer_bytes_ += line_.size();
          if (trailer_bytes_ > kMaxTrailer) return done(fail("chunked body: trailers too long"));
          if (l.empty()) {
            state_ = State::kDone;
            line_.clear();
            return done(Progress::kDone);
          }
        } else {
          std::string_view hex = l.substr(0, l.find(';'));
          while (!hex.empty() && (hex.back() == ' ' || hex.back() == '\t')) hex.remove_suffix(1);
          uint64_t n = 0;
          auto [p, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), n, 16);
          if (hex.empty() || hex.size() > 15 || ec != std::errc() || p != hex.data() + hex.size()) {
            return done(fail("chunked body: invalid chunk size"));
          }
          if (n > max_body_ || body_.size() + n > max_body_) {
            *consumed = i;
            error_ = "chunked request body larger than the limit of " + std::to_string(max_body_) +
                     " bytes; raise serve --max-body-bytes";
            return Progress::kTooLarge;
          }
          remaining_ = n;
          state_ = n == 0 ? State::kTrailer : State::kData;
        }
        line_.clear();
        break;
      }
      case State::kData: {
        size_t take = static_cast<size_t>(std::min<uint64_t>(remaining_, in.size() - i));
        body_.append(in.substr(i, take));
        i += take;
        remaining_ -= take;
        if (remaining_ == 0) state_ = State::kDataEnd;
        break;
      }
      case State::kDone:
        return done(Progress::kDone);
    }
  }
  return done(state_ == State::kDone ? Progress::kDone : Progress::kNeedMore);
}

}  // namespace arc::server
