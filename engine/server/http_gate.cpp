#include "http_gate.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>

#include "anthropic_api.h"
#include "arc/log.h"
#include "openai_api.h"

namespace arc::server {

namespace {

using Clock = std::chrono::steady_clock;

Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

const char* reason_phrase(int status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 403:
      return "Forbidden";
    case 408:
      return "Request Timeout";
    case 413:
      return "Content Too Large";
    case 414:
      return "URI Too Long";
    case 415:
      return "Unsupported Media Type";
    case 417:
      return "Expectation Failed";
    case 431:
      return "Request Header Fields Too Large";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Error";
  }
}

// A complete error answer in the dialect of the route, closing the connection.
std::string error_response(const std::string& path, const HttpRefusal& r) {
  httplib::Response res;
  Status s(StatusCode::kInvalidArgument, r.message);
  if (path.rfind("/v1/messages", 0) == 0) {
    send_anthropic_error(res, s, r.status);
  } else {
    send_openai_error(res, s, r.status);
  }
  return "HTTP/1.1 " + std::to_string(r.status) + " " + reason_phrase(r.status) +
         "\r\nContent-Type: application/json\r\nContent-Length: " +
         std::to_string(res.body.size()) + "\r\nConnection: close\r\n\r\n" + res.body;
}

std::string peer_address(const sockaddr_storage& a, int* port) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (a.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&a);
    inet_ntop(AF_INET, &v4->sin_addr, buf, sizeof buf);
    *port = ntohs(v4->sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&a);
    inet_ntop(AF_INET6, &v6->sin6_addr, buf, sizeof buf);
    *port = ntohs(v6->sin6_port);
  }
  return buf;
}

enum class Phase { kIdle, kHead, kBody, kBusy, kClosing };

struct Conn {
  int fd = -1;
  std::string ip;
  int port = 0;
  Phase phase = Phase::kIdle;
  std::string in;        // bytes received and not yet consumed
  size_t scan_from = 0;  // where the search for the end of the head resumes
  RequestHead head;
  std::optional<ChunkedDecoder> chunked;
  Clock::time_point deadline;
  bool peer_eof = false;  // the client half-closed (or closed) its side
  size_t discarded = 0;   // bytes thrown away while closing
  size_t reserved = 0;    // body bytes counted against the gate's budget
};

// The request handed to the router, and the socket its answer goes to. Reads come from the
// buffered request only; writes go to the socket with a deadline per write.
class ConnStream final : public httplib::Stream {
 public:
  ConnStream(const Conn& c, std::string request, double write_timeout_s)
      : c_(c),
        request_(std::move(request)),
        timeout_ms_(static_cast<int>(write_timeout_s * 1000)) {}

  bool is_readable() const override { return pos_ < request_.size(); }
  bool is_writable() const override {
    if (failed_) return false;
    pollfd p{c_.fd, POLLOUT, 0};
    int n = ::poll(&p, 1, timeout_ms_);
    return n > 0 && (p.revents & (POLLERR | POLLHUP | POLLNVAL)) == 0;
  }
  ssize_t read(char* ptr, size_t size) override {
    size_t n = std::min(size, request_.size() - pos_);
    std::memcpy(ptr, request_.data() + pos_, n);
    pos_ += n;
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char* ptr, size_t size) override {
    if (failed_) return -1;
    sniff_status(ptr, size);
    size_t done = 0;
    while (done < size) {
      ssize_t n = ::send(c_.fd, ptr + done, size - done, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        done += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        pollfd p{c_.fd, POLLOUT, 0};
        if (::poll(&p, 1, timeout_ms_) > 0 && (p.revents & (POLLERR | POLLNVAL)) == 0) continue;
      }
      failed_ = true;
      return -1;
    }
    return static_cast<ssize_t>(size);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = c_.ip;
    port = c_.port;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage a{};
    socklen_t len = sizeof a;
    port = 0;
    if (getsockname(c_.fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) ip = peer_address(a, &port);
  }
  socket_t socket() const override { return c_.fd; }

  int status() const { return status_; }
  bool failed() const { return failed_; }

 private:
  // The status code of the answer, from its first bytes ("HTTP/1.1 400 ...").
  void sniff_status(const char* p, size_t n) {
    if (status_ != 0 || status_line_.size() >= 12) return;
    status_line_.append(p, std::min(n, 12 - status_line_.size()));
    if (status_line_.size() >= 12) status_ = std::atoi(status_line_.c_str() + 9);
  }

  const Conn& c_;
  std::string request_;
  size_t pos_ = 0;
  int timeout_ms_;
  bool failed_ = false;
  std::string status_line_;
  int status_ = 0;
};

}  // namespace

