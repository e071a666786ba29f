// probe_node: procfs and sysfs under a root path. Every read is bounded and optional: a file
// that is missing, unreadable or holds something unexpected leaves its field absent.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "arc/cluster_probe.h"

namespace arc::cluster {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxFileBytes = 1 << 20;  // /proc/cpuinfo of a 256-core box is ~300 KiB

std::optional<std::string> read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return std::nullopt;
  std::string s(kMaxFileBytes, '\0');
  in.read(s.data(), static_cast<std::streamsize>(s.size()));
  s.resize(static_cast<size_t>(in.gcount()));
  if (in.bad()) return std::nullopt;
  return s;
}

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

// The first line of a small sysfs file, trimmed; empty when absent.
std::string read_line(const fs::path& p) {
  auto t = read_text(p);
  if (!t) return {};
  return trim(std::string_view(*t).substr(0, t->find('\n')));
}

std::optional<int64_t> parse_int(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end == s.data()) return std::nullopt;
  return v;
}

std::optional<int64_t> read_int(const fs::path& p) {
  const std::string l = read_line(p);
  if (l.empty()) return std::nullopt;
  auto v = parse_int(l);
  // The whole line must be the number ("1500", not "1500abc").
  if (v && std::to_string(*v) != l) return std::nullopt;
  return v;
}

// "4: ACTIVE" -> (4, "ACTIVE"); "LinkUp" alone -> (none, "LinkUp").
void split_coded(const std::string& line, std::optional<int>& code, std::string& text) {
  const auto colon = line.find(':');
  if (colon == std::string::npos) {
    text = line;
    return;
  }
  auto v = parse_int(std::string_view(line).substr(0, colon));
  if (v && *v >= 0 && *v < 1000) code = static_cast<int>(*v);
  text = trim(std::string_view(line).substr(colon + 1));
}

std::vector<std::string> list_dir(const fs::path& p) {
  std::vector<std::string> out;
  std::error_code ec;
  fs::directory_iterator it(p, ec), end;
  for (; !ec && it != end; it.increment(ec)) out.push_back(it->path().filename().string());
  // Natural order: mlx5_2 before mlx5_10, port 2 before port 10.
  std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) {
    if (a.size() != b.size()) return a.size() < b.size();
    return a < b;
  });
  return out;
}

// Calls fn(key, value) for every "key: value" line of a procfs text (lines without a colon are
// skipped; key and value are untrimmed views into `text`).
template <class Fn>
void for_each_key_value(std::string_view text, Fn&& fn) {
  size_t at = 0;
  while (at < text.size()) {
    size_t nl = text.find('\n', at);
    if (nl == std::string_view::npos) nl = text.size();
    const std::string_view line = text.substr(at, nl - at);
    at = nl + 1;
    const auto colon = line.find(':');
    if (colon != std::string_view::npos) fn(line.substr(0, colon), line.substr(colon + 1));
  }
}

void read_meminfo(const fs::path& root, MemoryState& m) {
  auto text = read_text(root / "proc/meminfo");
  if (!text) return;
  std::map<std::string, uint64_t> kib;
  for_each_key_value(*text, [&](std::string_view key, std::string_view value) {
    auto v = parse_int(value);
    // Values are in kB; a negative or absurd one (over 2^50 kB) is not believed.
    if (v && *v >= 0 && *v <= (int64_t{1} << 50)) kib[std::string(key)] = static_cast<uint64_t>(*v);
  });
  auto get = [&](const char* key) -> std::optional<uint64_t> {
    auto it = kib.find(key);
    if (it == kib.end()) return std::nullopt;
    return it->second * 1024;
  };
  m.total_bytes = get("MemTotal");
  m.available_bytes = get("MemAvailable");
  m.swap_total_bytes = get("SwapTotal");
  m.swap_free_bytes = get("SwapFree");
  m.dirty_bytes = get("Dirty");
  auto cached = get("Cached"), buffers = get("Buffers");
  if (cached || buffers) m.page_cache_bytes = cached.value_or(0) + buffers.value_or(0);
  if (auto s = read_int(root / "proc/sys/vm/swappiness"); s && *s >= 0 && *s <= 200) {
    m.swappiness = static_cast<int>(*s);
  }
}

// Arm cores have no "model name": name them from their part numbers (GB10: 10 Cortex-X925 +
// 10 Cortex-A725; Grace: Neoverse-V2).
std::string arm_core_name(int64_t implementer, int64_t part) {
  if (implementer == 0x41) {
    switch (part) {
      case 0xd85:
        return "Cortex-X925";
      case 0xd87:
        return "Cortex-A725";
      case 0xd4f:
        return "Neoverse-V2";
      case 0xd8e:
        return "Neoverse-N3";
      case 0xd0c:
        return "Neoverse-N1";
      case 0xd40:
        return "Neoverse-V1";
    }
  }
  char buf[48];
  std::snprintf(buf, sizeof buf, "Arm core 0x%llx:0x%llx", static_cast<long long>(implementer),
                static_cast<long long>(part));
  return buf;
}

