// Builds without the CUDA backend (no CUDA toolkit, -DARC_WITH_CUDA=OFF, or no CUDA kernels
// library): the factory explains how to get one.
#include "arc/backend_factory.h"

namespace arc {

bool cuda_backend_built() {
  return false;
}

bool cuda_backend_emulated() {
  return false;
}

Result<uint64_t> cuda_free_memory_bytes(int /*device*/) {
  return unavailable("this build of arclight-engine has no CUDA backend");
}

int cuda_device_count() {
  return 0;
}

Result<std::unique_ptr<Backend>> make_cuda_backend(int /*device*/, bool /*graphs*/) {
  return unavailable(
      "this build of arclight-engine has no CUDA backend; rebuild with the CUDA toolkit "
      "installed (cmake --preset cuda), or use --backend cpu");
}

}  // namespace arc
