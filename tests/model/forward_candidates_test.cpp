// ForwardExecutor with StepSampling on the CPU backend: candidates selected on the host from the
// downloaded rows equal kernels::top_candidates_ref on the rows of a whole-row step.
#include <gtest/gtest.h>

#include "model/forward_candidates_check.h"

namespace arc::testing {
namespace {

TEST(ForwardCandidates, SampledStepsMatchWholeRows) {
  TestModelOptions o = tiny_model({"qwen3moe F32", Family::kQwen3Moe, 8, "F32"});
  auto e = make_engine(o);
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  const int32_t a = e->kv->add_sequence(), b = e->kv->add_sequence();
  ASSERT_TRUE(e->kv->reserve(a, 16).ok());
  ASSERT_TRUE(e->kv->reserve(b, 16).ok());
  // A prefill of two sequences with several logit rows, then a decode step of both.
  const std::vector<int32_t> tok = {5, 9, 2, 7, 1, 3, 8, 4, 6};
  const std::vector<int32_t> pos = {0, 1, 2, 3, 0, 1, 2, 3, 4};
  const std::vector<int32_t> seq = {a, a, a, a, b, b, b, b, b};
  const std::vector<int32_t> rows = {1, 3, 4, 6, 8};
  expect_sampled_step_matches(*e, {tok, pos, seq, rows});
  const std::vector<int32_t> dtok = {11, 12}, dpos = {4, 5}, dseq = {a, b};
  expect_sampled_step_matches(*e, {dtok, dpos, dseq, {}});
  // No sampling rows: a step for its K/V only (a prompt chunk that does not reach the end).
  const std::vector<int32_t> ctok = {13, 14}, cpos = {5, 6}, cseq = {b, b};
  ASSERT_TRUE(e->exec->submit({ctok, cpos, cseq, {}}, StepSampling{}).ok());
  StepCandidates c;
  ASSERT_TRUE(e->exec->wait(c).ok());
  EXPECT_EQ(c.n_rows, 0);
  EXPECT_TRUE(c.k.empty());
}

TEST(ForwardCandidates, SchedulerTokensEqualAWholeRowLoop) {
  expect_scheduler_matches_whole_rows([] {
    return make_engine(tiny_model({"qwen3moe F32", Family::kQwen3Moe, 8, "F32"}));
  });
}

TEST(ForwardCandidates, RejectsMalformedSampling) {
  auto e = make_engine(tiny_model({"llama F32", Family::kLlama, 0, "F32"}));
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  const int32_t a = e->kv->add_sequence();
  ASSERT_TRUE(e->kv->reserve(a, 4).ok());
  const std::vector<int32_t> tok = {1, 2}, pos = {0, 1}, seq = {a, a};
  StepSampling s = mixed_sampling(2);  // one row expected
  EXPECT_FALSE(e->exec->submit({tok, pos, seq, {}}, s).ok());
  StepCandidates c;
  EXPECT_FALSE(e->exec->wait(c).ok());  // nothing sampled was submitted
  s = mixed_sampling(1);
  s.rows[0].pen_end = 99;  // past pen_tokens
  EXPECT_FALSE(e->exec->submit({tok, pos, seq, {}}, s).ok());
  s = mixed_sampling(1);
  s.rows[0].k = kernels::kMaxCandidates + 1;
  EXPECT_FALSE(e->exec->submit({tok, pos, seq, {}}, s).ok());
  std::vector<float> row;
  EXPECT_FALSE(e->exec->fetch_row(5, row).ok());
}

}  // namespace
}  // namespace arc::testing
