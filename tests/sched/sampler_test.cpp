#include "sched/sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace arc {
namespace {

SamplingParams params(float temperature, int top_k, float top_p, uint64_t seed) {
  SamplingParams p;
  p.temperature = temperature;
  p.top_k = top_k;
  p.top_p = top_p;
  p.seed = seed;
  return p;
}

TEST(Sampler, GreedyTopKOneAndTinyTopPPickTheArgmax) {
  const std::vector<float> l = {0.5f, 2.0f, -1.0f, 2.0f, 1.9f};
  EXPECT_EQ(argmax(l), 1);  // ties: lowest id
  EXPECT_EQ(Sampler(params(0.0f, 0, 1.0f, 3)).sample(l), 1);
  EXPECT_EQ(Sampler(params(1.0f, 1, 1.0f, 3)).sample(l), 1);
  EXPECT_EQ(Sampler(params(1.0f, 0, 1e-6f, 3)).sample(l), 1);
}

TEST(Sampler, TemperatureFollowsSoftmaxAndSeedRepeats) {
  const std::vector<float> l = {0.0f, std::log(2.0f), std::log(3.0f), -30.0f};
  Sampler a(params(1.0f, 0, 1.0f, 42)), b(params(1.0f, 0, 1.0f, 42));
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
  Sampler k2(params(1.0f, 2, 1.0f, 1)), p5(params(1.0f, 0, 0.5f, 1));
  for (int i = 0; i < 500; ++i) {
    EXPECT_NE(k2.sample(l), 0);
    EXPECT_EQ(p5.sample(l), 2);
  }
}

TEST(Sampler, MinPDropsUnlikelyTokens) {
  // Probabilities 1/6, 2/6, 3/6 (+ ~0): min_p 0.5 keeps tokens whose p >= 0.5 * 3/6.
  const std::vector<float> l = {0.0f, std::log(2.0f), std::log(3.0f), -30.0f};
  SamplingParams p = params(1.0f, 0, 1.0f, 5);
  p.min_p = 0.5f;
  Sampler s(p);
  for (int i = 0; i < 500; ++i) {
    int32_t x = s.sample(l);
    EXPECT_TRUE(x == 1 || x == 2) << x;
  }
}

TEST(Sampler, PenaltiesFollowTheirDefinitions) {
  const std::vector<float> l = {2.0f, 1.9f, 1.0f};
  const std::vector<int32_t> history = {0, 0, 2};  // prompt {0}, then output {0, 2}
  // Greedy picks 0 without penalties.
  EXPECT_EQ(Sampler(params(0.0f, 0, 1.0f, 1)).sample(l, history, 1), 0);
  // Frequency 0.1 x 1 output occurrence: 2.0 - 0.1 = 1.9 ties with token 1, lowest id wins; 0.2
  // flips it.
  SamplingParams f = params(0.0f, 0, 1.0f, 1);
  f.frequency_penalty = 0.2f;
  EXPECT_EQ(Sampler(f).sample(l, history, 1), 1);
  // Presence counts once however often the token appeared in the output.
  SamplingParams pr = params(0.0f, 0, 1.0f, 1);
  pr.presence_penalty = 0.15f;
  EXPECT_EQ(Sampler(pr).sample(l, history, 1), 1);
  // Repetition penalty divides positive logits of every token seen, prompt included.
  SamplingParams rep = params(0.0f, 0, 1.0f, 1);
  rep.repetition_penalty = 1.1f;  // 2.0 / 1.1 = 1.82 < 1.9
  const std::vector<int32_t> prompt_only = {0};
  EXPECT_EQ(Sampler(rep).sample(l, prompt_only, 1), 1);
  EXPECT_NEAR(token_logprob(l, 0), 2.0 - std::log(std::exp(2.0) + std::exp(1.9) + std::exp(1.0)),
              1e-6);
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
