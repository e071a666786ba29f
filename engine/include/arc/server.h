// The HTTP server of rank 0: OpenAI and Anthropic routes, control routes, metrics and the event
// stream, in front of an InferenceService.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "arc/service.h"
#include "arc/status.h"

namespace arc {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                    // 0: any free port (see Server::port())
  std::string api_key;                // non-empty: every route but /health requires it
  bool insecure = false;              // allow a non-loopback address without an API key
  size_t max_body_bytes = 64u << 20;  // images travel as data URIs inside JSON
  int max_connections = 256;          // worker threads; streaming requests hold one each
  int read_timeout_s = 30;            // body arrival, idle keep-alive, a client not reading
  int event_keepalive_s = 10;  // comment lines on /engine/events keep proxies from closing it
  // Transport limits, enforced before a worker sees a request (see docs/http-server.md).
  double header_timeout_s = 10;            // first byte to end of head; a trickle cannot extend it
  size_t max_header_bytes = 64u << 10;     // request line and headers together
  size_t max_headers = 100;                // header lines (431 beyond)
  int max_connections_per_client = 256;    // open connections from one address
  int max_open_connections = 8192;         // open connections in all
  std::vector<std::string> allow_origins;  // web pages allowed to call the engine ("*": any)
  std::vector<std::string> allow_hosts;    // extra names accepted in the Host header
};

// Refuses a non-loopback bind without an API key unless `insecure` is set.
Status check_bind_safety(const ServerOptions& options);

class Server {
 public:
  Server(ServerOptions options, InferenceService& service);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds and starts serving on background threads.
  Status start();
  // Port actually bound (after start()).
  int port() const;
  // Stops accepting, ends event streams and joins the threads.
  void stop();
  // Blocks until stop() is called from another thread (or a signal handler thread).
  void wait();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace arc
