// Which requests a browser may send: the guard against web pages that reach a loopback engine
// (cross-site requests and DNS rebinding). A request that carries an Origin must come from an
// origin the user allowed (serve --allow-origin); the Host must name this machine (an IP literal,
// localhost, the bound address, this host's name or serve --allow-host); a body on a JSON route
// must be JSON, so no CORS-simple request (text/plain, form) reaches inference or load.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "http_head.h"

namespace arc::server {

struct BrowserPolicy {
  std::vector<std::string> allow_origins;  // "https://chat.example.com", or "*"
  std::vector<std::string> allow_hosts;    // extra names clients may use in Host
  std::string bound_host;                  // the address the server listens on
  // DNS rebinding matters only where the engine trusts whoever reaches it: with an API key a
  // page cannot authenticate anyway, so any Host is accepted (LAN names, mDNS, proxies).
  bool check_host = true;
};

// 403 for a foreign Origin or Host, 415 for a body that is not JSON; nullopt to go on.
std::optional<HttpRefusal> check_browser_policy(const RequestHead& head,
                                                const BrowserPolicy& policy);

// True when `origin` (as sent in the Origin header) is one the user allowed.
bool origin_allowed(std::string_view origin, const BrowserPolicy& policy);

// The answer to a CORS preflight (OPTIONS with Origin and Access-Control-Request-Method) from
// an allowed origin: a complete HTTP/1.1 204 response.
std::string preflight_response(const RequestHead& head);

}  // namespace arc::server
