// The front of the HTTP server: one epoll thread accepts every connection and reads each request
// (head under a deadline that trickling cannot extend, then the body, de-chunked) before a worker
// thread sees it. Idle, slow and half-sent connections cost a few hundred bytes here instead of a
// thread. A complete request is handed to the routing layer (cpp-httplib's router, through
// `RequestProcessor`) on a worker from a fixed pool; its answer (streaming included) is written
// by that worker, then the connection comes back to the epoll thread for the next request.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <httplib.h>

#include "arc/status.h"
#include "http_head.h"
#include "http_policy.h"

namespace arc::server {

struct GateOptions {
  HeadLimits limits;
  BrowserPolicy policy;
  double header_timeout_s = 10;  // from the first byte of a request to the end of its head
  double body_timeout_s = 30;    // from the end of the head to the end of the body
  double idle_timeout_s = 30;    // a kept-alive connection with no request
  double write_timeout_s = 30;   // a client that stops reading its answer
  int max_per_client = 256;      // open connections from one address
  int max_open = 8192;           // open connections in all
  size_t max_buffered_bytes = size_t{1} << 30;  // request bodies held at once, all connections
  int workers = 256;  // requests handled at once (streams hold a worker each)
};

// Routes one complete request read from `stream` and writes the answer to it: the routing
// layer's process_request. Returns false when the answer could not be written.
using RequestProcessor =
    std::function<bool(httplib::Stream& stream, bool close_connection, bool* connection_closed)>;

class HttpGate {
 public:
  HttpGate(GateOptions options, RequestProcessor process);
  ~HttpGate();
  HttpGate(const HttpGate&) = delete;
  HttpGate& operator=(const HttpGate&) = delete;

  // Binds and listens (port 0: any free port); returns the bound port. Fails with "in use"
  // when another process holds the port.
  Result<int> bind(const std::string& host, int port);
  // Starts the epoll thread and the workers.
  void start();
  // Stops accepting, closes idle connections, shuts down busy ones and joins every thread.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace arc::server
