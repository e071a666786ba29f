// Large host allocations on transparent huge pages where the OS offers them (Linux THP in
// "always" or "madvise" mode), and reading file ranges into them.
//
// Why: decode streams every active weight byte from DRAM once per token. On 4 KiB pages each
// 4 KiB of weights costs a TLB walk and restarts the hardware prefetcher (it does not cross
// pages); on 2 MiB pages neither happens. Measured on the 2-core Zen 5 test machine: a Q4_K
// matrix-vector product over 31 MiB runs 16% faster and a MoE decode step 12-20% faster from
// huge-page memory than from 4 KiB pages (bench_kernels, alternating runs).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "arc/status.h"

namespace arc {

// Zeroed, 64-byte aligned (2 MiB aligned and advised for huge pages when at least 2 MiB).
// Move-only; the destructor frees.
class HostMemory {
 public:
  static Result<HostMemory> allocate(size_t bytes);

  HostMemory() = default;
  ~HostMemory();
  HostMemory(HostMemory&& other) noexcept;
  HostMemory& operator=(HostMemory&& other) noexcept;
  HostMemory(const HostMemory&) = delete;
  HostMemory& operator=(const HostMemory&) = delete;

  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  // True when the OS accepted the huge-page advice (it may still back parts with small pages).
  bool huge_pages_advised() const { return huge_; }

 private:
  void reset();

  uint8_t* data_ = nullptr;
  size_t size_ = 0;    // bytes asked for
  size_t mapped_ = 0;  // bytes mapped (0: from aligned_alloc)
  bool huge_ = false;
};

// Transparent huge pages as this process sees them, for reports (bench): the system's THP mode
// ("always", "madvise" or "never"; empty where unknown) and the bytes of this process's memory
// on anonymous huge pages now (0 where unknown).
struct HugePageReport {
  std::string mode;
  uint64_t anon_huge_bytes = 0;
};
HugePageReport huge_page_report();
// The parsers behind it: the bracketed word of /sys/kernel/mm/transparent_hugepage/enabled, and
// the AnonHugePages line of /proc/self/smaps_rollup (kB) in bytes.
std::string parse_thp_mode(std::string_view enabled_file);
uint64_t parse_anon_huge_bytes(std::string_view smaps_rollup);

// Bytes read so far of a file read (for load progress); returning false stops the read, which
// then fails with kCancelled (a load the user cancelled).
using ReadProgressFn = std::function<bool(uint64_t done)>;

// Reads n_rows rows of `stride` bytes starting at byte `offset` of `path` and keeps bytes
// [take_offset, take_offset + take_bytes) of each, packed one after another into `dst` (n_rows
// * take_bytes). A whole range is one row (stride == take_bytes == size, take_offset 0). The file
// is read front to back in chunks with pread, and each chunk is dropped from the page cache once
// copied, so a load never holds the file twice. Errors name the file and what went wrong
// (missing, unreadable, shorter than the range).
Status read_file_rows(const std::string& path, uint64_t offset, uint64_t n_rows, uint64_t stride,
                      uint64_t take_offset, uint64_t take_bytes, uint8_t* dst,
                      const ReadProgressFn& progress = {});

}  // namespace arc
