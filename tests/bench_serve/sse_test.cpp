// The SSE parser against hand-written streams, split at every byte position.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "arc/bench/client.h"
#include "arc/bench/sse.h"

namespace arc::bench {
namespace {

std::vector<SseEvent> parse_split(const std::string& stream, size_t split) {
  SseParser p;
  std::vector<SseEvent> out;
  EXPECT_TRUE(p.feed(std::string_view(stream).substr(0, split), out).ok());
  EXPECT_TRUE(p.feed(std::string_view(stream).substr(split), out).ok());
  return out;
}

TEST(BenchSse, EventsAtEverySplitPoint) {
  const std::string stream =
      ": keep-alive comment\n\n"
      "data: {\"a\":1}\n\n"
      "event: ping\r\ndata:{\"b\":2}\r\n\r\n"
      "data: line one\rdata: line two\r\r"
      "id: 7\nretry: 100\n\n"  // no data: dropped
      "data: [DONE]\n\n";
  for (size_t split = 0; split <= stream.size(); ++split) {
    auto ev = parse_split(stream, split);
    ASSERT_EQ(ev.size(), 4u) << "split at " << split;
    EXPECT_EQ(ev[0].data, "{\"a\":1}");
    EXPECT_EQ(ev[0].event, "");
    EXPECT_EQ(ev[1].event, "ping");
    EXPECT_EQ(ev[1].data, "{\"b\":2}");
    EXPECT_EQ(ev[2].data, "line one\nline two");
    EXPECT_EQ(ev[3].data, "[DONE]");
  }
}

TEST(BenchSse, PartialEventAtEnd) {
  SseParser p;
  std::vector<SseEvent> out;
  ASSERT_TRUE(p.feed("data: {\"a\":1}\n", out).ok());
  EXPECT_TRUE(out.empty());
  EXPECT_TRUE(p.has_partial_event());
  ASSERT_TRUE(p.feed("\n", out).ok());
  EXPECT_EQ(out.size(), 1u);
  EXPECT_FALSE(p.has_partial_event());
}

TEST(BenchSse, OverlongLineIsAnError) {
  SseParser p;
  std::vector<SseEvent> out;
  std::string big(SseParser::kMaxLineBytes + 1, 'x');
  Status s = p.feed(big, out);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("longer than"), std::string::npos);
}

TEST(BenchUrl, BaseUrls) {
  auto a = parse_base_url("http://127.0.0.1:8080");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->scheme_host_port, "http://127.0.0.1:8080");
  EXPECT_EQ(a->path_prefix, "");
  auto b = parse_base_url("https://example.com/v1/");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->scheme_host_port, "https://example.com");
  EXPECT_EQ(b->path_prefix, "");
  auto c = parse_base_url("http://gw:9000/team/llm/v1");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->path_prefix, "/team/llm");
  EXPECT_FALSE(parse_base_url("127.0.0.1:8080").ok());
  EXPECT_FALSE(parse_base_url("ftp://x").ok());
  EXPECT_FALSE(parse_base_url("http://").ok());
}

TEST(BenchBody, StreamsWithUsageAndIgnoreEos) {
  ChatParams p;
  p.model = "m";
  p.messages = nlohmann::json::array({{{"role", "user"}, {"content", "hi"}}});
  auto b = make_chat_body(p);
  EXPECT_EQ(b["stream"], true);
  EXPECT_EQ(b["stream_options"]["include_usage"], true);
  EXPECT_EQ(b["ignore_eos"], true);
  EXPECT_EQ(b["max_tokens"], 450);
  EXPECT_DOUBLE_EQ(b["temperature"].get<double>(), 0.6);
  EXPECT_EQ(b["model"], "m");
  p.model.clear();
  EXPECT_FALSE(make_chat_body(p).contains("model"));
}

}  // namespace
}  // namespace arc::bench
