#include "arc/status.h"

#include <memory>

#include <gtest/gtest.h>

namespace arc {
namespace {

Result<int> parse_positive(int v) {
  if (v <= 0) return invalid_argument("value must be positive, got " + std::to_string(v));
  return v;
}

Result<int> doubled(int v) {
  ARC_ASSIGN_OR_RETURN(int x, parse_positive(v));
  return 2 * x;
}

Status check_both(int a, int b) {
  ARC_RETURN_IF_ERROR(parse_positive(a));
  ARC_RETURN_IF_ERROR(parse_positive(b));
  return ok_status();
}

TEST(Status, OkAndError) {
  Status ok;
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(ok.to_string(), "OK");
  Status bad = data_loss("file truncated at byte 12");
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.code(), StatusCode::kDataLoss);
  EXPECT_EQ(bad.to_string(), "DATA_LOSS: file truncated at byte 12");
  EXPECT_EQ(bad.with_context("model.gguf").message(), "model.gguf: file truncated at byte 12");
  EXPECT_TRUE(ok.with_context("ignored").ok());
}

TEST(Result, ValueAndPropagation) {
  auto good = doubled(4);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 8);
  auto bad = doubled(-1);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("-1"), std::string::npos);
  EXPECT_EQ(bad.value_or(7), 7);
  EXPECT_TRUE(check_both(1, 2).ok());
  EXPECT_EQ(check_both(1, 0).message(), "value must be positive, got 0");
}

TEST(Result, MoveOnlyValue) {
  Result<std::unique_ptr<int>> r(std::make_unique<int>(5));
  ASSERT_TRUE(r.ok());
  std::unique_ptr<int> p = std::move(r).value();
  EXPECT_EQ(*p, 5);
}

}  // namespace
}  // namespace arc
