// Windowed KV pool of gpt-oss's sliding-window layers on the CPU backend: logits and greedy
// tokens equal to the full pool's (kv_window_check.h).
#include "model/kv_window_check.h"

namespace arc::testing {
namespace {

TEST(KvWindowForward, SameLogitsAsTheFullPoolOnTheCpu) {
  check_windowed_pool([]() -> Result<std::unique_ptr<Backend>> { return make_cpu_backend(2); },
                      1e-3f);
}

}  // namespace
}  // namespace arc::testing
