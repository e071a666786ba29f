#include "arc/log.h"

#include <gtest/gtest.h>

namespace arc {
namespace {

TEST(Log, OneLoggerPerSubsystemAndLevels) {
  auto a = logger("gguf");
  auto b = logger("gguf");
  EXPECT_EQ(a.get(), b.get());
  EXPECT_NE(logger("server").get(), a.get());
  ASSERT_TRUE(set_log_level("warn").ok());
  EXPECT_EQ(a->level(), spdlog::level::warn);
  EXPECT_EQ(logger("created_after")->level(), spdlog::level::warn);
  Status bad = set_log_level("loud");
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(set_log_level("info").ok());
}

}  // namespace
}  // namespace arc
