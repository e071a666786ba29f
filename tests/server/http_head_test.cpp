// The transport's request-head parser, chunked decoder and browser policy.
#include <gtest/gtest.h>

#include "http_head.h"
#include "http_policy.h"

namespace arc::server {
namespace {

std::optional<HttpRefusal> parse(const std::string& head, RequestHead* out,
                                 HeadLimits limits = {}) {
  return parse_request_head(head, limits, out);
}

TEST(HttpHead, FindsTheEndOfTheHeadAcrossReads) {
  std::string s = "GET / HTTP/1.1\r\nHost: a\r\n\r\nrest";
  EXPECT_EQ(find_head_end(s), s.size() - 4);
  EXPECT_EQ(find_head_end(s, 20), s.size() - 4);
  EXPECT_EQ(find_head_end("GET / HTTP/1.1\nHost: a\n\n"), 24u);
  EXPECT_EQ(find_head_end("GET / HTTP/1.1\r\nHost: a\r\n"), std::string::npos);
}

TEST(HttpHead, ParsesARequest) {
  RequestHead h;
  ASSERT_FALSE(
      parse("POST /v1/x?y=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 12\r\n"
            "Connection: keep-alive, close\r\n\r\n",
            &h));
  EXPECT_EQ(h.method, "POST");
  EXPECT_EQ(h.path(), "/v1/x");
  EXPECT_EQ(h.content_length, 12u);
  EXPECT_FALSE(h.keep_alive);
  EXPECT_EQ(h.header("host"), "a");
  std::string canon = canonical_head(h, 3);
  EXPECT_NE(canon.find("Content-Length: 3\r\n\r\n"), std::string::npos);
  EXPECT_EQ(canon.find("Content-Length: 12"), std::string::npos);
}

TEST(HttpHead, RefusesAmbiguousOrOversizedRequests) {
  auto status = [](const std::string& head, HeadLimits l = {}) {
    RequestHead h;
    auto r = parse_request_head(head, l, &h);
    return r ? r->status : 0;
  };
  EXPECT_EQ(status("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"),
            400);
  EXPECT_EQ(status("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n"),
            0);
  EXPECT_EQ(status("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n"
                   "Transfer-Encoding: chunked\r\n\r\n"),
            400);
  EXPECT_EQ(status("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n"), 501);
  EXPECT_EQ(status("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n"), 400);
  EXPECT_EQ(status("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 100000000000\r\n\r\n"), 413);
  EXPECT_EQ(status("GET / HTTP/1.1\r\n\r\n"), 400);  // no Host
  EXPECT_EQ(status("GET / HTTP/2.0\r\nHost: a\r\n\r\n"), 505);
  EXPECT_EQ(status("GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n"), 400);
  EXPECT_EQ(status("GET / HTTP/1.1\r\nHost : a\r\n\r\n"), 400);
  HeadLimits few;
  few.max_headers = 2;
  EXPECT_EQ(status("GET / HTTP/1.1\r\nHost: a\r\nA: 1\r\nB: 2\r\n\r\n", few), 431);
  EXPECT_EQ(status("GET /" + std::string(9000, 'a') + " HTTP/1.1\r\nHost: a\r\n\r\n"), 414);
}

TEST(HttpHead, DecodesChunkedBodiesInPiecesUnderALimit) {
  const std::string wire = "5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nTrailer: x\r\n\r\nNEXT";
  for (size_t step : {1u, 3u, 1000u}) {
    ChunkedDecoder d(100);
    ChunkedDecoder::Progress p = ChunkedDecoder::Progress::kNeedMore;
    size_t at = 0;
    while (p == ChunkedDecoder::Progress::kNeedMore && at < wire.size()) {
      size_t used = 0;
      p = d.feed(std::string_view(wire).substr(at, std::min(step, wire.size() - at)), &used);
      at += used;
    }
    ASSERT_EQ(p, ChunkedDecoder::Progress::kDone) << step;
    EXPECT_EQ(d.body(), "hello world");
    EXPECT_EQ(wire.substr(at), "NEXT");
  }
  ChunkedDecoder small(8);
  size_t used = 0;
  EXPECT_EQ(small.feed("5\r\nhello\r\n5\r\n", &used), ChunkedDecoder::Progress::kTooLarge);
  ChunkedDecoder bad(100);
  EXPECT_EQ(bad.feed("zz\r\n", &used), ChunkedDecoder::Progress::kError);
  EXPECT_EQ(bad.error().find("chunk size") != std::string::npos, true);
}

TEST(HttpPolicy, RefusesForeignPagesAndNonJsonBodies) {
  BrowserPolicy p;
  p.bound_host = "127.0.0.1";
  auto status = [&](const std::string& head) {
    RequestHead h;
    if (auto r = parse_request_head(head, {}, &h)) return r->status;
    auto r = check_browser_policy(h, p);
    return r ? r->status : 0;
  };
  EXPECT_EQ(status("GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n"), 0);
  EXPECT_EQ(status("GET / HTTP/1.1\r\nHost: localhost:8080\r\n\r\n"), 0);
  EXPECT_EQ(status("GET / HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n"), 0);
  EXPECT_EQ(status("GET / HTTP/1.1\r\nHost: evil.example:8080\r\n\r\n"), 403);
  EXPECT_EQ(status("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://evil.example\r\n\r\n"),
            403);
  EXPECT_EQ(status("POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\n"
                   "Content-Length: 2\r\n\r\n"),
            415);
  EXPECT_EQ(status("POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json; "
                   "charset=utf-8\r\nContent-Length: 2\r\n\r\n"),
            0);
  p.allow_origins = {"http://ok.example/"};
  p.allow_hosts = {"engine.lan"};
  EXPECT_EQ(status("GET / HTTP/1.1\r\nHost: engine.lan\r\nOrigin: http://OK.example\r\n\r\n"), 0);
  p.check_host = false;  // an API key is set
  EXPECT_EQ(status("GET / HTTP/1.1\r\nHost: spark1.local:8080\r\n\r\n"), 0);
  EXPECT_EQ(status("GET / HTTP/1.1\r\nHost: a\r\nOrigin: http://evil.example\r\n\r\n"), 403);
  p.allow_origins = {"*"};
  EXPECT_EQ(status("GET / HTTP/1.1\r\nHost: 1.2.3.4\r\nOrigin: http://any.example\r\n\r\n"), 0);
}

}  // namespace
}  // namespace arc::server