struct HttpGate::Impl {
  GateOptions opt;
  RequestProcessor process;
  int listen_fd = -1;
  int epoll_fd = -1;
  int wake_fd = -1;
  std::thread loop_thread;
  std::unique_ptr<httplib::ThreadPool> pool;
  std::atomic<bool> stopping{false};
  bool accept_paused = false;
  size_t buffered = 0;  // request bodies held by connections and workers (epoll thread only)
  Clock::time_point accept_resume;

  // Epoll thread only.
  std::unordered_map<int, std::unique_ptr<Conn>> conns;
  std::unordered_map<std::string, int> per_client;

  // Connections coming back from the workers.
  std::mutex back_mu;
  std::vector<std::pair<Conn*, bool>> back;  // (connection, keep it open)

  Impl(GateOptions o, RequestProcessor p) : opt(std::move(o)), process(std::move(p)) {}

  void run();
  void accept_all();
  void on_event(Conn* c, uint32_t events);
  void advance(Conn* c);
  void dispatch(Conn* c, std::string body);
  void serve(Conn* c, std::string request);
  void take_back();
  void sweep(Clock::time_point now);
  void refuse(Conn* c, const HttpRefusal& r, const std::string& path);
  void send_now(Conn* c, const std::string& bytes);
  void watch(Conn* c, bool on);
  void close_conn(Conn* c);
  bool reserve(Conn* c, size_t total);
  void release(Conn* c);
};

// Counts a connection's body (`total` bytes so far) against the budget for all connections.
bool HttpGate::Impl::reserve(Conn* c, size_t total) {
  if (total <= c->reserved) return true;
  if (buffered + (total - c->reserved) > opt.max_buffered_bytes) return false;
  buffered += total - c->reserved;
  c->reserved = total;
  return true;
}

void HttpGate::Impl::release(Conn* c) {
  buffered -= c->reserved;
  c->reserved = 0;
}

namespace {

HttpRefusal busy_bodies() {
  return {503, "the engine is receiving too many large request bodies at once; retry in a moment"};
}

}  // namespace

void HttpGate::Impl::watch(Conn* c, bool on) {
  if (on) {
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP;
    ev.data.fd = c->fd;
    epoll_ctl(epoll_fd, EPOLL_CTL_ADD, c->fd, &ev);
  } else {
    epoll_ctl(epoll_fd, EPOLL_CTL_DEL, c->fd, nullptr);
  }
}

void HttpGate::Impl::close_conn(Conn* c) {
  release(c);
  if (c->phase != Phase::kBusy) watch(c, false);
  auto it = per_client.find(c->ip);
  if (it != per_client.end() && --it->second <= 0) per_client.erase(it);
  int fd = c->fd;
  ::close(fd);
  conns.erase(fd);
}

void HttpGate::Impl::send_now(Conn* c, const std::string& bytes) {
  // Small answers from the gate itself fit the socket's send buffer; a client that does not
  // read loses the rest.
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n =
        ::send(c->fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n <= 0) {
      if (n < 0 && errno == EINTR) continue;
      break;
    }
    done += static_cast<size_t>(n);
  }
}

// Answers with an error, then closes politely: stop sending, and read (and drop) what the client
// still sends for a moment, so that the answer is not destroyed by a reset.
void HttpGate::Impl::refuse(Conn* c, const HttpRefusal& r, const std::string& path) {
  logger("server")->debug("{}:{} refused with {}: {}", c->ip, c->port, r.status, r.message);
  send_now(c, error_response(path, r));
  release(c);
  ::shutdown(c->fd, SHUT_WR);
  c->phase = Phase::kClosing;
  c->in.clear();
  c->in.shrink_to_fit();
  c->chunked.reset();
  c->deadline = Clock::now() + std::chrono::seconds(1);
}

