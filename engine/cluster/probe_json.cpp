// The probe as JSON (GET /engine/cluster, `probe --json`) and as text (`probe`). Absent fields
// are left out of the JSON rather than written as zeros.
#include <cstdio>

#include "arc/cluster_probe.h"

namespace arc::cluster {
namespace {

using nlohmann::json;

template <typename T>
void put(json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}
void put(json& j, const char* key, const std::string& v) {
  if (!v.empty()) j[key] = v;
}

std::string gib(std::optional<uint64_t> b) {
  if (!b) return "?";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(*b) / (1u << 30));
  return buf;
}

}  // namespace

json to_json(const Finding& f) {
  return {{"code", f.code},
          {"severity", std::string(severity_name(f.severity))},
          {"subject", f.subject},
          {"message", f.message}};
}

json to_json(const NodeProbe& n) {
  json j = json::object();
  j["hostname"] = n.hostname;
  json cpu = json::object();
  put(cpu, "model", n.cpu_model);
  put(cpu, "cores", n.cpu_cores);
  j["cpu"] = cpu;
  json mem = json::object();
  const MemoryState& m = n.memory;
  put(mem, "total_bytes", m.total_bytes);
  put(mem, "available_bytes", m.available_bytes);
  put(mem, "swap_total_bytes", m.swap_total_bytes);
  put(mem, "swap_used_bytes", m.swap_used_bytes());
  put(mem, "page_cache_bytes", m.page_cache_bytes);
  put(mem, "dirty_bytes", m.dirty_bytes);
  put(mem, "swappiness", m.swappiness);
  j["memory"] = mem;
  json gpus = json::array();
  for (const auto& g : n.gpus) {
    json gj = {
        {"name", g.name},
        {"compute_capability", std::to_string(g.cc_major) + "." + std::to_string(g.cc_minor)}};
    put(gj, "total_bytes", g.total_bytes);
    put(gj, "free_bytes", g.free_bytes);
    gpus.push_back(std::move(gj));
  }
  j["gpus"] = gpus;
  if (n.gpus.empty()) j["gpu_note"] = n.gpu_note.empty() ? "none" : n.gpu_note;
  json rdma = json::array();
  for (const auto& d : n.rdma) {
    json dj = {{"name", d.name}};
    put(dj, "pci_address", d.pci_address);
    put(dj, "board_id", d.board_id);
    put(dj, "fw_ver", d.fw_ver);
    json ports = json::array();
    for (const auto& p : d.ports) {
      json pj = {{"port", p.number}, {"active", p.active()}, {"link_up", p.link_up()}};
      put(pj, "state", p.state);
      put(pj, "state_code", p.state_code);
      put(pj, "phys_state", p.phys_state);
      put(pj, "phys_state_code", p.phys_state_code);
      put(pj, "rate", p.rate);
      put(pj, "rate_gbps", p.rate_gbps);
      put(pj, "link_layer", p.link_layer);
      if (p.netdev) {
        json nj = {{"name", p.netdev->name}};
        put(nj, "mtu", p.netdev->mtu);
        put(nj, "operstate", p.netdev->operstate);
        put(nj, "speed_mbps", p.netdev->speed_mbps);
        pj["netdev"] = std::move(nj);
      }
      ports.push_back(std::move(pj));
    }
    dj["ports"] = std::move(ports);
    rdma.push_back(std::move(dj));
  }
  j["rdma"] = rdma;
  json findings = json::array();
  for (const auto& f : diagnose(n)) findings.push_back(to_json(f));
  j["findings"] = findings;
  return j;
}

std::string format_text(const NodeProbe& n) {
  std::string s;
  auto line = [&](const std::string& l) { s += l + "\n"; };
  line("host        " + (n.hostname.empty() ? std::string("?") : n.hostname));
  line("cpu         " + (n.cpu_model.empty() ? std::string("?") : n.cpu_model) +
       (n.cpu_cores ? " (" + std::to_string(*n.cpu_cores) + " logical CPUs)" : ""));
  const MemoryState& m = n.memory;
  line("memory      " + gib(m.available_bytes) + " available of " + gib(m.total_bytes));
  const std::string swappiness =
      m.swappiness ? " (swappiness " + std::to_string(*m.swappiness) + ")" : "";
  if (m.swap_total_bytes == uint64_t{0}) {
    line("swap        off" + swappiness);
  } else {
    line("swap        " + gib(m.swap_used_bytes()) + " used of " + gib(m.swap_total_bytes) +
         swappiness);
  }
  line("page cache  " + gib(m.page_cache_bytes) + " (dirty " + gib(m.dirty_bytes) + ")");
  if (n.gpus.empty()) line("gpu         none (" + (n.gpu_note.empty() ? "none" : n.gpu_note) + ")");
  for (const auto& g : n.gpus) {
    std::string l = "gpu         " + g.name + " (sm_" + std::to_string(g.cc_major) +
                    std::to_string(g.cc_minor) + "), " + gib(g.total_bytes);
    if (g.free_bytes) l += ", " + gib(g.free_bytes) + " free";
    line(l);
  }
  if (n.rdma.empty()) line("rdma        none");
  for (const auto& d : n.rdma) {
    line("rdma        " + d.name + (d.pci_address.empty() ? "" : " (" + d.pci_address + ")"));
    for (const auto& p : d.ports) {
      std::string l = "  port " + std::to_string(p.number) + "    " +
                      (p.state.empty() ? "?" : p.state) + ", " +
                      (p.phys_state.empty() ? "?" : p.phys_state);
      if (!p.rate.empty()) l += ", " + p.rate;
      if (!p.link_layer.empty()) l += ", " + p.link_layer;
      if (p.netdev) {
        l += ", " + p.netdev->name;
        if (p.netdev->mtu) l += " mtu " + std::to_string(*p.netdev->mtu);
        if (!p.netdev->operstate.empty()) l += " " + p.netdev->operstate;
      }
      line(l);
    }
  }
  const auto findings = diagnose(n);
  if (!findings.empty()) line("");
  for (const auto& f : findings) line(std::string(severity_name(f.severity)) + ": " + f.message);
  return s;
}

}  // namespace arc::cluster
