// Logging: one spdlog logger per subsystem ("gguf", "kernels", "server", ...), all writing to
// stderr with the same pattern; the level is set once from the command line.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <spdlog/spdlog.h>

#include "arc/status.h"

namespace arc {

// The logger for a subsystem, created on first use with the current level and sinks.
std::shared_ptr<spdlog::logger> logger(std::string_view subsystem);

// Sets the level of every logger, present and future: trace, debug, info, warn, error, off.
Status set_log_level(std::string_view level);

// The last `max_lines` lines every logger wrote (oldest first), as they appeared on stderr: the
// desktop app's engine log when it attaches to an engine it did not start (GET /engine/log).
// A fixed ring of kRecentLogLines lines, kept by the logging layer like spdlog's own registry.
inline constexpr size_t kRecentLogLines = 2000;
std::vector<std::string> recent_log_lines(size_t max_lines);

}  // namespace arc
