// diagnose: the seeds' checklist for a slow or freezing multi-box setup, applied to one probe.
#include <cstdio>
#include <map>
#include <set>

#include "arc/cluster_probe.h"

namespace arc::cluster {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;
constexpr uint64_t kMiB = uint64_t{1} << 20;
// RoCE carries at most a 4096-byte path MTU, which needs an interface MTU of about 4200 (RoCE
// and IP headers); below that the RDMA MTU drops to 2048 or 1024.
constexpr int64_t kRoceMtu = 4200;
// ConnectX-7 on a DGX Spark negotiates 200 Gb/s per QSFP port.
constexpr double kExpectedGbps = 200.0;

std::string gib(uint64_t b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(b) / kGiB);
  return buf;
}

// "0000:01:00.1" -> "0000:01" (one PCIe link; its functions share it).
std::string pci_link(const std::string& addr) {
  const auto last = addr.rfind(':');
  return last == std::string::npos ? addr : addr.substr(0, last);
}

}  // namespace

std::vector<Finding> diagnose(const NodeProbe& node) {
  std::vector<Finding> out;
  auto add = [&](std::string code, Severity sev, std::string subject, std::string message) {
    out.push_back({std::move(code), sev, std::move(subject), std::move(message)});
  };

  if (node.rdma.empty()) {
    add("rdma_none", Severity::kInfo, "rdma",
        "no RDMA device found: boxes talk over TCP (ConnectX-7 RoCE needs the mlx5 driver and "
        "rdma-core)");
  }
  bool any_active = false;
  // board -> PCIe link -> has an active port
  std::map<std::string, std::map<std::string, bool>> boards;
  for (const auto& d : node.rdma) {
    for (const auto& p : d.ports) {
      const std::string subj = d.name + " port " + std::to_string(p.number);
      if (p.active()) any_active = true;
      if (!d.board_id.empty() && !d.pci_address.empty()) {
        bool& a = boards[d.board_id][pci_link(d.pci_address)];
        a = a || p.active();
      }
      if (!p.phys_state.empty() && !p.link_up() && p.phys_state_code) {
        add("port_no_link", Severity::kInfo, subj,
            subj + ": no link (" + p.phys_state + "): no cable, or the other box's port is down");
        continue;
      }
      if (p.link_up() && !p.active()) {
        add("port_not_active", Severity::kWarning, subj,
            subj + ": link up but the RDMA port is " + (p.state.empty() ? "not active" : p.state) +
                ": check the interface is up and configured on both boxes");
      }
      if (!p.active() || !p.netdev) continue;
      const NetInterface& nd = *p.netdev;
      if (!nd.operstate.empty() && nd.operstate != "up") {
        add("netdev_down", Severity::kWarning, nd.name,
            nd.name + " (" + subj + ") is " + nd.operstate + ": bring it up (ip link set " +
                nd.name + " up)");
      }
      if (p.link_layer == "Ethernet" && nd.mtu && *nd.mtu < kRoceMtu) {
        add("mtu_small", Severity::kInfo, nd.name,
            nd.name + " has MTU " + std::to_string(*nd.mtu) +
                ": RoCE then uses a path MTU below 4096; set the same larger MTU (9000) on both "
                "boxes");
      }
      if (p.rate_gbps && *p.rate_gbps < kExpectedGbps) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%g", *p.rate_gbps);
        add("rate_low", Severity::kInfo, subj,
            subj + " runs at " + buf + " Gb/s (a DGX Spark QSFP port does 200): check the cable");
      }
    }
  }
  if (!node.rdma.empty() && !any_active) {
    add("rdma_none_active", Severity::kWarning, "rdma",
        "no RDMA port is active: multi-box traffic falls back to TCP (a fraction of the link)");
  }
  for (const auto& [board, links] : boards) {
    int active_links = 0;
    for (const auto& [link, active] : links) active_links += active ? 1 : 0;
    if (links.size() >= 2 && active_links == 1) {
      add("one_pcie_function", Severity::kInfo, board,
          "the NIC (board " + board +
              ") has active ports on only one of its PCIe links: one link tops out near 14 GB/s; "
              "use both interfaces of the cable (NCCL measured about 19 GB/s with both)");
    }
  }

  const MemoryState& m = node.memory;
  if (m.swap_total_bytes && *m.swap_total_bytes > 0) {
    const uint64_t used = m.swap_used_bytes().value_or(0);
    if (used > 64 * kMiB) {
      add("swap_used", Severity::kWarning, "swap",
          gib(used) +
              " of swap in use: on unified memory a box short of memory pages for hours "
              "instead of failing; free memory or load a smaller model");
    } else {
      add("swap_on", Severity::kInfo, "swap",
          "swap is on (" + gib(*m.swap_total_bytes) +
              "): past the memory, the box pages instead of failing with an out-of-memory error");
    }
  }
  if (m.total_bytes && m.page_cache_bytes && *m.page_cache_bytes * 4 > *m.total_bytes) {
    add("page_cache_large", Severity::kInfo, "page cache",
        gib(*m.page_cache_bytes) +
            " of page cache: on unified memory the GPU may not get it back in time; before a big "
            "load drop it (sync; echo 3 | sudo tee /proc/sys/vm/drop_caches)");
  }
  if (m.dirty_bytes && *m.dirty_bytes > kGiB) {
    add("dirty_large", Severity::kInfo, "page cache",
        gib(*m.dirty_bytes) + " of dirty pages waiting to be written: run sync before a load");
  }
  return out;
}

std::string_view severity_name(Severity s) {
  return s == Severity::kWarning ? "warning" : "info";
}

}  // namespace arc::cluster
