// The local test hub (see test_hub.h).
#include "test_hub.h"

#include <openssl/evp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <httplib.h>
#include <nlohmann/json.hpp>

namespace arc::testing {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

std::string TestHub::sha256_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr);
  std::vector<char> buf(1 << 16);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    EVP_DigestUpdate(ctx, buf.data(), static_cast<size_t>(in.gcount()));
  }
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_DigestFinal_ex(ctx, md, &n);
  EVP_MD_CTX_free(ctx);
  std::string hex;
  char b[3];
  for (unsigned i = 0; i < n; ++i) {
    std::snprintf(b, sizeof b, "%02x", md[i]);
    hex += b;
  }
  return hex;
}

TestHub::TestHub(std::vector<HubRepo> repos, std::string token)
    : repos_(std::move(repos)), token_(std::move(token)), server_(new httplib::Server) {
  for (HubRepo& r : repos_) {
    for (HubFile& f : r.files) {
      if (f.sha256.empty()) f.sha256 = sha256_of(f.local_path);
    }
  }
  install_routes();
  port_ = server_->bind_to_any_port("127.0.0.1");
  if (port_ > 0) thread_ = std::thread([this] { server_->listen_after_bind(); });
}

TestHub::~TestHub() {
  server_->stop();
  if (thread_.joinable()) thread_.join();
}

std::string TestHub::base_url() const {
  return "http://127.0.0.1:" + std::to_string(port_);
}

std::string TestHub::resolve_url(const std::string& repo, const std::string& path) const {
  return base_url() + "/" + repo + "/resolve/main/" + path;
}

std::vector<HubRequest> TestHub::file_requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

const HubRepo* TestHub::find_repo(const std::string& id) const {
  for (const HubRepo& r : repos_) {
    if (r.id == id) return &r;
  }
  return nullptr;
}

void TestHub::install_routes() {
  using json = nlohmann::json;
  auto authorized = [this](const httplib::Request& req) {
    return !token_.empty() && req.get_header_value("Authorization") == "Bearer " + token_;
  };

  server_->Get("/api/models", [this](const httplib::Request& req, httplib::Response& res) {
    const std::string search = lower(req.get_param_value("search"));
    json out = json::array();
    for (const HubRepo& r : repos_) {
      if (!search.empty() && lower(r.id).find(search) == std::string::npos) continue;
      out.push_back({{"id", r.id},
                     {"modelId", r.id},
                     {"downloads", r.downloads},
                     {"likes", 0},
                     {"gated", r.gated ? json("auto") : json(false)},
                     {"tags", json::array({"gguf"})}});
    }
    res.set_content(out.dump(), "application/json");
  });

  server_->Get(
      R"(/api/models/([^/]+/[^/]+)/tree/main)",
      [this, authorized](const httplib::Request& req, httplib::Response& res) {
        const HubRepo* r = find_repo(req.matches[1]);
        if (!r) {
          res.status = 404;
          res.set_content(R"({"error":"Repository not found"})", "application/json");
          return;
        }
        json out = json::array();
        for (const HubFile& f : r->files) {
          const auto size = std::filesystem::file_size(f.local_path);
          out.push_back({{"type", "file"},
                         {"oid", "0000"},
                         {"size", size},
                         {"path", f.path},
                         {"lfs", {{"oid", f.sha256}, {"size", size}, {"pointerSize", 135}}}});
        }
        out.push_back({{"type", "file"}, {"oid", "1111"}, {"size", 12}, {"path", "README.md"}});
        (void)authorized;
        res.set_content(out.dump(), "application/json");
      });

  server_->Get(R"(/([^/]+/[^/]+)/resolve/main/(.+))",
               [this, authorized](const httplib::Request& req, httplib::Response& res) {
                 const HubRepo* r = find_repo(req.matches[1]);
                 if (!r) {
                   res.status = 404;
                   return;
                 }
                 if (r->gated && !authorized(req)) {
                   res.status = 401;
                   res.set_content("Access to this repository is restricted", "text/plain");
                   return;
                 }
                 // Relative, like the hub's /api/resolve-cache redirects, or to the storage.
                 res.status = 302;
                 res.set_header("Location", storage_origin_ + "/cdn/" + r->id + "/" +
                                                std::string(req.matches[2]));
               });

  server_->Get(R"(/cdn/([^/]+/[^/]+)/(.+))", [this, authorized](const httplib::Request& req,
                                                                httplib::Response& res) {
    const HubRepo* r = find_repo(req.matches[1]);
    const HubFile* file = nullptr;
    if (r) {
      for (const HubFile& f : r->files) {
        if (f.path == req.matches[2]) file = &f;
      }
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      requests_.push_back({req.path, req.get_header_value("Range"), authorized(req)});
    }
    if (!file) {
      res.status = 404;
      return;
    }
    const std::string local = file->local_path;
    const size_t size = std::filesystem::file_size(local);
    const int64_t cut = cut_after_.exchange(-1);
    auto sent = std::make_shared<uint64_t>(0);
    res.set_content_provider(
        size, "application/octet-stream",
        [this, local, cut, sent](size_t offset, size_t length, httplib::DataSink& sink) {
          std::ifstream in(local, std::ios::binary);
          in.seekg(static_cast<std::streamoff>(offset));
          std::vector<char> buf(std::min<size_t>(length, 64 * 1024));
          in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
          size_t n = static_cast<size_t>(in.gcount());
          // cpp-httplib 0.11's server does not clamp a range that ends past the file to its
          // size (RFC 9110 says to): it announces the asked length. End the body at the end of
          // the file, as a real server's shorter answer would.
          if (n == 0) return false;
          if (cut >= 0) {
            if (*sent >= static_cast<uint64_t>(cut)) return false;  // drop the connection
            n = std::min<size_t>(n, static_cast<size_t>(cut - static_cast<int64_t>(*sent)));
          }
          if (const int ms = chunk_delay_ms_.load(); ms > 0) {
            std::this_thread::sleep_for(std::chrono::milliseconds(ms));
          }
          if (!sink.write(buf.data(), n)) return false;
          *sent += n;
          bytes_served_ += n;
          return true;
        });
  });
}

}  // namespace arc::testing
