// rank_free_memory / check_rank_memory.
#include "arc/rank_memory.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "arc/backend_caps.h"

namespace arc {
namespace {

uint64_t mem_available_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("MemAvailable:", 0) == 0) {
      std::istringstream s(line.substr(13));
      uint64_t kib = 0;
      s >> kib;
      return kib * 1024;
    }
  }
  return 0;
}

std::string gib(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(bytes) / (1024.0 * 1024 * 1024));
  return buf;
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "?";
  return buf;
}

}  // namespace

Result<RankMemory> rank_free_memory(Backend& backend) {
  RankMemory m;
  if (auto* dev = dynamic_cast<DeviceReport*>(&backend)) {
    ARC_ASSIGN_OR_RETURN(m.available, dev->free_memory_bytes());
    m.where = "free on " + dev->device_description();
    return m;
  }
  m.available = mem_available_bytes();
  m.where = "available (MemAvailable)";
  return m;
}

Status check_rank_memory(const RankMemoryNeed& need, const RankMemory& free) {
  if (free.available == 0 || need.total() <= free.available) return ok_status();
  return resource_exhausted(
      host_name() + " lacks memory for its shard: it needs " + gib(need.total()) + " (weights " +
      gib(need.weights) + ", KV " + gib(need.kv) + ", workspace " + gib(need.workspace) +
      ", reserve " + gib(need.reserve) + ") but " + gib(free.available) + " is " + free.where +
      ". Free memory on that box, use a smaller quantization or a shorter --ctx-size");
}

}  // namespace arc
