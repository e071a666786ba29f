// Emulated device memory: every allocation is its own mapping, placed so that its end (rounded
// up to 256 bytes, cudaMalloc's alignment) meets a PROT_NONE guard page. The rounding bytes are a
// canary checked after each kernel; the guard page catches anything further, and the SIGSEGV
// handler names the kernel and the allocation before the process dies (as a GPU would stop the
// context with an illegal address). New allocations are filled with 0xFF.
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <string>

#include "cuda_emu/emu_internal.h"

namespace arc::cuda_emu {
namespace {

constexpr unsigned char kCanary = 0xA5;
constexpr size_t kAlign = 256;

struct Allocation {
  void* map;         // the whole mapping
  size_t map_bytes;  // including the guard page
  size_t size;       // what the caller asked for
  size_t rounded;    // size rounded up to 256
};

struct HostRange {
  size_t size;
  bool owned;  // cudaMallocHost (freed by cudaFreeHost) or cudaHostRegister
};

// The emulated driver's memory tables: one per process, as a GPU context has one.
struct Tables {
  std::mutex mu;
  std::map<uintptr_t, Allocation> device;  // by user address
  std::map<uintptr_t, HostRange> pinned;
  size_t in_use = 0;
};

Tables& tables() {
  static Tables t;
  return t;
}

size_t page_size() {
  static const size_t p = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return p;
}

thread_local const char* t_kernel = nullptr;

template <typename V>
const typename std::map<uintptr_t, V>::value_type* find_range(const std::map<uintptr_t, V>& m,
                                                              uintptr_t p, size_t V::*size) {
  auto it = m.upper_bound(p);
  if (it == m.begin()) return nullptr;
  --it;
  return p < it->first + it->second.*size ? &*it : nullptr;
}

struct sigaction g_previous_segv;

void on_segv(int sig, siginfo_t* info, void* uctx) {
  const auto addr = reinterpret_cast<uintptr_t>(info->si_addr);
  // Look for the allocation whose guard page was hit (no locking: the process is going down).
  const Tables& t = tables();
  for (const auto& [user, a] : t.device) {
    const uintptr_t guard = reinterpret_cast<uintptr_t>(a.map) + a.map_bytes - page_size();
    if (addr >= guard && addr < guard + page_size()) {
      char buf[400];
      const int n = std::snprintf(
          buf, sizeof buf,
          "arclight CUDA emulator: illegal address in %s%s: %zu bytes past the end of a device "
          "allocation of %zu bytes (cudaErrorIllegalAddress on a GPU)\n",
          t_kernel != nullptr ? "kernel " : "host code", t_kernel != nullptr ? t_kernel : "",
          static_cast<size_t>(addr - user - a.size), a.size);
      if (n > 0) (void)!write(2, buf, static_cast<size_t>(n));
      break;
    }
  }
  sigaction(SIGSEGV, &g_previous_segv, nullptr);
  (void)sig;
  (void)uctx;
  raise(SIGSEGV);
}

}  // namespace

void set_running_kernel(const char* name) {
  t_kernel = name;
}

void install_fault_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa {};
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &g_previous_segv);
  });
}

