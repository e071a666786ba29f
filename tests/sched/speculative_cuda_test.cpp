// Speculative decoding on the CUDA backend (under the emulator where there is no GPU): verify
// rows come back as device-selected candidates (greedy, top-k with penalties) and the tokens
// equal decoding on the same backend without speculation. Label gpu: skips without a backend.
#include <gtest/gtest.h>

#include "arc/backend_factory.h"
#include "model/test_util.h"
#include "sched/drafter.h"
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

}  // namespace
}  // namespace arc::testing
