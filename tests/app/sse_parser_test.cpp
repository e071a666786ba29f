// SseParser against hand-written expectations: the same stream fed whole, split at every byte
// position, and one byte at a time must give the same events.
#include <gtest/gtest.h>

#include "SseParser.h"

using arc::app::SseEvent;
using arc::app::SseParser;

namespace {

// A stream mixing LF, CRLF and CR line ends, comments, multi-line data, ids, retry, a field
// without a colon, an event with no data (not dispatched) and UTF-8 text.
const QByteArray kStream =
    ": keep-alive comment\n"
    "event: load_progress\r\n"
    "data: {\"rank\":0,\"bytes_done\":10}\r\n"
    "\r\n"
    "data: line one\n"
    "data:line two\n"
    "id: 7\n"
    "\n"
    "event: stats\r"
    "data: {\"x\":\"gr\xc3\xbc\xc3\x9f\"}\r"
    "\r"
    "retry: 2500\n"
    "event: nodata\n"
    "\n"
    "data\n"
    "\n"
    "unknown: field\n"
    "data: last\n"
    "\n"
    "data: unfinished";  // no blank line: must not be dispatched

struct Expected {
  const char* type;
  QByteArray data;
  const char* id;
};

const Expected kExpected[] = {
    {"load_progress", "{\"rank\":0,\"bytes_done\":10}", ""},
    {"message", "line one\nline two", "7"},
    {"stats", "{\"x\":\"gr\xc3\xbc\xc3\x9f\"}", "7"},
    {"message", "", "7"},
    {"message", "last", "7"},
};

void expectEvents(const QList<SseEvent>& got, const std::string& how) {
  ASSERT_EQ(got.size(), qsizetype(std::size(kExpected))) << how;
  for (size_t i = 0; i < std::size(kExpected); ++i) {
    EXPECT_EQ(got[i].type.toStdString(), kExpected[i].type) << how << " event " << i;
    EXPECT_EQ(got[i].data.toStdString(), kExpected[i].data.toStdString()) << how << " event " << i;
    EXPECT_EQ(got[i].id.toStdString(), kExpected[i].id) << how << " event " << i;
  }
}

}  // namespace

TEST(SseParser, WholeStream) {
  SseParser p;
  expectEvents(p.feed(kStream), "whole");
  EXPECT_EQ(p.retryMs(), 2500);
  EXPECT_GT(p.pendingBytes(), 0);  // "data: unfinished" waits
}

TEST(SseParser, SplitAtEveryByte) {
  for (qsizetype cut = 0; cut <= kStream.size(); ++cut) {
    SseParser p;
    QList<SseEvent> got = p.feed(kStream.left(cut));
    got += p.feed(kStream.mid(cut));
    expectEvents(got, "cut at " + std::to_string(cut));
    EXPECT_EQ(p.retryMs(), 2500);
  }
}

TEST(SseParser, OneByteAtATime) {
  SseParser p;
  QList<SseEvent> got;
  for (char c : kStream) got += p.feed(QByteArray(1, c));
  expectEvents(got, "bytewise");
}

TEST(SseParser, CrLfSplitBetweenChunksIsOneLineEnd) {
  // "data: a\r" + "\n\r\n": the LF after a chunk-final CR must not count as a second (blank) line.
  SseParser p;
  QList<SseEvent> got = p.feed("data: a\r");
  got += p.feed("\ndata: b\r\n\r\n");
  ASSERT_EQ(got.size(), 1);
  EXPECT_EQ(got[0].data, QByteArray("a\nb"));
}

TEST(SseParser, BadRetryIgnoredAndResetKeepsId) {
  SseParser p;
  p.feed("retry: 12x\nretry: -5\nid: abc\ndata: 1\n\n");
  EXPECT_EQ(p.retryMs(), -1);
  p.feed("data: partial");
  p.reset();
  EXPECT_EQ(p.pendingBytes(), 0);
  const auto got = p.feed("data: 2\n\n");
  ASSERT_EQ(got.size(), 1);
  EXPECT_EQ(got[0].data, QByteArray("2"));
  EXPECT_EQ(got[0].id, QStringLiteral("abc"));
}
