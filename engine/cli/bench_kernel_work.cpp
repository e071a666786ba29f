#include "bench_kernel_work.h"

#include <algorithm>
#include <cstdio>

namespace arc {
namespace {

std::vector<DeviceKernelWork> by_ops(const KernelWorkTotals& totals) {
  std::vector<DeviceKernelWork> v;
  for (const auto& [name, w] : totals) v.push_back(w);
  std::stable_sort(v.begin(), v.end(), [](const DeviceKernelWork& a, const DeviceKernelWork& b) {
    return a.ops > b.ops;
  });
  return v;
}

// "arc::kernels::cuda::detail::(anonymous namespace)::candidates_kernel" -> "candidates_kernel".
std::string short_name(const std::string& name) {
  const size_t colon = name.rfind("::");
  std::string s = colon == std::string::npos ? name : name.substr(colon + 2);
  const size_t angle = s.find('<');  // template arguments make the line unreadable
  if (angle != std::string::npos) s = s.substr(0, angle) + "<>";
  return s;
}

}  // namespace

void add_kernel_work(KernelWorkTotals& totals, const std::vector<DeviceKernelWork>& run) {
  for (const DeviceKernelWork& w : run) {
    DeviceKernelWork& t = totals[w.kernel];
    t.kernel = w.kernel;
    t.launches += w.launches;
    t.threads += w.threads;
    t.ops += w.ops;
  }
}

bool is_sampling_kernel(const std::string& name) {
  const std::string s = short_name(name);
  return s.starts_with("candidates") || s.starts_with("argmax") || s.starts_with("topk_");
}

void print_kernel_work(const KernelWorkTotals& totals, double dec_tokens) {
  if (totals.empty() || dec_tokens <= 0) return;
  uint64_t all = 0, sampling = 0;
  for (const auto& [name, w] : totals) {
    all += w.ops;
    if (is_sampling_kernel(name)) sampling += w.ops;
  }
  if (all == 0) return;
  std::printf(
      "decode kernels   operations/token  launches/token  share (emulated device: basic blocks "
      "executed by all CUDA threads, not time)\n");
  for (const DeviceKernelWork& w : by_ops(totals)) {
    std::printf("  %-32s %14.0f  %14.1f  %6.2f%%\n", short_name(w.kernel).c_str(),
                static_cast<double>(w.ops) / dec_tokens,
                static_cast<double>(w.launches) / dec_tokens,
                100.0 * static_cast<double>(w.ops) / static_cast<double>(all));
  }
  std::printf("  %-32s %14.0f  %14s  %6.2f%%\n", "sampling (of the whole step)",
              static_cast<double>(sampling) / dec_tokens, "",
              100.0 * static_cast<double>(sampling) / static_cast<double>(all));
}

nlohmann::json kernel_work_json(const KernelWorkTotals& totals, double dec_tokens) {
  uint64_t all = 0;
  for (const auto& [name, w] : totals) all += w.ops;
  nlohmann::json out = nlohmann::json::array();
  if (dec_tokens <= 0) return out;
  for (const DeviceKernelWork& w : by_ops(totals)) {
    out.push_back(
        {{"kernel", short_name(w.kernel)},
         {"sampling", is_sampling_kernel(w.kernel)},
         {"ops_per_token", static_cast<double>(w.ops) / dec_tokens},
         {"launches_per_token", static_cast<double>(w.launches) / dec_tokens},
         {"share", all > 0 ? static_cast<double>(w.ops) / static_cast<double>(all) : 0.0}});
  }
  return out;
}

}  // namespace arc