void* device_alloc(size_t bytes, cudaError_t* err) {
  *err = cudaSuccess;
  if (bytes == 0) return nullptr;
  const DeviceSpec& d = device_spec();
  Tables& t = tables();
  const size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
  const size_t body = (rounded + page_size() - 1) / page_size() * page_size();
  const size_t map_bytes = body + page_size();
  {
    std::lock_guard<std::mutex> lock(t.mu);
    if (d.own_memory != 0 && t.in_use + rounded > d.own_memory) {
      *err = cudaErrorMemoryAllocation;
      return nullptr;
    }
  }
  void* map = mmap(nullptr, map_bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (map == MAP_FAILED) {
    *err = cudaErrorMemoryAllocation;
    return nullptr;
  }
  // Huge pages where the kernel allows them: filling a 512 MB scratch page by page costs more
  // fault handling than the fill itself.
  if (body >= (size_t{2} << 20)) madvise(map, body, MADV_HUGEPAGE);
  auto* guard = static_cast<unsigned char*>(map) + body;
  mprotect(guard, page_size(), PROT_NONE);
  unsigned char* user = guard - rounded;
  std::memset(user, 0xFF, bytes);
  std::memset(user + bytes, kCanary, rounded - bytes);
  std::lock_guard<std::mutex> lock(t.mu);
  t.device[reinterpret_cast<uintptr_t>(user)] = {map, map_bytes, bytes, rounded};
  t.in_use += rounded;
  return user;
}

cudaError_t device_free(void* p) {
  if (p == nullptr) return cudaSuccess;
  Tables& t = tables();
  std::lock_guard<std::mutex> lock(t.mu);
  auto it = t.device.find(reinterpret_cast<uintptr_t>(p));
  if (it == t.device.end()) return cudaErrorInvalidValue;
  munmap(it->second.map, it->second.map_bytes);
  t.in_use -= it->second.rounded;
  t.device.erase(it);
  return cudaSuccess;
}

size_t device_bytes_in_use() {
  std::lock_guard<std::mutex> lock(tables().mu);
  return tables().in_use;
}

MemKind classify(const void* p, size_t n) {
  Tables& t = tables();
  const auto a = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lock(t.mu);
  if (auto* d = find_range(t.device, a, &Allocation::size)) {
    return a + n <= d->first + d->second.size ? MemKind::kDevice : MemKind::kUnknown;
  }
  if (auto* h = find_range(t.pinned, a, &HostRange::size)) {
    return a + n <= h->first + h->second.size ? MemKind::kPinnedHost : MemKind::kUnknown;
  }
  return MemKind::kUnknown;
}

void* pinned_alloc(size_t bytes) {
  void* p = nullptr;
  if (posix_memalign(&p, 4096, bytes == 0 ? 1 : bytes) != 0) return nullptr;
  std::memset(p, 0xFF, bytes);
  std::lock_guard<std::mutex> lock(tables().mu);
  tables().pinned[reinterpret_cast<uintptr_t>(p)] = {bytes, true};
  return p;
}

bool pinned_free(void* p) {
  std::lock_guard<std::mutex> lock(tables().mu);
  auto it = tables().pinned.find(reinterpret_cast<uintptr_t>(p));
  if (it == tables().pinned.end() || !it->second.owned) return false;
  tables().pinned.erase(it);
  free(p);
  return true;
}

bool pinned_register(void* p, size_t bytes) {
  std::lock_guard<std::mutex> lock(tables().mu);
  return tables().pinned.emplace(reinterpret_cast<uintptr_t>(p), HostRange{bytes, false}).second;
}

bool pinned_unregister(void* p) {
  std::lock_guard<std::mutex> lock(tables().mu);
  auto it = tables().pinned.find(reinterpret_cast<uintptr_t>(p));
  if (it == tables().pinned.end() || it->second.owned) return false;
  tables().pinned.erase(it);
  return true;
}

std::string check_canaries() {
  Tables& t = tables();
  std::lock_guard<std::mutex> lock(t.mu);
  for (auto& [user, a] : t.device) {
    auto* tail = reinterpret_cast<unsigned char*>(user) + a.size;
    for (size_t i = 0; i < a.rounded - a.size; ++i) {
      if (tail[i] != kCanary) {
        std::memset(tail, kCanary, a.rounded - a.size);
        return "a device allocation of " + std::to_string(a.size) + " bytes (byte " +
               std::to_string(a.size + i) + " written)";
      }
    }
  }
  return {};
}

// Free device memory as the backend's memory guard sees it: on GB10 the host's available memory
// (unified memory), on H200 its own 141 GB less what is allocated.
void mem_info(size_t* free_b, size_t* total_b) {
  const DeviceSpec& d = device_spec();
  if (d.own_memory != 0) {
    *total_b = d.own_memory;
    *free_b = d.own_memory - device_bytes_in_use();
    return;
  }
  size_t total = 0, avail = 0;
  std::ifstream in("/proc/meminfo");
  std::string key;
  size_t kb = 0;
  std::string unit;
  while (in >> key >> kb >> unit) {
    if (key == "MemTotal:") total = kb * 1024;
    if (key == "MemAvailable:") avail = kb * 1024;
  }
  *total_b = total;
  *free_b = avail;
}

}  // namespace arc::cuda_emu