void HttpGate::Impl::accept_all() {
  for (;;) {
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    int fd = ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&addr), &len,
                       SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        // Out of descriptors: stop accepting for a moment instead of spinning.
        logger("server")->warn("cannot accept connections: {}", std::strerror(errno));
        epoll_ctl(epoll_fd, EPOLL_CTL_DEL, listen_fd, nullptr);
        accept_paused = true;
        accept_resume = Clock::now() + std::chrono::milliseconds(200);
      }
      return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    auto c = std::make_unique<Conn>();
    c->fd = fd;
    c->ip = peer_address(addr, &c->port);
    c->deadline = Clock::now() + seconds(opt.header_timeout_s);
    Conn* raw = c.get();
    conns.emplace(fd, std::move(c));
    const int from_client = ++per_client[raw->ip];
    watch(raw, true);
    if (static_cast<int>(conns.size()) > opt.max_open) {
      refuse(raw, {503, "the engine has too many open connections; try again later"}, "/");
    } else if (from_client > opt.max_per_client) {
      refuse(raw,
             {503, "too many connections from " + raw->ip + " (at most " +
                       std::to_string(opt.max_per_client) +
                       "; serve --max-connections-per-client raises it): close idle ones"},
             "/");
    }
  }
}

void HttpGate::Impl::on_event(Conn* c, uint32_t) {
  if (c->phase == Phase::kBusy) return;  // handed to a worker earlier in this batch
  char buf[65536];
  ssize_t n = ::recv(c->fd, buf, sizeof buf, 0);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
    close_conn(c);
    return;
  }
  if (c->phase == Phase::kClosing) {
    c->discarded += static_cast<size_t>(n);
    if (n == 0 || c->discarded > (4u << 20)) close_conn(c);
    return;
  }
  if (n == 0) {
    c->peer_eof = true;
    watch(c, false);  // nothing more will come; EOF stays readable forever
    advance(c);
    return;
  }
  if (c->phase == Phase::kIdle) {
    c->phase = Phase::kHead;
    c->deadline = Clock::now() + seconds(opt.header_timeout_s);
  }
  c->in.append(buf, static_cast<size_t>(n));
  advance(c);
}

// Moves a connection forward with the bytes it has: parse the head, check it, collect the body,
// hand the request to a worker. Closes or refuses when the request cannot go on.
void HttpGate::Impl::advance(Conn* c) {
  if (c->phase == Phase::kIdle || c->phase == Phase::kHead) {
    if (c->in.empty()) {
      if (c->peer_eof) close_conn(c);
      return;
    }
    if (c->phase == Phase::kIdle) {
      c->phase = Phase::kHead;
      c->deadline = Clock::now() + seconds(opt.header_timeout_s);
    }
    size_t end = find_head_end(c->in, c->scan_from);
    if (end == std::string::npos || end > opt.limits.max_head_bytes) {
      if (c->in.size() > opt.limits.max_head_bytes) {
        refuse(c,
               {431, "request headers larger than " + std::to_string(opt.limits.max_head_bytes) +
                         " bytes"},
               "/");
      } else if (c->peer_eof) {
        close_conn(c);
      } else {
        c->scan_from = c->in.size();
      }
      return;
    }
    c->scan_from = 0;
    c->head = RequestHead{};
    auto refusal = parse_request_head(std::string_view(c->in).substr(0, end), opt.limits, &c->head);
    if (!refusal) refusal = check_browser_policy(c->head, opt.policy);
    if (refusal) return refuse(c, *refusal, c->head.path());
    c->in.erase(0, end);
    if (c->head.method == "OPTIONS" && c->head.has_header("Origin") &&
        c->head.has_header("Access-Control-Request-Method")) {
      send_now(c, preflight_response(c->head));
      if (c->head.chunked || c->head.content_length.value_or(0) > 0 || !c->head.keep_alive) {
        return refuse(c, {400, "a preflight request has no body"}, "/");
      }
      c->phase = Phase::kIdle;
      c->deadline = Clock::now() + seconds(opt.idle_timeout_s);
      return advance(c);
    }
    if (!reserve(c, static_cast<size_t>(c->head.content_length.value_or(0)))) {
      return refuse(c, busy_bodies(), c->head.path());
    }
    if (c->head.expect_continue) send_now(c, "HTTP/1.1 100 Continue\r\n\r\n");
    c->phase = Phase::kBody;
    c->deadline = Clock::now() + seconds(opt.body_timeout_s);
    if (c->head.chunked) c->chunked.emplace(opt.limits.max_body_bytes);
  }
  if (c->phase != Phase::kBody) return;
  if (c->chunked) {
    size_t used = 0;
    auto p = c->chunked->feed(c->in, &used);
    c->in.erase(0, used);
    if (p == ChunkedDecoder::Progress::kTooLarge) {
      return refuse(c, {413, c->chunked->error()}, c->head.path());
    }
    if (p == ChunkedDecoder::Progress::kError) {
      return refuse(c, {400, c->chunked->error()}, c->head.path());
    }
    if (!reserve(c, c->chunked->body().size())) return refuse(c, busy_bodies(), c->head.path());
    if (p == ChunkedDecoder::Progress::kDone) {
      std::string body = std::move(c->chunked->body());
      c->chunked.reset();
      return dispatch(c, std::move(body));
    }
  } else {
    const size_t need = static_cast<size_t>(c->head.content_length.value_or(0));
    if (c->in.size() >= need) {
      std::string body = c->in.substr(0, need);
      c->in.erase(0, need);
      return dispatch(c, std::move(body));
    }
  }
  if (c->peer_eof) close_conn(c);  // the client stopped sending in the middle of a body
}

