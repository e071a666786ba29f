// The streaming client against the in-process fake server with known delays: 200 ms to the
// first token, 20 ms between tokens. Timers on a loaded 2-core CI box only run late, never
// early, so the bounds are tight below and loose above.
#include <gtest/gtest.h>

#include "arc/bench/client.h"
#include "arc/bench/stats.h"
#include "fake_openai_server.h"

namespace arc::bench {
namespace {

using arc::testing::FakeOpenAiServer;
using json = nlohmann::json;

json small_body(int max_tokens = 10) {
  ChatParams p;
  p.model = "fake-model";
  p.messages = json::array({{{"role", "user"}, {"content", "Tell me about tides, please!!"}}});
  p.max_tokens = max_tokens;
  return make_chat_body(p);
}

TEST(BenchClient, TimingsMatchTheServersDelays) {
  FakeOpenAiServer server;
  server.start();
  Endpoint ep{server.url(), "secret", 10};
  RequestTiming t = stream_chat(ep, small_body());
  ASSERT_TRUE(t.ok) << t.error;
  EXPECT_EQ(t.output_tokens, 10);
  EXPECT_EQ(t.token_chunks, 10);
  EXPECT_TRUE(t.usage_reported);
  EXPECT_EQ(t.prompt_tokens, FakeOpenAiServer::prompt_tokens_of(small_body()));
  EXPECT_EQ(t.finish_reason, "length");
  // TTFT = 200 ms of server delay (+ local HTTP overhead).
  EXPECT_GE(t.ttft_ms, 195);
  EXPECT_LE(t.ttft_ms, 350);
  // 9 gaps of 20 ms after the first token.
  ASSERT_EQ(t.itl_ms.size(), 9u);
  Summary itl = summarize(t.itl_ms);
  EXPECT_GE(itl.median, 19);
  EXPECT_LE(itl.median, 40);
  ASSERT_TRUE(t.tpot_ms().has_value());
  EXPECT_GE(*t.tpot_ms(), 19);
  EXPECT_LE(*t.tpot_ms(), 40);
  // TPOT is (e2e - TTFT) / (tokens - 1) by definition.
  EXPECT_NEAR(*t.tpot_ms(), (t.e2e_ms - t.ttft_ms) / 9, 1e-9);
  EXPECT_GE(t.e2e_ms, 200 + 9 * 20 - 5);

  // What reached the server: streaming with usage, ignore_eos, the key.
  auto bodies = server.bodies();
  ASSERT_EQ(bodies.size(), 1u);
  EXPECT_EQ(bodies[0]["stream"], true);
  EXPECT_EQ(bodies[0]["stream_options"]["include_usage"], true);
  EXPECT_EQ(bodies[0]["ignore_eos"], true);
}

TEST(BenchClient, CountsChunksWhenTheServerSendsNoUsage) {
  FakeOpenAiServer server;
  server.send_usage = false;
  server.first_delay_ms = 10;
  server.gap_ms = 1;
  server.n_tokens = 7;
  server.start();
  RequestTiming t = stream_chat({server.url(), "", 10}, small_body());
  ASSERT_TRUE(t.ok) << t.error;
  EXPECT_FALSE(t.usage_reported);
  EXPECT_EQ(t.output_tokens, 7);
  EXPECT_EQ(t.prompt_tokens, -1);
}

TEST(BenchClient, Http500IsReportedWithTheServersMessage) {
  FakeOpenAiServer server;
  server.mode = FakeOpenAiServer::Mode::kHttp500;
  server.start();
  RequestTiming t = stream_chat({server.url(), "", 10}, small_body());
  EXPECT_FALSE(t.ok);
  EXPECT_EQ(t.error, "HTTP 500: boom: the fake failed");
}

TEST(BenchClient, MalformedEventIsReported) {
  FakeOpenAiServer server;
  server.mode = FakeOpenAiServer::Mode::kMalformed;
  server.first_delay_ms = 10;
  server.gap_ms = 1;
  server.start();
  RequestTiming t = stream_chat({server.url(), "", 10}, small_body());
  EXPECT_FALSE(t.ok);
  EXPECT_NE(t.error.find("malformed SSE event"), std::string::npos) << t.error;
}

TEST(BenchClient, StreamCutOffIsReported) {
  FakeOpenAiServer server;
  server.mode = FakeOpenAiServer::Mode::kCutOff;
  server.first_delay_ms = 10;
  server.gap_ms = 1;
  server.start();
  RequestTiming t = stream_chat({server.url(), "", 10}, small_body());
  EXPECT_FALSE(t.ok);
  EXPECT_NE(t.error.find("before [DONE]"), std::string::npos) << t.error;
}

TEST(BenchClient, ConnectionRefused) {
  int port;
  {
    FakeOpenAiServer server;
    port = server.start();
  }  // stopped: nothing listens there now
  RequestTiming t = stream_chat({"http://127.0.0.1:" + std::to_string(port), "", 5}, small_body());
  EXPECT_FALSE(t.ok);
  EXPECT_NE(t.error.find("could not connect"), std::string::npos) << t.error;
  EXPECT_LT(t.e2e_ms, 5000);
}

TEST(BenchClient, SlowServerTimesOut) {
  FakeOpenAiServer server;
  server.mode = FakeOpenAiServer::Mode::kSlow;  // keep-alives for 3 s before any token
  server.start();
  auto before = Clock::now();
  RequestTiming t = stream_chat({server.url(), "", 0.5}, small_body());
  double waited_ms = std::chrono::duration<double, std::milli>(Clock::now() - before).count();
  EXPECT_FALSE(t.ok);
  EXPECT_NE(t.error.find("timed out"), std::string::npos) << t.error;
  EXPECT_GE(waited_ms, 450);
  EXPECT_LT(waited_ms, 1500);
}

TEST(BenchClient, CancelStopsARequest) {
  FakeOpenAiServer server;
  server.mode = FakeOpenAiServer::Mode::kSlow;
  server.start();
  std::atomic<bool> cancel{false};
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    cancel = true;
  });
  RequestTiming t = stream_chat({server.url(), "", 30}, small_body(), &cancel);
  canceller.join();
  EXPECT_FALSE(t.ok);
  EXPECT_EQ(t.error, "cancelled");
  EXPECT_LT(t.e2e_ms, 1500);
}

TEST(BenchClient, ServerInfoReadsContextLength) {
  FakeOpenAiServer server;
  server.context_length = 12345;
  server.start();
  auto info = fetch_server_info({server.url(), "", 5}, "");
  ASSERT_TRUE(info.ok()) << info.status().to_string();
  ASSERT_EQ(info->model_ids.size(), 1u);
  EXPECT_EQ(info->model_ids[0], "fake-model");
  EXPECT_EQ(info->context_length, 12345);
}

}  // namespace
}  // namespace arc::bench
