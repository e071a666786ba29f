// Node probe: what one box has and what state it is in — CPU, memory, swap and page cache, GPU,
// RDMA devices and their ports with the network interface each maps to. Read from procfs and
// sysfs under a root path, so tests point it at a fake tree. Parsing is defensive: a missing file
// or an odd value leaves the field absent; the probe never fails as a whole.
//
// Findings turn the seeds' checklist for a slow or freezing two-box setup into named problems
// (a RoCE port down, a small MTU, only one of the ConnectX-7's PCIe functions in use, swap on,
// a large page cache on unified memory). Each has a stable code so the app can word it itself.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace arc::cluster {

// A network interface from /sys/class/net/NAME.
struct NetInterface {
  std::string name;
  std::optional<int64_t> mtu;
  std::string operstate;  // "up", "down", "unknown", ... (empty: unreadable)
  std::optional<int64_t> speed_mbps;
};

// One port of an RDMA device (/sys/class/infiniband/DEV/ports/N).
struct RdmaPort {
  int number = 0;
  std::optional<int> state_code;       // 1 DOWN, 2 INIT, 3 ARMED, 4 ACTIVE, 5 ACTIVE_DEFER
  std::string state;                   // "ACTIVE", "DOWN", ... (empty: unreadable)
  std::optional<int> phys_state_code;  // 5 LinkUp, 2 Polling, 3 Disabled, ...
  std::string phys_state;              // "LinkUp", "Polling", ...
  std::string rate;                    // as the kernel writes it: "200 Gb/sec (4X HDR)"
  std::optional<double> rate_gbps;     // its leading number
  std::string link_layer;              // "Ethernet" (RoCE) or "InfiniBand"
  std::optional<NetInterface> netdev;  // the interface the port carries (RoCE), when found
  bool active() const { return state_code.value_or(0) == 4 || state_code.value_or(0) == 5; }
  bool link_up() const { return phys_state_code.value_or(0) == 5; }
};

struct RdmaDevice {
  std::string name;         // mlx5_0, rocep1s0f0, ...
  std::string pci_address;  // 0000:01:00.0 (from device/uevent)
  std::string board_id;     // the same on every PCIe function of one card
  std::string fw_ver;
  std::vector<RdmaPort> ports;
};

struct MemoryState {
  std::optional<uint64_t> total_bytes;
  std::optional<uint64_t> available_bytes;
  std::optional<uint64_t> swap_total_bytes;
  std::optional<uint64_t> swap_free_bytes;
  std::optional<uint64_t> page_cache_bytes;  // Cached + Buffers
  std::optional<uint64_t> dirty_bytes;
  std::optional<int> swappiness;
  std::optional<uint64_t> swap_used_bytes() const {
    if (!swap_total_bytes || !swap_free_bytes || *swap_free_bytes > *swap_total_bytes)
      return std::nullopt;
    return *swap_total_bytes - *swap_free_bytes;
  }
};

struct GpuInfo {
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
  std::optional<uint64_t> total_bytes;
  std::optional<uint64_t> free_bytes;
};

struct NodeProbe {
  std::string hostname;
  std::string cpu_model;         // "model name", or the Arm cores by kind: "10x Cortex-X925 + ..."
  std::optional<int> cpu_cores;  // logical CPUs
  MemoryState memory;
  std::vector<GpuInfo> gpus;
  std::string gpu_note;  // why `gpus` is empty: "built without CUDA", "no CUDA device", ...
  std::vector<RdmaDevice> rdma;
};

enum class Severity : int { kInfo = 0, kWarning = 1 };

// One problem the probe shows. `code` is stable (the app words it); `message` is English.
struct Finding {
  std::string code;  // see diagnose()
  Severity severity = Severity::kInfo;
  std::string subject;  // "mlx5_0 port 1", "enp1s0f0np0", "swap", ...
  std::string message;
};

struct ProbeOptions {
  std::string root = "/";  // where proc/ and sys/ are
  bool gpu = true;         // ask the CUDA runtime (when built with CUDA)
  // Also ask for free GPU memory: this creates a CUDA context (hundreds of MB on unified
  // memory), so a CPU-only engine leaves it off.
  bool gpu_memory = false;
};

NodeProbe probe_node(const ProbeOptions& options = {});

// GPUs through the CUDA runtime (gpu_probe_cuda.cpp) or a note saying why there are none.
void probe_gpus(NodeProbe& node, bool with_memory);

// Codes: rdma_none, rdma_none_active, port_no_link, port_not_active, netdev_down, mtu_small,
// rate_low, one_pcie_function, swap_on, swap_used, page_cache_large, dirty_large.
std::vector<Finding> diagnose(const NodeProbe& node);

nlohmann::json to_json(const NodeProbe& node);  // includes "findings"
nlohmann::json to_json(const Finding& f);
std::string_view severity_name(Severity s);

// Plain-text report for `arclight-engine probe`.
std::string format_text(const NodeProbe& node);

}  // namespace arc::cluster
