#include "http_policy.h"

#include <arpa/inet.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>

namespace arc::server {

namespace {

std::string lower(std::string_view s) {
  std::string r(s);
  for (auto& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

// "example.com:8080" -> "example.com", "[::1]:80" -> "::1".
std::string host_name(std::string_view host) {
  if (!host.empty() && host.front() == '[') {
    size_t end = host.find(']');
    return lower(host.substr(1, end == std::string_view::npos ? host.npos : end - 1));
  }
  return lower(host.substr(0, host.rfind(':')));
}

bool is_ip_literal(const std::string& h) {
  in_addr a4{};
  in6_addr a6{};
  return inet_pton(AF_INET, h.c_str(), &a4) == 1 || inet_pton(AF_INET6, h.c_str(), &a6) == 1;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool host_allowed(const std::string& h, const BrowserPolicy& policy) {
  if (h.empty() || h == "localhost" || ends_with(h, ".localhost") || is_ip_literal(h)) return true;
  if (h == lower(policy.bound_host)) return true;
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) == 0 && h == lower(name)) return true;
  return std::any_of(policy.allow_hosts.begin(), policy.allow_hosts.end(),
                     [&](const std::string& a) { return lower(a) == h; });
}

std::string clip(std::string_view s) {
  return std::string(s.substr(0, 100)) + (s.size() > 100 ? "..." : "");
}

}  // namespace

bool origin_allowed(std::string_view origin, const BrowserPolicy& policy) {
  std::string o = lower(origin);
  while (!o.empty() && o.back() == '/') o.pop_back();
  return std::any_of(policy.allow_origins.begin(), policy.allow_origins.end(),
                     [&](const std::string& a) {
                       std::string x = lower(a);
                       while (!x.empty() && x.back() == '/') x.pop_back();
                       return x == "*" || x == o;
                     });
}

std::optional<HttpRefusal> check_browser_policy(const RequestHead& head,
                                                const BrowserPolicy& policy) {
  if (head.has_header("Origin") && !origin_allowed(head.header("Origin"), policy)) {
    return HttpRefusal{403, "requests from web pages are refused: origin '" +
                                clip(head.header("Origin")) +
                                "' is not allowed; start the engine with --allow-origin ORIGIN "
                                "to let that page use it"};
  }
  if (policy.check_host && !host_allowed(host_name(head.header("Host")), policy)) {
    return HttpRefusal{403, "Host '" + clip(head.header("Host")) +
                                "' does not name this engine (a DNS-rebinding page?); use its "
                                "address or localhost, or start it with --allow-host NAME"};
  }
  const bool has_body = head.chunked || head.content_length.value_or(0) > 0;
  if (head.method == "POST" && has_body && head.has_header("Content-Type")) {
    std::string_view ct = head.header("Content-Type");
    std::string media = lower(ct.substr(0, ct.find(';')));
    while (!media.empty() && (media.back() == ' ' || media.back() == '\t')) media.pop_back();
    if (media != "application/json" && !ends_with(media, "+json")) {
      return HttpRefusal{415,
                         "request bodies must be JSON: send 'Content-Type: "
                         "application/json' (got '" +
                             clip(ct) +
                             "'; curl -d sends a form unless you add -H 'Content-Type: "
                             "application/json')"};
    }
  }
  return std::nullopt;
}

std::string preflight_response(const RequestHead& head) {
  std::string headers = std::string(head.header("Access-Control-Request-Headers"));
  if (headers.empty()) headers = "Authorization, Content-Type, x-api-key, anthropic-version";
  return "HTTP/1.1 204 No Content\r\n"
         "Access-Control-Allow-Origin: " +
         std::string(head.header("Origin")) +
         "\r\n"
         "Access-Control-Allow-Methods: GET, POST, OPTIONS\r\n"
         "Access-Control-Allow-Headers: " +
         headers +
         "\r\n"
         "Access-Control-Max-Age: 600\r\n"
         "Vary: Origin\r\n"
         "Content-Length: 0\r\n\r\n";
}

}  // namespace arc::server
