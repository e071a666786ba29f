// --backend cpu|cuda and --device N for the subcommands that run a model (run, bench, serve).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <memory>
#include <string>

#include "arc/backend_factory.h"
#include "arc/log.h"

namespace arc::cli {

// This process's index among the ranks on its box under mpirun (Open MPI sets
// OMPI_COMM_WORLD_LOCAL_RANK), -1 when not under mpirun. Read here, in the CLI only.
inline int mpi_local_rank() {
  const char* v = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  if (v == nullptr || *v == '\0') return -1;
  char* end = nullptr;
  const long r = std::strtol(v, &end, 10);
  return (*end == '\0' && r >= 0 && r < 4096) ? static_cast<int>(r) : -1;
}

// --device: -1 (the default) takes the local rank modulo the device count, so one box running
// several ranks gives each its own GPU (one rank per Spark: device 0).
inline constexpr const char* kDeviceHelp =
    "CUDA device index (with --backend cuda; default: the rank's local index under mpirun "
    "modulo the device count, else 0)";

inline constexpr const char* kMmapHelp =
    "CPU backend: read weights in place from the file mapping instead of copying them into "
    "huge-page memory (no second copy while loading, faster reloads, slower decode)";

// The CUDA runtime is only asked (for the device count) when the backend is cuda.
inline int resolve_device(const std::string& backend, int device) {
  if (device >= 0) return device;
  return backend == "cuda" ? default_cuda_device(mpi_local_rank()) : 0;
}

inline constexpr const char* kBackendHelp =
    "compute backend: auto (CUDA when a GPU is visible, else the CPU), cpu or cuda";

// --backend auto|cpu|cuda resolved (the CUDA runtime is asked only for auto), logged once.
inline Result<std::string> choose_backend(const std::string& kind) {
  ARC_ASSIGN_OR_RETURN(BackendChoice c, resolve_backend(kind));
  if (kind == "auto") logger("cli")->info("backend {} ({})", c.kind, c.reason);
  return c.kind;
}

inline void add_backend_flags(CLI::App* cmd, BackendOptions* o) {
  o->kind = "auto";
  cmd->add_option("--backend", o->kind, kBackendHelp)
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  o->device = -1;
  cmd->add_option("--device", o->device, kDeviceHelp)->check(CLI::Range(-1, 1023));
  cmd->add_flag("!--no-cuda-graphs", o->cuda_graphs,
                "run CUDA decode steps op by op instead of as recorded graphs");
  cmd->add_flag("--mmap", o->mmap_weights, kMmapHelp);
}

// --tp N and --tp-timeout S of the commands that run one job under mpirun (run, bench, eval).
inline void add_tp_flags(CLI::App* cmd, int* tp, double* tp_timeout) {
  cmd->add_option("--tp", *tp, "tensor-parallel ranks (run under mpirun -np N)")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  cmd->add_option("--tp-timeout", *tp_timeout,
                  "seconds a collective may take before the job is aborted (a rank died or hangs)")
      ->capture_default_str()
      ->check(CLI::Range(0.5, 3600.0));
}

// --moe-split tp|ep|auto: how a tensor-parallel job splits a MoE model's routed experts
// (arc/moe_split.h).
inline void add_moe_split_flag(CLI::App* cmd, std::string* moe_split) {
  cmd->add_option("--moe-split", *moe_split,
                  "with --tp: routed experts split by blocks of every expert (tp), whole experts "
                  "per rank (ep), or whichever loads the ranks more evenly (auto)")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "tp", "ep"}));
}

// The backend the flags name, with `threads` CPU threads. With --tp > 1 and --backend cuda each
// rank takes its own device and the forward's collectives run through NCCL.
inline Result<std::unique_ptr<Backend>> open_backend(BackendOptions o, int threads, int tp = 1) {
  (void)tp;
  ARC_ASSIGN_OR_RETURN(o.kind, choose_backend(o.kind));
  o.threads = threads;
  o.device = resolve_device(o.kind, o.device);
  return make_backend(o);
}

}  // namespace arc::cli
