// A local stand-in for the Hugging Face hub, for the tests of `fit --url` and the app's browser:
// an in-process cpp-httplib server that speaks the endpoints the app and the engine use.
//
//   GET /api/models?search=S&filter=gguf     repositories whose id contains S (case-insensitive)
//   GET /api/models/OWNER/NAME/tree/main     the files: path, size, lfs {oid: SHA-256, size}
//   GET /OWNER/NAME/resolve/main/PATH        302 to /cdn/OWNER/NAME/PATH (a relative Location,
//                                            as the hub's resolve-cache answers)
//   GET /cdn/OWNER/NAME/PATH                 the bytes, with Range (206 + Content-Range)
//
// Gated repositories answer 401 to resolve and tree without "Authorization: Bearer TOKEN". Faults
// for the download tests: cut the next file response after N bytes (the connection closes), slow
// responses down, publish a wrong SHA-256. Every file request is logged with its Range.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace httplib {
class Server;
}

namespace arc::testing {

struct HubFile {
  std::string path;        // in the repository, e.g. "Q4_K_M/model-00001-of-00002.gguf"
  std::string local_path;  // the bytes served
  std::string sha256;      // what the tree publishes; empty: the file's real SHA-256
};

struct HubRepo {
  std::string id;  // "owner/name"
  std::vector<HubFile> files;
  bool gated = false;
  int64_t downloads = 0;
};

struct HubRequest {
  std::string path;
  std::string range;  // the Range header as sent ("" when none)
  bool authorized = false;
};

class TestHub {
 public:
  TestHub(std::vector<HubRepo> repos, std::string token = "");
  ~TestHub();
  TestHub(const TestHub&) = delete;
  TestHub& operator=(const TestHub&) = delete;

  bool running() const { return port_ > 0; }
  std::string base_url() const;  // "http://127.0.0.1:PORT"
  // The resolve URL of a file, as the hub's web page links it.
  std::string resolve_url(const std::string& repo, const std::string& path) const;

  // The next file response sends `bytes` of its body and closes the connection.
  void cut_next_download_after(uint64_t bytes) { cut_after_ = static_cast<int64_t>(bytes); }
  // resolve redirects (absolute Location) to another hub's /cdn/, as the real hub sends
  // downloads to its storage on another host; "" (the default): this hub's own, relative.
  void set_storage_origin(std::string origin) { storage_origin_ = std::move(origin); }
  // Each 64 KiB chunk of a file body waits this long (pause and cancel tests need time).
  void set_chunk_delay_ms(int ms) { chunk_delay_ms_ = ms; }

  std::vector<HubRequest> file_requests() const;  // /cdn/ requests, in order
  // Counted after each write: it may lag what a client has already received.
  uint64_t bytes_served() const { return bytes_served_; }

  // Real SHA-256 of a file (OpenSSL), lowercase hex.
  static std::string sha256_of(const std::string& path);

 private:
  void install_routes();
  const HubRepo* find_repo(const std::string& id) const;

  std::vector<HubRepo> repos_;
  std::string token_;
  std::string storage_origin_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<int64_t> cut_after_{-1};
  std::atomic<int> chunk_delay_ms_{0};
  std::atomic<uint64_t> bytes_served_{0};
  mutable std::mutex mu_;
  std::vector<HubRequest> requests_;
};

}  // namespace arc::testing
