// gather_json and the link test: plain broadcasts and all-reduces on any Communicator.
#include <algorithm>
#include <chrono>

#include "arc/cluster_link.h"

namespace arc::cluster {
namespace {

using nlohmann::json;
constexpr int64_t kMaxJsonBytes = 1 << 20;
constexpr int64_t kMaxSizeBytes = int64_t{256} << 20;
constexpr size_t kMaxSizes = 8;
constexpr int kMaxIterations = 1000;

// Enough repeats that small sizes are not one timer tick, few enough that 256 MiB stays near a
// second on a 25 GB/s link.
int auto_iterations(int64_t bytes) {
  const int64_t budget = int64_t{512} << 20;  // bytes moved per size
  return static_cast<int>(std::clamp<int64_t>(budget / std::max<int64_t>(bytes, 1), 3, 200));
}

}  // namespace

Result<std::vector<json>> gather_json(Communicator& comm, const json& own) {
  std::string mine = own.dump(-1, ' ', false, json::error_handler_t::replace);
  if (static_cast<int64_t>(mine.size()) > kMaxJsonBytes) {
    mine = json({{"error", "probe larger than 1 MiB"}}).dump();
  }
  std::vector<json> out;
  for (int r = 0; r < comm.size(); ++r) {
    int64_t n = r == comm.rank() ? static_cast<int64_t>(mine.size()) : 0;
    ARC_RETURN_IF_ERROR(comm.broadcast(&n, sizeof n, r));
    if (n < 0 || n > kMaxJsonBytes) {
      return internal_error("rank " + std::to_string(r) + " sent a probe of " + std::to_string(n) +
                            " bytes");
    }
    std::string buf = r == comm.rank() ? mine : std::string(static_cast<size_t>(n), '\0');
    if (n > 0) ARC_RETURN_IF_ERROR(comm.broadcast(buf.data(), n, r));
    json j = json::parse(buf, nullptr, false);
    if (j.is_discarded()) j = json({{"error", "rank sent malformed JSON"}});
    out.push_back(std::move(j));
  }
  return out;
}

Result<LinkTestOptions> link_test_options_from_json(const json& body) {
  LinkTestOptions o;
  if (!body.is_object()) return invalid_argument("the link test body must be a JSON object");
  if (body.contains("sizes") && !body["sizes"].is_null()) {
    const json& s = body["sizes"];
    if (!s.is_array() || s.empty() || s.size() > kMaxSizes) {
      return invalid_argument("'sizes' must be an array of 1 to 8 byte counts");
    }
    for (const json& v : s) {
      if (!v.is_number_integer() || v.get<int64_t>() < 4 || v.get<int64_t>() > kMaxSizeBytes) {
        return invalid_argument("each of 'sizes' must be an integer from 4 to " +
                                std::to_string(kMaxSizeBytes) + " bytes");
      }
      // Whole floats: the all-reduce sums float32.
      o.sizes_bytes.push_back(v.get<int64_t>() / 4 * 4);
    }
  } else {
    // One decode step's activations (hidden 4096, f32) up to a large prefill chunk.
    o.sizes_bytes = {int64_t{16} << 10, int64_t{1} << 20, int64_t{16} << 20, int64_t{64} << 20};
  }
  if (body.contains("iterations") && !body["iterations"].is_null()) {
    const json& it = body["iterations"];
    if (!it.is_number_integer() || it.get<int64_t>() < 1 || it.get<int64_t>() > kMaxIterations) {
      return invalid_argument("'iterations' must be an integer from 1 to 1000");
    }
    o.iterations = it.get<int>();
  }
  return o;
}

json to_json(const LinkTestOptions& o) {
  json j = {{"sizes", o.sizes_bytes}};
  if (o.iterations > 0) j["iterations"] = o.iterations;  // 0: from the size, as when absent
  return j;
}

Result<std::vector<LinkTestResult>> run_link_test(Communicator& comm, const LinkTestOptions& o) {
  using Clock = std::chrono::steady_clock;
  std::vector<LinkTestResult> out;
  const int n = comm.size();
  const float mine = static_cast<float>(comm.rank() + 1);
  const float want = static_cast<float>(n) * static_cast<float>(n + 1) / 2.0f;
  for (int64_t bytes : o.sizes_bytes) {
    if (bytes < 4 || bytes > kMaxSizeBytes) return invalid_argument("link test size out of range");
    const int64_t count = bytes / 4;
    std::vector<float> buf(static_cast<size_t>(count), mine);
    // Warm-up (connections, pages), checked in full.
    ARC_RETURN_IF_ERROR(comm.all_reduce_sum(buf.data(), count));
    LinkTestResult r;
    r.correct = std::all_of(buf.begin(), buf.end(), [&](float v) { return v == want; });
    r.bytes = count * 4;
    r.iterations = o.iterations > 0 ? o.iterations : auto_iterations(r.bytes);
    // Zeros stay zeros; the first and last elements are refilled and checked every time (a
    // full refill would add a memory pass per all-reduce to the timing).
    std::fill(buf.begin(), buf.end(), 0.0f);
    ARC_RETURN_IF_ERROR(comm.barrier());
    const auto t0 = Clock::now();
    for (int i = 0; i < r.iterations; ++i) {
      buf.front() = mine;
      buf.back() = mine;
      ARC_RETURN_IF_ERROR(comm.all_reduce_sum(buf.data(), count));
      r.correct = r.correct && buf.front() == want && buf.back() == want;
    }
    const double total = std::chrono::duration<double>(Clock::now() - t0).count();
    r.correct = r.correct && buf[buf.size() / 2] == (buf.size() > 2 ? 0.0f : want);
    r.seconds = total / r.iterations;
    r.algbw_gbs = r.seconds > 0 ? static_cast<double>(r.bytes) / r.seconds / 1e9 : 0;
    r.busbw_gbs = r.algbw_gbs * 2.0 * (n - 1) / n;
    out.push_back(r);
  }
  return out;
}

json to_json(const std::vector<LinkTestResult>& results) {
  json a = json::array();
  for (const auto& r : results) {
    a.push_back({{"bytes", r.bytes},
                 {"iterations", r.iterations},
                 {"seconds", r.seconds},
                 {"algbw_gbs", r.algbw_gbs},
                 {"busbw_gbs", r.busbw_gbs},
                 {"correct", r.correct}});
  }
  return a;
}

}  // namespace arc::cluster
