#include "arc/log.h"

#include <mutex>
#include <string>

#include <spdlog/sinks/stdout_color_sinks.h>

namespace arc {
namespace {

// spdlog keeps its own registry; this mutex only serialises creation so two threads asking for
// the same new subsystem do not race to register it.
std::mutex& creation_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace

std::shared_ptr<spdlog::logger> logger(std::string_view subsystem) {
  std::string name(subsystem);
  if (auto existing = spdlog::get(name)) return existing;
  std::lock_guard<std::mutex> lock(creation_mutex());
  if (auto existing = spdlog::get(name)) return existing;
  auto created = spdlog::stderr_color_mt(name);
  created->set_pattern("%Y-%m-%d %H:%M:%S.%e %^%-5l%$ [%n] %v");
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
