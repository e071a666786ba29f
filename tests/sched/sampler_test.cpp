#include "sched/sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace arc {
namespace {

TEST(Sampler, GreedyTopKOneAndTinyTopPPickTheArgmax) {
  const std::vector<float> l = {0.5f, 2.0f, -1.0f, 2.0f, 1.9f};
  EXPECT_EQ(argmax(l), 1);  // ties: lowest id
  EXPECT_EQ(Sampler({}).sample(l), 1);
  EXPECT_EQ(Sampler({1.0f, 1, 1.0f, 3}).sample(l), 1);
  EXPECT_EQ(Sampler({1.0f, 0, 1e-6f, 3}).sample(l), 1);
}

TEST(Sampler, TemperatureFollowsSoftmaxAndSeedRepeats) {
  const std::vector<float> l = {0.0f, std::log(2.0f), std::log(3.0f), -30.0f};
  Sampler a({1.0f, 0, 1.0f, 42}), b({1.0f, 0, 1.0f, 42});
  std::vector<int> count(4, 0);
  for (int i = 0; i < 6000; ++i) {
    const int32_t x = a.sample(l);
    EXPECT_EQ(x, b.sample(l));
    ++count[x];
  }
  // Expected 1000 / 2000 / 3000 / ~0; 5 sigma bounds.
  EXPECT_NEAR(count[0], 1000, 5 * 29);
  EXPECT_NEAR(count[1], 2000, 5 * 37);
  EXPECT_NEAR(count[2], 3000, 5 * 39);
  EXPECT_EQ(count[3], 0);
  // top_k = 2 never picks token 0; top_p = 0.5 keeps only token 2 (mass 0.5).
  Sampler k2({1.0f, 2, 1.0f, 1}), p5({1.0f, 0, 0.5f, 1});
  for (int i = 0; i < 500; ++i) {
    EXPECT_NE(k2.sample(l), 0);
    EXPECT_EQ(p5.sample(l), 2);
  }
}

TEST(Sampler, TopLogprobs) {
  const std::vector<float> l = {1.0f, 3.0f, 2.0f};
  const auto t = top_logprobs(l, 2);
  ASSERT_EQ(t.size(), 2u);
  const double lse = std::log(std::exp(1.0) + std::exp(3.0) + std::exp(2.0));
  EXPECT_EQ(t[0].token, 1);
  EXPECT_NEAR(t[0].logprob, 3.0 - lse, 1e-6);
  EXPECT_EQ(t[1].token, 2);
  EXPECT_NEAR(t[1].logprob, 2.0 - lse, 1e-6);
}

}  // namespace
}  // namespace arc
