// The epoll gate on its own, with a router of two routes: limits that the e2e tests cannot reach
// cheaply (the budget for bodies held at once).
#include <gtest/gtest.h>

#include "e2e/raw_http.h"
#include "http_gate.h"

namespace arc::server {
namespace {

class Router : public httplib::Server {
 public:
  using httplib::Server::process_request;
  void set_serving() { svr_sock_ = 0; }
};

class GateTest : public ::testing::Test {
 protected:
  void start(GateOptions g) {
    router_.Get("/health", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("{}", "application/json");
    });
    router_.Post("/echo", [](const httplib::Request& req, httplib::Response& res) {
      res.set_content(std::to_string(req.body.size()), "text/plain");
    });
    router_.set_serving();
    gate_ = std::make_unique<HttpGate>(g, [this](httplib::Stream& s, bool close, bool* closed) {
      bool c = false;
      bool ok = router_.process_request(s, close, c, nullptr);
      *closed = c;
      return ok;
    });
    auto port = gate_->bind("127.0.0.1", 0);
    ASSERT_TRUE(port.ok());
    port_ = *port;
    gate_->start();
  }
  void TearDown() override {
    if (gate_) gate_->stop();
  }
  std::string head(size_t content_length) const {
    return "POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
           "Content-Length: " +
           std::to_string(content_length) + "\r\n\r\n";
  }

  Router router_;
  std::unique_ptr<HttpGate> gate_;
  int port_ = 0;
};

TEST_F(GateTest, BodiesHeldAtOnceStayWithinTheBudget) {
  GateOptions g;
  g.limits.max_body_bytes = 1 << 20;
  g.max_buffered_bytes = 1 << 20;
  start(g);
  const size_t n = 700000;
  int a = testing::connect_to(port_);
  ASSERT_GE(a, 0);
  ASSERT_TRUE(testing::send_all(a, head(n) + std::string(1000, ' ')));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  // A second large body does not fit beside the first.
  auto r = testing::exchange(port_, head(n) + std::string(n, ' '));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503);
  // Small requests still pass.
  r = testing::exchange(port_, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  ASSERT_TRUE(testing::send_all(a, std::string(n - 1000, ' ')));
  std::string buf;
  r = testing::read_response(a, buf);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, std::to_string(n));
  ::close(a);
  // Once answered (and its connection back from the worker), the first body no longer counts.
  for (int i = 0; i < 50; ++i) {
    r = testing::exchange(port_, head(n) + std::string(n, ' '));
    ASSERT_TRUE(r);
    if (r->status == 200) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(r->status, 200);
}

TEST_F(GateTest, StreamingAnswersAndKeepAlive) {
  router_.Get("/stream", [](const httplib::Request&, httplib::Response& res) {
    res.set_chunked_content_provider("text/event-stream", [](size_t, httplib::DataSink& sink) {
      for (int i = 0; i < 3; ++i) sink.write("data: x\n\n", 9);
      sink.done();
      return true;
    });
  });
  start(GateOptions{});
  int fd = testing::connect_to(port_);
  ASSERT_GE(fd, 0);
  std::string buf;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(testing::send_all(fd, "GET /stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
    auto r = testing::read_response(fd, buf);
    ASSERT_TRUE(r) << i;
    EXPECT_EQ(r->body, "data: x\n\ndata: x\n\ndata: x\n\n");
  }
  ::close(fd);
}

}  // namespace
}  // namespace arc::server
