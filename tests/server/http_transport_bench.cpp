// The measurement behind docs/http-server.md: /health latency while N clients trickle their
// request heads, for cpp-httplib 0.11's own socket loop (one pooled thread per connection, as
// `serve` used it) and for the epoll gate in front of the same router. Label `bench`.
//   build/dev/tests/bench_http_transport [N ...]
#include <dirent.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>
#include <vector>

#include <httplib.h>

#include "e2e/raw_http.h"
#include "http_gate.h"

namespace {

using Clock = std::chrono::steady_clock;

class Router : public httplib::Server {
 public:
  using httplib::Server::process_request;
  void set_serving() { svr_sock_ = 0; }
};

int threads_now() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') ++n;
    closedir(d);
  }
  return n;
}

long rss_kib() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  return 0;
}

struct Result {
  int answered = 0;
  double worst_ms = 0, median_ms = 0;
};

// Opens `slow` trickling connections, then times 20 /health requests from another address.
Result measure(int port, int slow) {
  std::vector<int> fds;
  for (int i = 0; i < slow; ++i) {
    std::string src = "127.0.0." + std::to_string(2 + i / 100);
    int fd = arc::testing::connect_to(port, src.c_str());
    if (fd < 0) break;
    arc::testing::send_all(fd, "GET /health HTTP/1.1\r\n");
    fds.push_back(fd);
  }
  std::atomic<bool> run{true};
  std::thread trickle([&] {
    while (run) {
      for (int fd : fds) ::send(fd, "X", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  std::vector<double> ms;
  Result r;
  for (int i = 0; i < 20; ++i) {
    auto t = Clock::now();
    auto resp = arc::testing::exchange(
        port, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", 2000);
    double d = std::chrono::duration<double, std::milli>(Clock::now() - t).count();
    if (resp && resp->status == 200) {
      ++r.answered;
      ms.push_back(d);
    }
  }
  run = false;
  trickle.join();
  for (int fd : fds) ::close(fd);
  std::sort(ms.begin(), ms.end());
  if (!ms.empty()) {
    r.worst_ms = ms.back();
    r.median_ms = ms[ms.size() / 2];
  }
  return r;
}

void report(const char* name, int slow, const Result& r, int threads, long rss) {
  std::printf(
      "%-22s %5d slow: /health answered %2d/20, median %7.2f ms, worst %7.2f ms; %4d "
      "threads, RSS %6ld KiB\n",
      name, slow, r.answered, r.median_ms, r.worst_ms, threads, rss);
}

}  // namespace

int main(int argc, char** argv) {
  arc::testing::raise_fd_limit();
  std::vector<int> counts;
  for (int i = 1; i < argc; ++i) counts.push_back(std::atoi(argv[i]));
  if (counts.empty()) counts = {300, 1000};
  auto health = [](const httplib::Request&, httplib::Response& res) {
    res.set_content("{\"status\":\"idle\"}", "application/json");
  };
  for (int slow : counts) {
    {
      // As serve used it before: 256 pooled workers, a 30 s read timeout.
      httplib::Server svr;
      svr.new_task_queue = [] { return new httplib::ThreadPool(256); };
      svr.set_read_timeout(30, 0);
      svr.Get("/health", health);
      int port = svr.bind_to_any_port("127.0.0.1");
      std::thread t([&] { svr.listen_after_bind(); });
      while (!svr.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      Result r = measure(port, slow);
      report("httplib thread pool", slow, r, threads_now(), rss_kib());
      svr.stop();
      t.join();
    }
    {
      Router router;
      router.Get("/health", health);
      router.set_serving();
      arc::server::GateOptions g;
      g.workers = 256;
      g.max_per_client = 2000;
      arc::server::HttpGate gate(g, [&](httplib::Stream& s, bool close, bool* closed) {
        bool c = false;
        bool ok = router.process_request(s, close, c, nullptr);
        *closed = c;
        return ok;
      });
      auto port = gate.bind("127.0.0.1", 0);
      if (!port.ok()) return 1;
      gate.start();
      Result r = measure(*port, slow);
      report("epoll gate + router", slow, r, threads_now(), rss_kib());
      gate.stop();
    }
  }
  return 0;
}