void HttpGate::Impl::dispatch(Conn* c, std::string body) {
  if (!c->peer_eof) watch(c, false);
  c->phase = Phase::kBusy;
  std::string request = canonical_head(c->head, body.size());
  request += body;
  pool->enqueue(
      [this, c, request = std::move(request)]() mutable { serve(c, std::move(request)); });
}

// On a worker: route the request and write its answer, then give the connection back.
void HttpGate::Impl::serve(Conn* c, std::string request) {
  ConnStream stream(*c, std::move(request), opt.write_timeout_s);
  const bool close = !c->head.keep_alive || stopping.load();
  bool closed = false;
  bool ok = false;
  try {
    ok = process(stream, close, &closed);
  } catch (const std::exception& e) {
    logger("server")->error("{} {}: {}", c->head.method, c->head.path(), e.what());
  }
  // After a 400 the client and the server may disagree about where the next request starts.
  const bool keep = ok && !closed && !close && !stream.failed() && stream.status() != 400;
  {
    std::lock_guard<std::mutex> lock(back_mu);
    back.emplace_back(c, keep);
  }
  uint64_t one = 1;
  (void)!::write(wake_fd, &one, sizeof one);
}

void HttpGate::Impl::take_back() {
  uint64_t v;
  (void)!::read(wake_fd, &v, sizeof v);
  std::vector<std::pair<Conn*, bool>> items;
  {
    std::lock_guard<std::mutex> lock(back_mu);
    items.swap(back);
  }
  for (auto [c, keep] : items) {
    release(c);  // the worker is done with the request
    if (!keep && c->peer_eof) {
      close_conn(c);  // busy connections are not watched; close_conn leaves epoll alone
      continue;
    }
    if (!keep) {
      // Close politely: what the client still sends is read and dropped for a moment.
      ::shutdown(c->fd, SHUT_WR);
      c->phase = Phase::kClosing;
      c->in.clear();
      c->deadline = Clock::now() + std::chrono::seconds(1);
      watch(c, true);
      continue;
    }
    c->phase = Phase::kIdle;
    c->deadline = Clock::now() + seconds(opt.idle_timeout_s);
    if (!c->peer_eof) watch(c, true);
    advance(c);  // a pipelined request may be waiting already
  }
}

