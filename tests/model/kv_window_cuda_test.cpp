// Windowed KV pool of gpt-oss's sliding-window layers on the CUDA backend (the emulator where
// there is no GPU), with decode graphs: logits and greedy tokens equal to the full pool's on the
// same backend (kv_window_check.h). Label gpu: skips without a CUDA backend.
#include "arc/backend_factory.h"
#include "model/kv_window_check.h"

namespace arc::testing {
namespace {

TEST(KvWindowForward, SameLogitsAsTheFullPoolOnCuda) {
  if (auto probe = make_cuda_backend(0, /*graphs=*/true); !probe.ok()) {
    GTEST_SKIP() << probe.status().to_string();
  }
  check_windowed_pool(
      []() -> Result<std::unique_ptr<Backend>> { return make_cuda_backend(0, /*graphs=*/true); },
      5e-2f);
}

}  // namespace
}  // namespace arc::testing
