// `bench --profile-ops` on the CUDA emulator: the decode steps' work per kernel, counted by the
// emulated device (arc/backend_caps.h: DeviceKernelWork), so the cost of sampling against the
// forward shows without a GPU, as operations rather than time.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "arc/backend_caps.h"

namespace arc {

using KernelWorkTotals = std::map<std::string, DeviceKernelWork>;

// Adds one run's counts (since the device's last reset) into `totals`.
void add_kernel_work(KernelWorkTotals& totals, const std::vector<DeviceKernelWork>& run);

// True for the kernels that pick tokens from logits (candidates, argmax, top-k), as opposed to
// the forward.
bool is_sampling_kernel(const std::string& name);

// Operations per decoded token by kernel, most first, each with its share, and the sampling
// kernels' share of the whole step on its own line. Prints nothing when `totals` is empty.
void print_kernel_work(const KernelWorkTotals& totals, double dec_tokens);
nlohmann::json kernel_work_json(const KernelWorkTotals& totals, double dec_tokens);

}  // namespace arc
