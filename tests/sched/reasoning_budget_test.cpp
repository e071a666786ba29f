// The reasoning budget: after `budget` tokens inside the opened <think> block the closing tokens
// are forced, one by one; a model that writes "</think>" itself is never forced.
#include <gtest/gtest.h>

#include "sched/reasoning_budget.h"

namespace arc {
namespace {

// Feeds the model's tokens, taking a forced one instead wherever the budget forces; returns
// what was generated.
std::vector<int32_t> run(ReasoningBudget& b, const std::vector<int32_t>& model, size_t n) {
  std::vector<int32_t> out;
  for (size_t i = 0; out.size() < n; ++i) {
    const int32_t t = b.forced().value_or(i < model.size() ? model[i] : 99);
    b.accept(t);
    out.push_back(t);
  }
  return out;
}

TEST(ReasoningBudget, ForcesTheCloseAfterTheBudget) {
  ReasoningBudget b(3, {10, 11, 12}, {11});
  EXPECT_EQ(run(b, {1, 2, 3, 4, 5, 6, 7, 8}, 8), (std::vector<int32_t>{1, 2, 3, 10, 11, 12, 7, 8}));
  EXPECT_FALSE(b.open());
}

TEST(ReasoningBudget, ZeroClosesAtOnceAndNegativeNever) {
  ReasoningBudget zero(0, {10, 11}, {11});
  EXPECT_EQ(run(zero, {1, 2, 3}, 3), (std::vector<int32_t>{10, 11, 3}));
  ReasoningBudget none(-1, {10, 11}, {11});
  EXPECT_FALSE(none.open());
  EXPECT_EQ(run(none, {1, 2, 3}, 3), (std::vector<int32_t>{1, 2, 3}));
}

TEST(ReasoningBudget, TheModelsOwnCloseEndsIt) {
  // "</think>" in two tokens (20, 21), written by the model within the budget, after a false
  // start: nothing is forced later.
  ReasoningBudget b(5, {10, 20, 21, 10}, {20, 21});
  EXPECT_EQ(run(b, {20, 5, 20, 21, 6, 7, 8, 9}, 8),
            (std::vector<int32_t>{20, 5, 20, 21, 6, 7, 8, 9}));
  EXPECT_FALSE(b.open());
  // A restart of the tag right after a partial match still counts.
  ReasoningBudget c(5, {10}, {20, 21});
  EXPECT_EQ(run(c, {20, 20, 21, 6, 7, 8}, 6), (std::vector<int32_t>{20, 20, 21, 6, 7, 8}));
  EXPECT_FALSE(c.open());
}

}  // namespace
}  // namespace arc
