// Raw HTTP/1.1 over TCP for transport tests: exact bytes out (bad framing, trickles, pipelines),
// responses parsed back one at a time, any loopback source address (127.0.0.x) to stand for
// many clients.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <optional>
#include <string>

namespace arc::testing {

// Raises the soft descriptor limit to the hard one; returns the new soft limit.
inline rlim_t raise_fd_limit() {
  rlimit r{};
  getrlimit(RLIMIT_NOFILE, &r);
  r.rlim_cur = r.rlim_max;
  setrlimit(RLIMIT_NOFILE, &r);
  getrlimit(RLIMIT_NOFILE, &r);
  return r.rlim_cur;
}

// A connected socket to 127.0.0.1:port from `source` (another loopback address), or -1.
inline int connect_to(int port, const char* source = "127.0.0.1") {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in src{};
  src.sin_family = AF_INET;
  inet_pton(AF_INET, source, &src.sin_addr);
  sockaddr_in dst{};
  dst.sin_family = AF_INET;
  dst.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &dst.sin_addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&src), sizeof src) != 0 ||
      ::connect(fd, reinterpret_cast<sockaddr*>(&dst), sizeof dst) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Sends everything it can; false when the peer refused the rest.
inline bool send_all(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    ssize_t n = ::send(fd, s.data() + done, s.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

struct RawResponse {
  int status = 0;
  std::string head;
  std::string body;
};

// Reads from `fd` into `buf` until it holds one complete response (Content-Length or chunked),
// which it takes off `buf`. nullopt on EOF or after `timeout_ms` without one.
inline std::optional<RawResponse> read_response(int fd, std::string& buf, int timeout_ms = 5000) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    size_t he = buf.find("\r\n\r\n");
    if (he != std::string::npos) {
      RawResponse r;
      r.head = buf.substr(0, he + 4);
      r.status = std::atoi(r.head.c_str() + 9);
      std::string lower = r.head;
      for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      size_t cl = lower.find("content-length:");
      if (r.status == 100 || r.status == 204 || r.status == 304) {
        buf.erase(0, he + 4);
        return r;
      }
      if (cl != std::string::npos) {
        size_t n = std::stoul(lower.substr(cl + 15));
        if (buf.size() >= he + 4 + n) {
          r.body = buf.substr(he + 4, n);
          buf.erase(0, he + 4 + n);
          return r;
        }
      } else if (lower.find("transfer-encoding: chunked") != std::string::npos) {
        // Decode in place once the terminating chunk is in.
        size_t end = buf.find("\r\n0\r\n\r\n", he);
        if (end != std::string::npos || buf.compare(he + 4, 5, "0\r\n\r\n") == 0) {
          size_t p = he + 4;
          for (;;) {
            size_t len = std::stoul(buf.substr(p), nullptr, 16);
            size_t data = buf.find("\r\n", p) + 2;
            if (len == 0) {
              buf.erase(0, data + 2);
              return r;
            }
            r.body += buf.substr(data, len);
            p = data + len + 2;
          }
        }
      }
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) return std::nullopt;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) return std::nullopt;
    char tmp[65536];
    ssize_t n = ::recv(fd, tmp, sizeof tmp, 0);
    if (n <= 0) return std::nullopt;
    buf.append(tmp, static_cast<size_t>(n));
  }
}

// True when the peer closes within `timeout_ms` (after any data still in flight).
inline bool closed_by_peer(int fd, int timeout_ms = 3000) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  char tmp[4096];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) return false;
    ssize_t n = ::recv(fd, tmp, sizeof tmp, 0);
    if (n == 0 || (n < 0 && errno == ECONNRESET)) return true;
  }
}

// One request on a fresh connection: its response (or nullopt).
inline std::optional<RawResponse> exchange(int port, const std::string& request,
                                           int timeout_ms = 5000) {
  int fd = connect_to(port);
  if (fd < 0) return std::nullopt;
  std::string buf;
  std::optional<RawResponse> r;
  if (send_all(fd, request)) r = read_response(fd, buf, timeout_ms);
  ::close(fd);
  return r;
}

}  // namespace arc::testing