void read_cpuinfo(const fs::path& root, NodeProbe& n) {
  auto text = read_text(root / "proc/cpuinfo");
  if (!text) return;
  int processors = 0;
  std::string model;
  int64_t implementer = -1;
  std::vector<std::string> arm;  // one per processor, in order
  for_each_key_value(*text, [&](std::string_view raw_key, std::string_view raw_value) {
    const std::string key = trim(raw_key);
    const std::string value = trim(raw_value);
    if (key == "processor") {
      ++processors;
    } else if (key == "model name" && model.empty()) {
      model = value;
    } else if (key == "CPU implementer") {
      implementer = std::strtoll(value.c_str(), nullptr, 0);
    } else if (key == "CPU part" && implementer >= 0) {
      arm.push_back(arm_core_name(implementer, std::strtoll(value.c_str(), nullptr, 0)));
    }
  });
  if (processors > 0) n.cpu_cores = processors;
  if (!model.empty()) {
    n.cpu_model = model;
    return;
  }
  // "10x Cortex-X925 + 10x Cortex-A725", in order of first appearance.
  std::vector<std::pair<std::string, int>> counts;
  for (const auto& a : arm) {
    auto it = std::find_if(counts.begin(), counts.end(), [&](auto& c) { return c.first == a; });
    if (it == counts.end()) {
      counts.push_back({a, 1});
    } else {
      ++it->second;
    }
  }
  for (const auto& [name, k] : counts) {
    if (!n.cpu_model.empty()) n.cpu_model += " + ";
    n.cpu_model += std::to_string(k) + "x " + name;
  }
}

NetInterface read_netdev(const fs::path& root, const std::string& name) {
  NetInterface d;
  d.name = name;
  const fs::path dir = root / "sys/class/net" / name;
  if (auto mtu = read_int(dir / "mtu"); mtu && *mtu > 0 && *mtu < (1 << 20)) d.mtu = *mtu;
  d.operstate = read_line(dir / "operstate");
  // speed reads -1 (or fails with EINVAL) while the link is down.
  if (auto s = read_int(dir / "speed"); s && *s > 0) d.speed_mbps = *s;
  return d;
}

bool valid_ifname(const std::string& s) {
  if (s.empty() || s.size() > 15 || s == "." || s == "..") return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' ||
           c == '@';
  });
}

// The interface a port carries: the RoCE GID table names it (gid_attrs/ndevs/0); otherwise the
// PCI function's net/ folder, matched by dev_port when it lists several.
std::optional<NetInterface> port_netdev(const fs::path& root, const fs::path& dev_dir, int port) {
  std::string name = read_line(dev_dir / "ports" / std::to_string(port) / "gid_attrs/ndevs/0");
  if (!valid_ifname(name)) {
    name.clear();
    auto nets = list_dir(dev_dir / "device/net");
    if (nets.size() == 1) {
      name = nets.front();
    } else {
      for (const auto& n : nets) {
        auto dp = read_int(dev_dir / "device/net" / n / "dev_port");
        if (dp && *dp + 1 == port) name = n;
      }
    }
  }
  if (!valid_ifname(name)) return std::nullopt;
  return read_netdev(root, name);
}

void read_rdma(const fs::path& root, NodeProbe& n) {
  const fs::path base = root / "sys/class/infiniband";
  for (const auto& name : list_dir(base)) {
    const fs::path dir = base / name;
    RdmaDevice d;
    d.name = name;
    d.board_id = read_line(dir / "board_id");
    d.fw_ver = read_line(dir / "fw_ver");
    if (auto ue = read_text(dir / "device/uevent")) {
      const std::string key = "PCI_SLOT_NAME=";
      auto p = ue->find(key);
      if (p != std::string::npos) {
        auto e = ue->find('\n', p);
        d.pci_address =
            trim(ue->substr(p + key.size(), e == std::string::npos ? e : e - p - key.size()));
      }
    }
    for (const auto& ps : list_dir(dir / "ports")) {
      auto num = parse_int(ps);
      if (!num || *num <= 0 || *num > 255 || std::to_string(*num) != ps) continue;
      RdmaPort p;
      p.number = static_cast<int>(*num);
      const fs::path pd = dir / "ports" / ps;
      split_coded(read_line(pd / "state"), p.state_code, p.state);
      split_coded(read_line(pd / "phys_state"), p.phys_state_code, p.phys_state);
      p.rate = read_line(pd / "rate");
      if (!p.rate.empty()) {
        char* end = nullptr;
        const double g = std::strtod(p.rate.c_str(), &end);
        if (end != p.rate.c_str() && g >= 0 && g < 1e5) p.rate_gbps = g;
      }
      p.link_layer = read_line(pd / "link_layer");
      p.netdev = port_netdev(root, dir, p.number);
      d.ports.push_back(std::move(p));
    }
    n.rdma.push_back(std::move(d));
  }
}

}  // namespace

NodeProbe probe_node(const ProbeOptions& options) {
  const fs::path root = options.root.empty() ? fs::path("/") : fs::path(options.root);
  NodeProbe n;
  n.hostname = read_line(root / "proc/sys/kernel/hostname");
  if (n.hostname.empty() && root == fs::path("/")) {
    char buf[256] = {};
    if (gethostname(buf, sizeof buf - 1) == 0) n.hostname = buf;
  }
  read_cpuinfo(root, n);
  read_meminfo(root, n.memory);
  read_rdma(root, n);
  if (options.gpu) {
    probe_gpus(n, options.gpu_memory);
  } else {
    n.gpu_note = "not probed";
  }
  return n;
}

}  // namespace arc::cluster
