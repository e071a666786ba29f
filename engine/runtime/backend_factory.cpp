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

int default_cuda_device(int local_rank) {
  const int n = local_rank >= 0 ? cuda_device_count() : 0;
  return n > 0 ? local_rank % n : 0;
}

}  // namespace arc
