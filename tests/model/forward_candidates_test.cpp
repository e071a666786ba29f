// ForwardExecutor with StepSampling on the CPU backend: candidates selected on the host from the
// downloaded rows equal kernels::top_candidates_ref on the rows of a whole-row step.
#include <gtest/gtest.h>

#include "model/forward_candidates_check.h"
#include "sched/scheduler.h"

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

// The scheduler samples through candidates; a plain loop over whole rows with the same seed (the
// sampler as it was) is the oracle. The prompt is prefilled in chunks, so some steps want no row.
TEST(ForwardCandidates, SchedulerTokensEqualAWholeRowLoop) {
  const TestModelOptions o = tiny_model({"qwen3moe F32", Family::kQwen3Moe, 8, "F32"});
  std::vector<int32_t> prompt;
  for (int i = 0; i < 21; ++i) prompt.push_back((i * 37 + 5) % 250 + 1);
  for (float temperature : {0.0f, 0.8f}) {
    SamplingParams sp;
    sp.temperature = temperature;
    sp.top_p = 0.9f;
    sp.presence_penalty = temperature > 0.0f ? 0.3f : 0.0f;
    sp.seed = 17;
    sp.ignore_eos = true;
    const int n_new = 6;
    // Oracle.
    auto ref = make_engine(o);
    ASSERT_TRUE(ref.ok()) << ref.status().to_string();
    const int32_t sq = ref->kv->add_sequence();
    ASSERT_TRUE(ref->kv->reserve(sq, static_cast<int64_t>(prompt.size()) + n_new).ok());
    std::vector<int32_t> hist = prompt, want;
    Sampler sampler(sp);
    std::vector<int32_t> pos(prompt.size()), seqs(prompt.size(), sq);
    for (size_t i = 0; i < pos.size(); ++i) pos[i] = static_cast<int32_t>(i);
    auto logits = ref->exec->run({prompt, pos, seqs, {}});
    for (int i = 0; i < n_new && logits.ok(); ++i) {
      const int32_t t = sampler.sample(*logits, hist, static_cast<int64_t>(prompt.size()));
      want.push_back(t);
      hist.push_back(t);
      const int32_t p = static_cast<int32_t>(hist.size()) - 1;
      logits = ref->exec->run({std::span(&t, 1), std::span(&p, 1), std::span(&sq, 1), {}});
    }
    ASSERT_TRUE(logits.ok()) << logits.status().to_string();
    // Scheduler, prompt in chunks of 8.
    auto e = make_engine(o);
    ASSERT_TRUE(e.ok()) << e.status().to_string();
    SchedulerOptions so;
    so.max_batch_tokens = 8;
    so.ctx_size = 64;
    Scheduler sched(*e->exec, *e->kv, e->model->config().n_vocab, so);
    SequenceRequest req;
    req.prompt = prompt;
    req.sampling = sp;
    req.max_new_tokens = n_new;
    req.top_logprobs = temperature > 0.0f ? -1 : 2;
    auto h = sched.submit(req);
    std::vector<TokenOutput> outs;
    while (h->next(outs, std::chrono::milliseconds(100))) {
    }
    std::vector<int32_t> got;
    for (const TokenOutput& t : outs) {
      EXPECT_TRUE(t.error.ok()) << t.error.to_string();
      if (!t.finished || t.finish_reason == "length") got.push_back(t.token);
    }
    EXPECT_EQ(got, want) << "temperature " << temperature;
  }
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
