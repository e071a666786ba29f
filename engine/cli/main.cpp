// arclight-engine: serve, run, bench, inspect and the other tools of the engine.
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include "arc/log.h"
#include "commands.h"

int main(int argc, char** argv) {
  CLI::App app{"arclight-engine: Mixture-of-Experts inference for DGX Spark clusters"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("arclight-engine ") + ARC_VERSION);
  std::string log_level = "info";
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error or off")
      ->capture_default_str();
  app.parse_complete_callback([&] {
    arc::Status s = arc::set_log_level(log_level);
    if (!s.ok()) throw CLI::ValidationError("--log-level", s.message());
  });

  arc::cli::CliContext ctx;
  arc::cli::add_version_command(app, ctx);
  arc::cli::add_serve_command(app, ctx);
  arc::cli::add_make_test_model_command(app, ctx);
  arc::cli::add_bench_command(app, ctx);
  arc::cli::add_run_command(app, ctx);
  arc::cli::add_fit_command(app, ctx);
  arc::cli::add_inspect_command(app, ctx);
  arc::cli::add_chat_template_command(app, ctx);
  arc::cli::add_tokenize_command(app, ctx);
  arc::cli::add_bench_serve_command(app, ctx);
  arc::cli::add_probe_command(app, ctx);
  arc::cli::add_bench_grammar_command(app, ctx);
  arc::cli::add_eval_command(app, ctx);
  arc::cli::add_man_command(app, ctx);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return ctx.exit_code;
}
