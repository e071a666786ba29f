#include "arc/host_memory.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace arc {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kChunk = size_t{64} << 20;  // bytes per pread and page-cache drop

struct FileDescriptor {
  int fd = -1;
  ~FileDescriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

Result<HostMemory> HostMemory::allocate(size_t bytes) {
  HostMemory m;
  m.size_ = bytes;
#if defined(__linux__)
  if (bytes >= kHugePage) {
    // Map one huge page more than needed, then trim both ends to a 2 MiB aligned range: the
    // kernel can back an aligned range with huge pages from the first byte.
    const size_t len = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    void* raw =
        mmap(nullptr, len + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) {
      return resource_exhausted("cannot allocate " + std::to_string(bytes) +
                                " bytes of host memory: " + std::strerror(errno));
    }
    auto* base = static_cast<uint8_t*>(raw);
    const auto addr = reinterpret_cast<uintptr_t>(base);
    uint8_t* aligned = base + ((kHugePage - addr % kHugePage) % kHugePage);
    if (aligned > base) munmap(base, static_cast<size_t>(aligned - base));
    const size_t tail = static_cast<size_t>(base + len + kHugePage - (aligned + len));
    if (tail > 0) munmap(aligned + len, tail);
    m.data_ = aligned;
    m.mapped_ = len;
    // Advice only: where THP is off the memory works the same on small pages.
    m.huge_ = madvise(aligned, len, MADV_HUGEPAGE) == 0;
    return m;
  }
#endif
  const size_t rounded = std::max<size_t>(64, (bytes + 63) / 64 * 64);
  m.data_ = static_cast<uint8_t*>(std::aligned_alloc(64, rounded));
  if (m.data_ == nullptr) {
    return resource_exhausted("cannot allocate " + std::to_string(bytes) + " bytes of host memory");
  }
  std::memset(m.data_, 0, rounded);
  return m;
}

HostMemory::~HostMemory() {
  reset();
}

HostMemory::HostMemory(HostMemory&& other) noexcept
    : data_(other.data_), size_(other.size_), mapped_(other.mapped_), huge_(other.huge_) {
  other.data_ = nullptr;
  other.size_ = other.mapped_ = 0;
}

HostMemory& HostMemory::operator=(HostMemory&& other) noexcept {
  if (this != &other) {
    reset();
    data_ = other.data_;
    size_ = other.size_;
    mapped_ = other.mapped_;
    huge_ = other.huge_;
    other.data_ = nullptr;
    other.size_ = other.mapped_ = 0;
  }
  return *this;
}

void HostMemory::reset() {
#if defined(__linux__)
  if (mapped_ > 0) {
    munmap(data_, mapped_);
  } else {
    std::free(data_);
  }
#else
  std::free(data_);
#endif
  data_ = nullptr;
  size_ = mapped_ = 0;
}

std::string parse_thp_mode(std::string_view enabled_file) {
  const size_t open = enabled_file.find('[');
  const size_t close = enabled_file.find(']', open == std::string_view::npos ? 0 : open);
  if (open == std::string_view::npos || close == std::string_view::npos) return {};
  return std::string(enabled_file.substr(open + 1, close - open - 1));
}

uint64_t parse_anon_huge_bytes(std::string_view smaps_rollup) {
  constexpr std::string_view kKey = "AnonHugePages:";
  size_t at = smaps_rollup.find(kKey);
  if (at == std::string_view::npos) return 0;
  at += kKey.size();
  while (at < smaps_rollup.size() && smaps_rollup[at] == ' ') ++at;
  uint64_t kb = 0;
  for (; at < smaps_rollup.size() && smaps_rollup[at] >= '0' && smaps_rollup[at] <= '9'; ++at) {
    kb = kb * 10 + static_cast<uint64_t>(smaps_rollup[at] - '0');
  }
  return kb * 1024;
}

HugePageReport huge_page_report() {
  auto slurp = [](const char* path) {
    std::ifstream f(path);
    std::ostringstream ss;
    ss << f.rdbuf();
    return ss.str();
  };
  HugePageReport r;
  r.mode = parse_thp_mode(slurp("/sys/kernel/mm/transparent_hugepage/enabled"));
  r.anon_huge_bytes = parse_anon_huge_bytes(slurp("/proc/self/smaps_rollup"));
  return r;
}

Status read_file_rows(const std::string& path, uint64_t offset, uint64_t n_rows, uint64_t stride,
                      uint64_t take_offset, uint64_t take_bytes, uint8_t* dst,
                      const ReadProgressFn& progress) {
  if (take_offset + take_bytes > stride) {
    return invalid_argument("reading " + path + ": a row part lies outside its row");
  }
  const FileDescriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  const int fd = file.fd;
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) return not_found("no such file: " + path);
    return io_error("cannot open " + path + ": " + std::strerror(err));
  }
  const uint64_t total = n_rows * stride;
  if (n_rows == 0 || take_bytes == 0) return ok_status();  // nothing to keep
  if (take_bytes == stride) {                              // whole rows: one contiguous range
    n_rows = 1;
    stride = take_bytes = total;
  }
  posix_fadvise(fd, static_cast<off_t>(offset), static_cast<off_t>(total), POSIX_FADV_SEQUENTIAL);
  // Reads [at, at + len) of the file into `into`, then drops it from the page cache.
  auto read_exact = [&](uint8_t* into, uint64_t at, uint64_t len) -> Status {
    for (uint64_t got = 0; got < len;) {
      const ssize_t r =
          pread(fd, into + got, static_cast<size_t>(len - got), static_cast<off_t>(at + got));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return io_error("cannot read " + path + ": " + std::strerror(errno));
      if (r == 0) {
        return data_loss(path + " ends at byte " + std::to_string(at + got) +
                         " but its tensors reach byte " + std::to_string(offset + total) +
                         " (truncated download?)");
      }
      got += static_cast<uint64_t>(r);
    }
    posix_fadvise(fd, static_cast<off_t>(at), static_cast<off_t>(len), POSIX_FADV_DONTNEED);
    return ok_status();
  };
  uint64_t done = 0;  // bytes stored into dst
  if (take_bytes >= kChunk / 64 || stride >= kChunk) {
    // One range, parts large enough to read on their own, or rows too long to stage whole:
    // straight into dst, in chunks.
    for (uint64_t row = 0; row < n_rows; ++row) {
      for (uint64_t part = 0; part < take_bytes; part += kChunk) {
        const uint64_t len = std::min<uint64_t>(kChunk, take_bytes - part);
        ARC_RETURN_IF_ERROR(read_exact(dst + row * take_bytes + part,
                                       offset + row * stride + take_offset + part, len));
        done += len;
        if (progress && !progress(done)) return cancelled("reading " + path + " was cancelled");
      }
    }
    return ok_status();
  }
  // Small parts of many rows (column shards): whole rows through a staging buffer.
  const uint64_t rows_per_chunk = std::max<uint64_t>(1, kChunk / stride);
  std::vector<uint8_t> staging(static_cast<size_t>(std::min(rows_per_chunk, n_rows) * stride));
  for (uint64_t row = 0; row < n_rows; row += rows_per_chunk) {
    const uint64_t rows = std::min(rows_per_chunk, n_rows - row);
    ARC_RETURN_IF_ERROR(read_exact(staging.data(), offset + row * stride, rows * stride));
    for (uint64_t i = 0; i < rows; ++i) {
      std::memcpy(dst + (row + i) * take_bytes, staging.data() + i * stride + take_offset,
                  static_cast<size_t>(take_bytes));
    }
    done += rows * take_bytes;
    if (progress && !progress(done)) return cancelled("reading " + path + " was cancelled");
  }
  return ok_status();
}

}  // namespace arc
