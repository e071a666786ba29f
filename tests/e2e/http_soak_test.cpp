// Soak (label `soak`, not in the default run): ARC_SOAK_MINUTES (default 30) of mixed valid,
// invalid and slow traffic on loopback against one engine. Checks that every valid request is
// answered, that the engine's RSS does not grow after the warm-up, and that no KV block leaks.
//   ARC_SOAK_MINUTES=2 ctest --test-dir build/dev -L soak --output-on-failure
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "e2e/engine_process.h"
#include "e2e/raw_http.h"

namespace arc {
namespace {

using nlohmann::json;
using testing::EngineProcess;
using Clock = std::chrono::steady_clock;

long rss_kib(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  return -1;
}

struct Counters {
  std::atomic<long> valid_sent{0}, valid_ok{0}, invalid_sent{0}, invalid_refused{0}, slow{0};
  std::atomic<long> failures{0};
};

std::string chat(int port, int max_tokens, bool stream) {
  std::string body = json({{"model", "test"},
                           {"max_tokens", max_tokens},
                           {"stream", stream},
                           {"temperature", 0.7},
                           {"messages", json::array({{{"role", "user"}, {"content", "hello"}}})}})
                         .dump();
  return "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
         "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\n\r\n" + body;
}

// One client thread: a random mix of the traffic kinds until `end`.
void client_loop(int port, unsigned seed, Clock::time_point end, Counters& c) {
  std::mt19937 rng(seed);
  const std::string host = "Host: 127.0.0.1:" + std::to_string(port) + "\r\n";
  const std::vector<std::string> invalid = {
      "POST /v1/chat/completions HTTP/1.1\r\n" + host +
          "Content-Type: application/json\r\nContent-Length: 1\r\n\r\n{",
      "POST /v1/chat/completions HTTP/1.1\r\n" + host +
          "Content-Type: text/plain\r\nContent-Length: 2\r\n\r\n{}",
      "POST /v1/chat/completions HTTP/1.1\r\n" + host +
          "Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n",
      "POST /v1/chat/completions HTTP/1.1\r\n" + host + "Content-Length: 99999999999\r\n\r\n",
      "GET /health HTTP/1.1\r\n" + host + "Origin: https://evil.example\r\n\r\n",
      "GARBAGE\r\n\r\n",
  };
  while (Clock::now() < end) {
    const int kind = static_cast<int>(rng() % 10);
    if (kind < 4) {  // valid, streaming or not
      ++c.valid_sent;
      auto r =
          testing::exchange(port, chat(port, 1 + static_cast<int>(rng() % 8), kind % 2), 60000);
      if (r && r->status == 200) {
        ++c.valid_ok;
      } else {
        ++c.failures;
      }
    } else if (kind < 5) {  // a stream abandoned after its first bytes
      int fd = testing::connect_to(port);
      if (fd >= 0) {
        testing::send_all(fd, chat(port, 64, true));
        char b[64];
        (void)!::recv(fd, b, sizeof b, 0);
        ::close(fd);
      }
    } else if (kind < 8) {  // invalid
      ++c.invalid_sent;
      auto r = testing::exchange(port, invalid[rng() % invalid.size()], 10000);
      if (r && r->status >= 400 && r->status < 500) ++c.invalid_refused;
    } else {  // slow: a head trickled past the deadline
      ++c.slow;
      int fd = testing::connect_to(port);
      if (fd < 0) continue;
      std::string head = "GET /health HTTP/1.1\r\n" + host;
      for (size_t i = 0; i < head.size() && Clock::now() < end; ++i) {
        if (::send(fd, &head[i], 1, MSG_NOSIGNAL) <= 0) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(150));
      }
      ::close(fd);
    }
  }
}

TEST(HttpSoak, MixedTrafficForMinutes) {
  testing::raise_fd_limit();
  const char* env = std::getenv("ARC_SOAK_MINUTES");
  const double minutes = env != nullptr ? std::atof(env) : 30.0;
  const auto model = (std::filesystem::temp_directory_path() / "arc_soak_qwen3moe.gguf").string();
  const std::string bin = std::string(ARC_BIN_DIR) + "/arclight-engine";
  ASSERT_EQ(testing::run_command({bin, "--log-level", "warn", "make-test-model", "--family",
                                  "qwen3moe", "--out", model, "--layers", "2", "--seed", "3"}),
            0);
  EngineProcess engine;
  ASSERT_TRUE(engine.start({"--model", model, "--ctx-size", "256", "--parallel", "8", "--threads",
                            "2", "--header-timeout", "2"}))
      << engine.error();
  const int port = engine.port();
  const auto start = Clock::now();
  const auto end = start + std::chrono::milliseconds(static_cast<int64_t>(minutes * 60000));
  const auto warm = start + (end - start) / 5;

  Counters c;
  std::vector<std::thread> clients;
  for (unsigned i = 0; i < 16; ++i)
    clients.emplace_back(client_loop, port, 1234 + i, end, std::ref(c));

  // RSS sampled every few seconds: the peak after the warm-up may not exceed the warm-up's peak
  // by more than 10% + 16 MiB (allocator noise).
  long warm_peak = 0, late_peak = 0;
  while (Clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::seconds(2));
    long rss = rss_kib(engine.pid());
    (Clock::now() < warm ? warm_peak : late_peak) =
        std::max(Clock::now() < warm ? warm_peak : late_peak, rss);
  }
  for (auto& t : clients) t.join();

  json status;
  for (int i = 0; i < 100; ++i) {
    auto r = testing::exchange(port, "GET /engine/status HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    ASSERT_TRUE(r);
    status = json::parse(r->body);
    if (status["kv"]["blocks_used"] == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::printf(
      "[ soak     ] %.1f min: valid %ld/%ld answered, invalid %ld/%ld refused, %ld slow; "
      "RSS warm-up peak %ld KiB, later peak %ld KiB\n",
      minutes, c.valid_ok.load(), c.valid_sent.load(), c.invalid_refused.load(),
      c.invalid_sent.load(), c.slow.load(), warm_peak, late_peak);
  EXPECT_EQ(c.failures.load(), 0);
  EXPECT_EQ(c.valid_ok.load(), c.valid_sent.load());
  EXPECT_EQ(c.invalid_refused.load(), c.invalid_sent.load());
  EXPECT_EQ(status["kv"]["blocks_used"], 0) << status.dump();
  EXPECT_LE(late_peak, warm_peak + warm_peak / 10 + 16 * 1024);
  std::filesystem::remove(model);
}

}  // namespace
}  // namespace arc
