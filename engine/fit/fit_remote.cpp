// ModelSpec from a remote GGUF file's header (see arc/fit_remote.h).
#include "arc/fit_remote.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "arc/fit_gguf.h"
#include "arc/gguf.h"
#include "http_range.h"

namespace arc::fit {

namespace {

// Reads one file's header: the first range, then twice as much (only the missing bytes) while
// the parser says the header goes on.
Result<gguf::File> read_header(const std::string& url, const std::string& display,
                               const RemoteOptions& o, RemoteSpec& stats, uint64_t& size_out) {
  const HttpRangeOptions http{o.bearer_token, o.timeout_s};
  const uint64_t first = std::max<uint64_t>(o.first_range_bytes, 64);
  ARC_ASSIGN_OR_RETURN(HttpRange head, http_get_range(url, 0, first, http));
  ++stats.requests;
  std::vector<uint8_t> bytes = std::move(head.bytes);
  const uint64_t total = head.total_size;
  for (;;) {
    auto file = gguf::File::parse_header(bytes, total, display);
    if (file.ok() || file.status().code() != StatusCode::kOutOfRange || bytes.size() >= total) {
      stats.bytes_read += bytes.size();
      size_out = total;
      return file;
    }
    if (bytes.size() >= o.max_header_bytes) {
      return resource_exhausted(
          fmt::format("{}: the GGUF header is longer than {} MiB; this is not a model header "
                      "the fit calculator reads",
                      display, o.max_header_bytes >> 20));
    }
    const uint64_t want =
        std::min({total, o.max_header_bytes, static_cast<uint64_t>(bytes.size()) * 2});
    ARC_ASSIGN_OR_RETURN(HttpRange more,
                         http_get_range(url, bytes.size(), want - bytes.size(), http));
    ++stats.requests;
    if (more.total_size != total) {
      return data_loss(fmt::format("{} changed size between two requests ({} then {} bytes)",
                                   display, total, more.total_size));
    }
    bytes.insert(bytes.end(), more.bytes.begin(), more.bytes.end());
  }
}

}  // namespace

Result<RemoteSpec> model_spec_from_gguf_url(const std::string& url, const RemoteOptions& o) {
  const size_t q = url.find('?');
  const std::string bare = url.substr(0, q);
  const std::string query = q == std::string::npos ? std::string() : url.substr(q);
  const std::optional<gguf::SplitName> split = gguf::parse_split_name(bare);

  RemoteSpec out;
  std::vector<gguf::File> parts;
  const uint32_t n_parts = split ? split->count : 1;
  for (uint32_t i = 0; i < n_parts; ++i) {
    const std::string part = split ? gguf::split_part_name(*split, i + 1) : bare;
    uint64_t size = 0;
    auto file = read_header(part + query, part, o, out, size);
    if (!file.ok()) {
      return file.status().with_context(split ? fmt::format("part {} of {}", i + 1, n_parts)
                                              : std::string("reading the header"));
    }
    if (!split) {
      if (auto count = file->get_int("split.count"); count && *count > 1) {
        return invalid_argument(
            fmt::format("{} is part of a model split into {} files, but its name does not follow "
                        "NAME-0000i-of-0000N.gguf; give the first part's URL",
                        bare, *count));
      }
    }
    out.file_bytes += size;
    parts.push_back(std::move(*file));
  }
  Result<gguf::File> joined =
      split ? gguf::File::join_splits(std::move(parts), bare) : std::move(parts[0]);
  if (!joined.ok()) return joined.status();
  out.n_files = n_parts;
  ARC_ASSIGN_OR_RETURN(out.spec, model_spec_from_gguf(*joined));
  out.header.emplace(std::move(*joined));
  return out;
}

}  // namespace arc::fit
