// make_backend(): the backend a command line names.
#include "arc/backend_factory.h"

namespace arc {

Result<std::unique_ptr<Backend>> make_backend(const BackendOptions& opt) {
  if (opt.kind == "cpu") {
    return make_cpu_backend(opt.threads,
                            opt.mmap_weights ? CpuWeights::kInPlace : CpuWeights::kCopy);
  }
  if (opt.kind == "cuda") return make_cuda_backend(opt.device, opt.cuda_graphs);
  return invalid_argument("unknown backend '" + opt.kind + "' (use cpu or cuda)");
}

Result<BackendChoice> resolve_backend(const std::string& kind) {
  if (kind == "cpu" || kind == "cuda") return BackendChoice{kind, "--backend " + kind};
  if (kind != "auto") {
    return invalid_argument("unknown backend '" + kind + "' (use auto, cpu or cuda)");
  }
  if (!cuda_backend_built()) return BackendChoice{"cpu", "auto: this build has no CUDA backend"};
  // The emulator is for tests: a thousand times slower than the CPU backend.
  if (cuda_backend_emulated()) {
    return BackendChoice{"cpu", "auto: this build's CUDA backend is the CPU emulator (tests only)"};
  }
  const int n = cuda_device_count();
  if (n <= 0)
    return BackendChoice{"cpu", "auto: no CUDA device is visible (driver or GPU missing)"};
  return BackendChoice{
      "cuda", "auto: " + std::to_string(n) + " CUDA device" + (n == 1 ? "" : "s") + " found"};
}

int default_cuda_device(int local_rank) {
  const int n = local_rank >= 0 ? cuda_device_count() : 0;
  return n > 0 ? local_rank % n : 0;
}

}  // namespace arc
