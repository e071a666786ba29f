// --backend auto: what it comes to in this build, checked against what the build and the machine
// have (the emulator's device never counts; without CUDA code or a device it is the CPU).
#include <gtest/gtest.h>

#include "arc/backend_factory.h"

namespace arc::testing {
namespace {

TEST(BackendChoice, NamedBackendsStayAsAsked) {
  for (const char* kind : {"cpu", "cuda"}) {
    auto c = resolve_backend(kind);
    ASSERT_TRUE(c.ok()) << c.status().message();
    EXPECT_EQ(c->kind, kind);
  }
}

TEST(BackendChoice, AutoFollowsTheBuildAndTheDevices) {
  auto c = resolve_backend("auto");
  ASSERT_TRUE(c.ok()) << c.status().message();
  const bool gpu = cuda_backend_built() && !cuda_backend_emulated() && cuda_device_count() > 0;
  EXPECT_EQ(c->kind, gpu ? "cuda" : "cpu") << c->reason;
  EXPECT_EQ(c->reason.rfind("auto: ", 0), 0u) << c->reason;
  if (!cuda_backend_built()) {
    EXPECT_NE(c->reason.find("no CUDA backend"), std::string::npos) << c->reason;
  } else if (cuda_backend_emulated()) {
    EXPECT_NE(c->reason.find("emulator"), std::string::npos) << c->reason;
  }
}

TEST(BackendChoice, UnknownNameIsAClearError) {
  auto c = resolve_backend("tpu");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("auto, cpu or cuda"), std::string::npos);
}

}  // namespace
}  // namespace arc::testing
