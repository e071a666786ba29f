// Picking a backend by name: the CLI's --backend cpu|cuda and --device N.
#pragma once

#include <memory>
#include <string>

#include "arc/backend.h"
#include "arc/status.h"

namespace arc {

struct BackendOptions {
  std::string kind = "cpu";   // "cpu" or "cuda"
  int device = 0;             // CUDA device index
  int threads = 0;            // CPU threads (0: all online CPUs); the CUDA backend ignores it
  bool cuda_graphs = true;    // capture decode steps as CUDA graphs
  bool mmap_weights = false;  // CPU: read weights in place from the file (CpuWeights::kInPlace)
};

// The backend `opt` names, or an error a user can act on (unknown name, a build without CUDA,
// no driver or device, a device index out of range).
Result<std::unique_ptr<Backend>> make_backend(const BackendOptions& opt);

// The CUDA backend on `device` (arc/backend_caps.h: StepGraphs, WeightStreamer, DeviceReport).
// Fails with a clear message when this build has no CUDA backend or there is no usable device.
Result<std::unique_ptr<Backend>> make_cuda_backend(int device, bool graphs = true);

// True when this build contains the CUDA backend (it may still find no device at run time).
bool cuda_backend_built();

// True when that backend runs on the CPU emulation of CUDA (cmake --preset cuda-emu): one
// emulated device per process, so every rank of an mpirun job has its own.
bool cuda_backend_emulated();

// Free memory of CUDA device `device` now (what a load may use), or an error without one.
Result<uint64_t> cuda_free_memory_bytes(int device);

// What `--backend auto` (or an explicit name) comes to, and why, for the log and /engine/status.
struct BackendChoice {
  std::string kind;    // "cpu" or "cuda"
  std::string reason;  // e.g. "auto: CUDA device 0 found", "auto: this build has no CUDA backend"
};

// "auto": CUDA when this build has the (real, not emulated) CUDA backend and a device is
// visible, else the CPU. "cpu" and "cuda" stay as asked; anything else is an error.
Result<BackendChoice> resolve_backend(const std::string& kind);

// CUDA devices visible to this process (0 without the CUDA backend, a driver or a device).
int cuda_device_count();

// The device a rank uses when --device is not given: `local_rank` (its index among the ranks on
// its box, OMPI_COMM_WORLD_LOCAL_RANK, read by the CLI; -1 when not under mpirun) modulo the
// device count, so ranks sharing a box take different GPUs; 0 otherwise.
int default_cuda_device(int local_rank);

}  // namespace arc
