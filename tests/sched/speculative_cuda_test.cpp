// Speculative decoding on the CUDA backend (under the emulator where there is no GPU): verify
// rows come back as device-selected candidates (greedy, top-k with penalties) and the tokens
// equal decoding on the same backend without speculation; the mtp drafter's nextn block gives
// the CPU backend's logits and exact greedy output. Label gpu: skips without a backend.
#include <gtest/gtest.h>

#include <cmath>

#include "arc/backend_factory.h"
#include "model/test_util.h"
#include "sched/drafter.h"
#include "sched/mtp_drafter.h"
#include "sched/scheduler.h"

namespace arc::testing {
namespace {

Result<Engine> cuda_engine() {
  ARC_ASSIGN_OR_RETURN(auto backend, make_cuda_backend(0, /*graphs=*/true));
  TestModelOptions o;
  o.family = Family::kQwen3Moe;
  o.n_layer = 2;
  o.seed = 11;
  Engine e;
  ARC_ASSIGN_OR_RETURN(e.bytes, build_test_model(o));
  e.backend = std::move(backend);
  ARC_ASSIGN_OR_RETURN(gguf::File f, gguf::File::parse(e.bytes, "test-model"));
  ARC_ASSIGN_OR_RETURN(e.model, Model::from_file(std::move(f), *e.backend));
  const ModelConfig& c = e.model->config();
  KvCacheOptions kvo{c.n_layer, c.n_kv_head, c.head_dim, 16, 64, DType::F16};
  ARC_ASSIGN_OR_RETURN(e.kv, KvCache::create(*e.backend, kvo));
  e.exec = std::make_unique<ForwardExecutor>(*e.model, *e.backend, *e.kv);
  return e;
}

std::vector<std::vector<int32_t>> run(Engine& e, std::shared_ptr<Drafter> d, SpecOptions spec,
                                      const std::vector<SequenceRequest>& reqs,
                                      SchedulerStats* stats) {
  SchedulerOptions so;
  so.max_batch_tokens = 64;
  so.ctx_size = 256;
  so.drafter = std::move(d);
  so.spec = spec;
  Scheduler sched(*e.exec, *e.kv, e.model->config().n_vocab, so);
  std::vector<std::shared_ptr<RequestHandle>> hs;
  for (const auto& r : reqs) hs.push_back(sched.submit(r));
  std::vector<std::vector<int32_t>> out;
  for (auto& h : hs) {
    std::vector<TokenOutput> outs;
    while (h->next(outs, std::chrono::milliseconds(100))) {
    }
    std::vector<int32_t> toks;
    for (const TokenOutput& t : outs) {
      EXPECT_TRUE(t.error.ok()) << t.error.to_string();
      if (!t.finished || t.finish_reason == "length") toks.push_back(t.token);
    }
    out.push_back(toks);
  }
  if (stats) *stats = sched.stats();
  return out;
}

TEST(SpeculativeCuda, TokensEqualDecodingWithoutItOnTheSameBackend) {
  auto e = cuda_engine();
  if (!e.ok()) GTEST_SKIP() << "no CUDA backend: " << e.status().message();
  const std::vector<std::vector<int32_t>> prompts = {
      {5, 9, 13, 5, 9, 13, 5, 9}, {100, 101, 102, 103}, {7, 7, 7, 7, 7, 7}};
  // Greedy, and seeded sampling with top-k and a repetition penalty (candidates with penalties
  // selected on the device for every verify row).
  for (bool sampled : {false, true}) {
    std::vector<SequenceRequest> reqs;
    for (size_t i = 0; i < prompts.size(); ++i) {
      SequenceRequest r;
      r.prompt = prompts[i];
      r.max_new_tokens = 24;
      r.sampling.ignore_eos = true;
      r.sampling.temperature = sampled ? 0.8f : 0.0f;
      r.sampling.top_k = sampled ? 8 : 0;
      r.sampling.repetition_penalty = sampled ? 1.1f : 1.0f;
      r.sampling.seed = 40 + i;
      reqs.push_back(r);
    }
    SchedulerStats st;
    const auto want = run(*e, nullptr, {}, reqs, nullptr);
    SpecOptions ngram;
    ngram.kind = SpecKind::kNgram;
    const auto got = run(*e, std::make_shared<NgramDrafter>(), ngram, reqs, &st);
    if (!sampled) {
      EXPECT_EQ(got, want);
      EXPECT_GT(st.accepted_tokens, 0u);
    }
    // The scripted drafter proposing each request's plain output: every draft is accepted when
    // greedy; sampled, the same seed draws the same tokens (drafts decide nothing).
    for (size_t i = 0; i < reqs.size(); ++i) {
      SpecOptions sc;
      sc.kind = SpecKind::kScripted;
      sc.k = 4;
      auto d = std::make_shared<ScriptedDrafter>(want[i], 0.0, e->model->config().n_vocab);
      const auto one = run(*e, d, sc, {reqs[i]}, &st);
      if (!sampled) {
        EXPECT_EQ(one[0], want[i]) << "request " << i;
        EXPECT_GT(st.accepted_tokens, 10u);
      } else {
        const auto again = run(*e, d, sc, {reqs[i]}, nullptr);
        EXPECT_EQ(one[0], again[0]) << "seeded sampling repeats, request " << i;
      }
    }
  }
}

// A model with a nextn layer on `backend`: glm4moe, or deepseek2 (its block attends with MLA).
Result<Engine> mtp_engine(Family family, std::unique_ptr<Backend> backend) {
  TestModelOptions o;
  o.family = family;
  o.n_layer = 3;
  o.n_nextn = 1;
  o.n_expert = 8;
  o.n_expert_used = 3;
  o.seed = 5;
  if (family == Family::kDeepSeek2) {  // as mtp_test: a 16 + 8 q/k head, 16 value, latent 32
    o.head_dim = 24;
    o.v_head_dim = 16;
    o.kv_lora_rank = 32;
  }
  Engine e;
  ARC_ASSIGN_OR_RETURN(e.bytes, build_test_model(o));
  e.backend = std::move(backend);
  ARC_ASSIGN_OR_RETURN(gguf::File f, gguf::File::parse(e.bytes, "test-model"));
  ARC_ASSIGN_OR_RETURN(e.model, Model::from_file(std::move(f), *e.backend));
  ARC_ASSIGN_OR_RETURN(
      e.kv, KvCache::create(*e.backend, kv_cache_options(e.model->config(), 16, 64, DType::F16)));
  e.exec = std::make_unique<ForwardExecutor>(*e.model, *e.backend, *e.kv);
  return e;
}

// The nextn block's logits for pairs of (the CPU target's hidden states, the next tokens).
std::vector<float> block_logits(Engine& e, const std::vector<int32_t>& next,
                                const std::vector<float>& hidden) {
  auto f = gguf::File::parse(e.bytes, "mtp");
  EXPECT_TRUE(f.ok());
  auto block = Model::load_mtp(std::move(*f), *e.model, *e.backend);
  EXPECT_TRUE(block.ok()) << block.status().to_string();
  if (!block.ok()) return {};
  auto kv = KvCache::create(*e.backend, kv_cache_options((*block)->config(), 16, 4, DType::F16));
  EXPECT_TRUE(kv.ok());
  ForwardExecutor exec(**block, *e.backend, **kv);
  const int32_t seq = (*kv)->add_sequence();
  EXPECT_TRUE((*kv)->reserve(seq, static_cast<int64_t>(next.size())).ok());
  std::vector<int32_t> pos(next.size()), seqs(next.size(), seq), rows(next.size());
  for (size_t i = 0; i < next.size(); ++i) pos[i] = rows[i] = static_cast<int32_t>(i);
  ForwardBatch b{next, pos, seqs, rows};
  b.hidden = hidden;
  auto l = exec.run(b);
  EXPECT_TRUE(l.ok()) << l.status().to_string();
  return l.ok() ? *l : std::vector<float>{};
}

class SpeculativeCudaMtp : public ::testing::TestWithParam<Family> {};

TEST_P(SpeculativeCudaMtp, BlockMatchesTheCpuAndDraftsExactly) {
  auto be = make_cuda_backend(0, /*graphs=*/true);
  if (!be.ok()) GTEST_SKIP() << "no CUDA backend: " << be.status().message();
  auto e = mtp_engine(GetParam(), std::move(*be));
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  auto cpu = mtp_engine(GetParam(), make_cpu_backend(1));
  ASSERT_TRUE(cpu.ok()) << cpu.status().to_string();

  // The block on both backends from the same (CPU) hidden states: the oracle is the CPU
  // backend's block, itself checked against the double-precision reference (mtp_test).
  const std::vector<int32_t> prompt = {1, 72, 101, 108, 108, 111, 44, 32, 119, 111};
  const int32_t seq = cpu->kv->add_sequence();
  ASSERT_TRUE(cpu->kv->reserve(seq, static_cast<int64_t>(prompt.size())).ok());
  std::vector<int32_t> pos(prompt.size()), seqs(prompt.size(), seq);
  for (size_t i = 0; i < pos.size(); ++i) pos[i] = static_cast<int32_t>(i);
  ASSERT_TRUE(cpu->exec->run({prompt, pos, seqs, {}}).ok());
  std::vector<float> hidden;
  const auto n = static_cast<int64_t>(prompt.size()) - 1;
  ASSERT_TRUE(cpu->exec->fetch_hidden(0, n, hidden).ok());
  const std::vector<int32_t> next(prompt.begin() + 1, prompt.end());
  const auto want = block_logits(*cpu, next, hidden);
  const auto got = block_logits(*e, next, hidden);
  ASSERT_EQ(got.size(), want.size());
  ASSERT_FALSE(want.empty());
  double scale = 1.0, worst = 0.0;
  for (size_t i = 0; i < want.size(); ++i) {
    scale = std::max(scale, static_cast<double>(std::fabs(want[i])));
    worst = std::max(worst, static_cast<double>(std::fabs(got[i] - want[i])));
  }
  EXPECT_LT(worst, 2e-2 * scale) << "F16 KV on the device, F32 on the CPU";

  // Greedy through the scheduler: the same tokens as without speculation on this backend.
  std::vector<SequenceRequest> reqs;
  for (const auto& p : std::vector<std::vector<int32_t>>{{5, 9, 13, 5, 9}, {100, 101, 102}}) {
    SequenceRequest r;
    r.prompt = p;
    r.max_new_tokens = 16;
    r.sampling.ignore_eos = true;
    r.sampling.temperature = 0.0f;
    reqs.push_back(r);
  }
  const auto plain = run(*e, nullptr, {}, reqs, nullptr);
  auto f = gguf::File::parse(e->bytes, "mtp");
  ASSERT_TRUE(f.ok());
  auto d = MtpDrafter::load(std::move(*f), *e->model, *e->backend, MtpOptions{1024, 16});
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  SpecOptions mtp;
  mtp.kind = SpecKind::kMtp;
  SchedulerStats st;
  EXPECT_EQ(run(*e, *d, mtp, reqs, &st), plain);
  EXPECT_GT(st.draft_tokens, 0u);
}

INSTANTIATE_TEST_SUITE_P(Families, SpeculativeCudaMtp,
                         ::testing::Values(Family::kGlm4Moe, Family::kDeepSeek2),
                         [](const ::testing::TestParamInfo<Family>& i) {
                           return std::string(family_name(i.param));
                         });

}  // namespace
}  // namespace arc::testing
