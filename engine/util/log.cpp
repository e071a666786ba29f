#include "arc/log.h"

#include <mutex>
#include <string>

#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>

namespace arc {
namespace {

// spdlog keeps its own registry; this mutex only serialises creation so two threads asking for
// the same new subsystem do not race to register it.
std::mutex& creation_mutex() {
  static std::mutex m;
  return m;
}

constexpr const char* kPattern = "%Y-%m-%d %H:%M:%S.%e %^%-5l%$ [%n] %v";

// Every logger also writes to this ring (the recent log served at /engine/log).
const std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt>& recent_sink() {
  static const auto sink = [] {
    auto s = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(kRecentLogLines);
    s->set_pattern("%Y-%m-%d %H:%M:%S.%e %-5l [%n] %v");
    return s;
  }();
  return sink;
}

}  // namespace

std::vector<std::string> recent_log_lines(size_t max_lines) {
  return recent_sink()->last_formatted(max_lines);
}

std::shared_ptr<spdlog::logger> logger(std::string_view subsystem) {
  std::string name(subsystem);
  if (auto existing = spdlog::get(name)) return existing;
  std::lock_guard<std::mutex> lock(creation_mutex());
  if (auto existing = spdlog::get(name)) return existing;
  auto created = spdlog::stderr_color_mt(name);
  created->set_pattern(kPattern);
  created->sinks().push_back(recent_sink());  // after set_pattern: the ring keeps its own
  created->set_level(spdlog::get_level());
  return created;
}

Status set_log_level(std::string_view level) {
  auto parsed = spdlog::level::from_str(std::string(level));
  if (parsed == spdlog::level::off && level != "off") {
    return invalid_argument("unknown log level '" + std::string(level) +
                            "'; use trace, debug, info, warn, error or off");
  }
  spdlog::set_level(parsed);  // applies to every registered logger and the default for new ones
  return ok_status();
}

}  // namespace arc