void HttpGate::Impl::sweep(Clock::time_point now) {
  std::vector<Conn*> expired;
  for (auto& [fd, c] : conns) {
    if (c->phase != Phase::kBusy && now >= c->deadline) expired.push_back(c.get());
  }
  for (Conn* c : expired) {
    if (c->phase == Phase::kHead) {
      refuse(c,
             {408, "the request head did not arrive within " +
                       std::to_string(static_cast<int>(opt.header_timeout_s * 1000)) + " ms"},
             "/");
    } else if (c->phase == Phase::kBody) {
      refuse(c, {408, "the request body did not arrive in time"}, c->head.path());
    } else {
      close_conn(c);
    }
  }
  if (accept_paused && now >= accept_resume) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = listen_fd;
    epoll_ctl(epoll_fd, EPOLL_CTL_ADD, listen_fd, &ev);
    accept_paused = false;
  }
}

void HttpGate::Impl::run() {
  std::vector<epoll_event> events(512);
  auto next_sweep = Clock::now();
  while (!stopping.load()) {
    int n = epoll_wait(epoll_fd, events.data(), static_cast<int>(events.size()), 50);
    for (int i = 0; i < n; ++i) {
      const int fd = events[i].data.fd;
      if (fd == listen_fd) {
        accept_all();
      } else if (fd == wake_fd) {
        take_back();
      } else if (auto it = conns.find(fd); it != conns.end()) {
        on_event(it->second.get(), events[i].events);
      }
    }
    auto now = Clock::now();
    if (now >= next_sweep) {
      sweep(now);
      next_sweep = now + std::chrono::milliseconds(50);
    }
  }
  // Stop: idle connections close now; busy ones are shut down so that their writes fail and
  // their handlers end (a stream counts as cancelled).
  ::close(listen_fd);
  listen_fd = -1;
  std::vector<Conn*> idle;
  for (auto& [fd, c] : conns) {
    if (c->phase == Phase::kBusy) {
      ::shutdown(fd, SHUT_RDWR);
    } else {
      idle.push_back(c.get());
    }
  }
  for (Conn* c : idle) close_conn(c);
}

HttpGate::HttpGate(GateOptions options, RequestProcessor process)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(process))) {}

HttpGate::~HttpGate() {
  stop();
  if (impl_->listen_fd >= 0) ::close(impl_->listen_fd);
}

Result<int> HttpGate::bind(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  const std::string service = std::to_string(port);
  if (int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &res); rc != 0) {
    return invalid_argument("cannot resolve listen address '" + host + "': " + gai_strerror(rc));
  }
  std::string last_error = "no address";
  int fd = -1;
  for (addrinfo* a = res; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    // SO_REUSEADDR only: SO_REUSEPORT would let a second engine share the port.
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, 4096) != 0) {
      last_error =
          errno == EADDRINUSE ? "port in use (is another engine running?)" : std::strerror(errno);
      ::close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(res);
  if (fd < 0) {
    return unavailable("cannot listen on " + host + ":" + service + ": " + last_error +
                       "; choose another --port");
  }
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  int bound = 0;
  peer_address(addr, &bound);
  impl_->listen_fd = fd;
  return bound;
}

void HttpGate::start() {
  auto& m = *impl_;
  m.epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  m.wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = m.listen_fd;
  epoll_ctl(m.epoll_fd, EPOLL_CTL_ADD, m.listen_fd, &ev);
  ev.data.fd = m.wake_fd;
  epoll_ctl(m.epoll_fd, EPOLL_CTL_ADD, m.wake_fd, &ev);
  m.pool = std::make_unique<httplib::ThreadPool>(static_cast<size_t>(std::max(1, m.opt.workers)));
  m.loop_thread = std::thread([&m] { m.run(); });
}

void HttpGate::stop() {
  auto& m = *impl_;
  if (!m.loop_thread.joinable()) return;
  m.stopping = true;
  uint64_t one = 1;
  (void)!::write(m.wake_fd, &one, sizeof one);
  m.loop_thread.join();
  m.pool->shutdown();
  m.pool.reset();
  // The workers have handed their connections back.
  for (auto& [c, keep] : m.back) ::close(c->fd);
  m.back.clear();
  m.conns.clear();
  ::close(m.epoll_fd);
  ::close(m.wake_fd);
}

}  // namespace arc::server
