#include <cstdio>

#include "commands.h"

namespace arc::cli {

void add_version_command(CLI::App& app, CliContext& ctx) {
  auto* cmd = app.add_subcommand("version", "Print the engine version and build features");
  cmd->callback([&ctx] {
    std::printf("arclight-engine %s\n", ARC_VERSION);
    ctx.exit_code = 0;
  });
}

}  // namespace arc::cli
