// --backend cpu|cuda and --device N for the subcommands that run a model (run, bench, serve).
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "arc/backend_factory.h"

namespace arc::cli {

inline void add_backend_flags(CLI::App* cmd, BackendOptions* o) {
  cmd->add_option("--backend", o->kind, "compute backend: cpu or cuda")
      ->capture_default_str()
      ->check(CLI::IsMember({"cpu", "cuda"}));
  cmd->add_option("--device", o->device, "CUDA device index (with --backend cuda)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1023));
  cmd->add_flag("!--no-cuda-graphs", o->cuda_graphs,
                "run CUDA decode steps op by op instead of as recorded graphs");
}

// The backend the flags name, with `threads` CPU threads. The CUDA backend holds weights in
// device memory, which tensor-parallel sharding (--tp > 1) cannot repack yet.
inline Result<std::unique_ptr<Backend>> open_backend(BackendOptions o, int threads, int tp = 1) {
  if (o.kind == "cuda" && tp > 1) {
    return unimplemented(
        "--backend cuda with --tp > 1 is not supported yet (NCCL tensor parallelism is still "
        "to come); run one rank per GPU with --tp 1 or use --backend cpu");
  }
  o.threads = threads;
  return make_backend(o);
}

}  // namespace arc::cli
