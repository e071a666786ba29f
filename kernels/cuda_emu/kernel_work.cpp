// What the emulated kernels did, per kernel name (emulator.h: kernel_work). The operation count is
// the number of basic blocks CUDA threads executed: the emulated build compiles the kernels with
// -fsanitize-coverage=trace-pc, so the compiler calls __sanitizer_cov_trace_pc at the start of
// every basic block of kernel code, and the hook below counts them per OS thread. The block
// scheduler reads that count around each grid it runs, so only device code is counted.
#include <algorithm>
#include <map>
#include <mutex>

#include "cuda_emu/emu_internal.h"

namespace arc::cuda_emu {

thread_local uint64_t t_kernel_ops = 0;

namespace {

struct WorkRegistry {
  std::mutex mu;
  std::map<std::string, KernelWork, std::less<>> by_name;
};

WorkRegistry& registry() {
  // Device-wide counters, one device per process (like the device's own performance counters).
  static WorkRegistry r;
  return r;
}

}  // namespace

void record_kernel_work(const char* name, uint64_t threads, uint64_t ops) {
  WorkRegistry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.by_name.find(std::string_view(name));
  if (it == r.by_name.end()) it = r.by_name.emplace(name, KernelWork{name, 0, 0, 0}).first;
  it->second.launches += 1;
  it->second.threads += threads;
  it->second.ops += ops;
}

std::vector<KernelWork> kernel_work() {
  WorkRegistry& r = registry();
  std::vector<KernelWork> out;
  {
    std::lock_guard<std::mutex> lock(r.mu);
    for (const auto& [name, w] : r.by_name) out.push_back(w);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const KernelWork& a, const KernelWork& b) { return a.ops > b.ops; });
  return out;
}

void reset_kernel_work() {
  device_wait_idle();  // what is in flight counts before the reset, not after
  WorkRegistry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.by_name.clear();
}

bool counts_operations() {
#if defined(ARC_CUDA_EMU_COUNT_OPS)
  return true;
#else
  return false;
#endif
}

}  // namespace arc::cuda_emu

// The coverage hook (GCC and Clang: -fsanitize-coverage=trace-pc). This file is not instrumented.
extern "C" void __sanitizer_cov_trace_pc() {
  ++arc::cuda_emu::t_kernel_ops;
}
