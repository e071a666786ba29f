// Subcommands of arclight-engine. Each lives in cmd_<name>.cpp and registers itself on the app:
// it declares its flags and sets the callback that runs it. A callback returns the process exit
// code (0 ok, 1 failure, 2 bad usage) through CliContext::exit_code.
#pragma once

#include <CLI/CLI.hpp>

namespace arc::cli {

struct CliContext {
  int exit_code = 0;
};

void add_version_command(CLI::App& app, CliContext& ctx);
void add_serve_command(CLI::App& app, CliContext& ctx);
void add_make_test_model_command(CLI::App& app, CliContext& ctx);
void add_bench_command(CLI::App& app, CliContext& ctx);
void add_run_command(CLI::App& app, CliContext& ctx);
void add_fit_command(CLI::App& app, CliContext& ctx);
void add_inspect_command(CLI::App& app, CliContext& ctx);
void add_chat_template_command(CLI::App& app, CliContext& ctx);
void add_tokenize_command(CLI::App& app, CliContext& ctx);
void add_bench_serve_command(CLI::App& app, CliContext& ctx);
void add_probe_command(CLI::App& app, CliContext& ctx);
void add_bench_grammar_command(CLI::App& app, CliContext& ctx);
void add_eval_command(CLI::App& app, CliContext& ctx);
void add_man_command(CLI::App& app, CliContext& ctx);

}  // namespace arc::cli
