// Logging: one spdlog logger per subsystem ("gguf", "kernels", "server", ...), all writing to
// stderr with the same pattern; the level is set once from the command line.
#pragma once

#include <memory>
#include <string_view>

#include <spdlog/spdlog.h>

#include "arc/status.h"

namespace arc {

// The logger for a subsystem, created on first use with the current level and sinks.
std::shared_ptr<spdlog::logger> logger(std::string_view subsystem);

// Sets the level of every logger, present and future: trace, debug, info, warn, error, off.
Status set_log_level(std::string_view level);

}  // namespace arc
