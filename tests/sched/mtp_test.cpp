// `--spec mtp`: the nextn block of generated glm4moe and deepseek2 files (the latter's block
// attends with MLA over its own latent cache) against the double-precision reference
// (tests/model/reference_mtp.cpp, from DeepSeek-V3's MTP module and GLM's nextn layer):
// the target's hidden states, the block's logits and outputs over a prompt and one cached step
// after it, the drafter's chained drafts; then through the scheduler, greedy tokens identical to
// decoding without speculation with batching and prefix reuse, and the drafts actually running.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <thread>

#include "model/reference_forward.h"
#include "model/test_util.h"
#include "sched/mtp_drafter.h"
#include "sched/scheduler.h"

namespace arc::testing {
namespace {

constexpr double kTol = 2e-3;  // F32 weights: as the glm4moe forward test

TestModelOptions glm_options() {
  TestModelOptions o;
  o.family = Family::kGlm4Moe;
  o.n_layer = 3;  // a dense layer, then MoE layers
  o.n_dense_lead = 1;
  o.n_nextn = 1;
  o.n_expert = 8;
  o.n_expert_used = 3;
  o.seed = 5;
  return o;
}

// DeepSeek-V3's shape scaled down (as deepseek2_test): q LoRA, MLA with a 16 + 8 q/k head, YaRN,
// grouped sigmoid routing; the nextn block is an MLA + MoE layer.
TestModelOptions ds_options() {
  TestModelOptions o;
  o.family = Family::kDeepSeek2;
  o.n_layer = 3;
  o.n_dense_lead = 1;
  o.n_nextn = 1;
  o.n_head = 4;
  o.head_dim = 24;
  o.v_head_dim = 16;
  o.kv_lora_rank = 32;
  o.q_lora_rank = 48;
  o.n_expert = 8;
  o.n_expert_used = 3;
  o.seed = 5;
  return o;
}

class MtpFamily : public ::testing::TestWithParam<Family> {
 protected:
  TestModelOptions options() const {
    return GetParam() == Family::kDeepSeek2 ? ds_options() : glm_options();
  }
};

double scale_of(const std::vector<double>& v) {
  double m = 1.0;
  for (double x : v) m = std::max(m, std::fabs(x));
  return m;
}

void expect_rows_near(std::span<const float> got, const std::vector<std::vector<double>>& want,
                      const char* what) {
  const size_t w = want.empty() ? 0 : want[0].size();
  ASSERT_EQ(got.size(), want.size() * w) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    const double s = scale_of(want[i]);
    for (size_t j = 0; j < w; ++j) {
      ASSERT_NEAR(got[i * w + j], want[i][j], kTol * s) << what << " row " << i << " value " << j;
    }
  }
}

std::vector<float> to_float(const std::vector<std::vector<double>>& rows) {
  std::vector<float> out;
  for (const auto& r : rows) out.insert(out.end(), r.begin(), r.end());
  return out;
}

// The target's hidden states of `tokens`, from a prefill on a fresh sequence.
std::vector<float> engine_hidden(Engine& e, const std::vector<int32_t>& tokens) {
  const int32_t seq = e.kv->add_sequence();
  EXPECT_TRUE(e.kv->reserve(seq, static_cast<int64_t>(tokens.size())).ok());
  std::vector<int32_t> pos(tokens.size()), seqs(tokens.size(), seq);
  std::iota(pos.begin(), pos.end(), 0);
  auto l = e.exec->run({tokens, pos, seqs, {}});
  EXPECT_TRUE(l.ok()) << l.status().to_string();
  std::vector<float> h;
  EXPECT_TRUE(e.exec->fetch_hidden(0, static_cast<int64_t>(tokens.size()), h).ok());
  e.kv->free_sequence(seq);
  return h;
}

const std::vector<int32_t> kPrompt = {1, 72, 101, 108, 108, 111, 44, 32, 119, 111, 114, 100};

TEST_P(MtpFamily, BlockMatchesTheDoublePrecisionReference) {
  auto e = make_engine(options(), 1, DType::F32, 16);
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  auto rf = gguf::File::parse(e->bytes, "ref");
  ASSERT_TRUE(rf.ok());
  const ReferenceModel ref(*rf);
  const auto n = static_cast<int64_t>(kPrompt.size());

  // The target's final hidden states (before the output norm) are what the block reads.
  const auto H = ref.hidden(kPrompt);
  expect_rows_near(engine_hidden(*e, kPrompt), H, "target hidden state");

  auto bf = gguf::File::parse(e->bytes, "mtp");
  ASSERT_TRUE(bf.ok());
  auto block = Model::load_mtp(std::move(*bf), *e->model, *e->backend);
  ASSERT_TRUE(block.ok()) << block.status().to_string();
  auto kv = KvCache::create(*e->backend, kv_cache_options((*block)->config(), 16, 8, DType::F32));
  ASSERT_TRUE(kv.ok());
  ForwardExecutor exec(**block, *e->backend, **kv);
  const int32_t seq = (*kv)->add_sequence();
  ASSERT_TRUE((*kv)->reserve(seq, n).ok());

  // Pairs (h_p, t_{p+1}) at positions 0 .. n - 2, every row's logits.
  std::vector<std::vector<double>> h(H.begin(), H.end() - 1);
  std::vector<int32_t> next(kPrompt.begin() + 1, kPrompt.end());
  std::vector<int32_t> pos(next.size()), seqs(next.size(), seq), rows(next.size());
  std::iota(pos.begin(), pos.end(), 0);
  std::iota(rows.begin(), rows.end(), 0);
  const std::vector<float> hf = to_float(h);
  ForwardBatch b{next, pos, seqs, rows};
  b.hidden = hf;
  auto got = exec.run(b);
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  const auto want = ref.mtp(h, next);
  expect_rows_near(*got, want.logits, "block logits");
  std::vector<float> g;
  ASSERT_TRUE(exec.fetch_hidden(0, static_cast<int64_t>(next.size()), g).ok());
  expect_rows_near(g, want.hidden, "block output");

  // One more pair at position n - 1 (the chain's: the block's own output and a drafted token)
  // reads the entries cached above.
  h.push_back(want.hidden.back());
  next.push_back(50);
  const auto want2 = ref.mtp(h, next);
  const int32_t t = 50, p = static_cast<int32_t>(n - 1);
  const std::vector<float> last(want.hidden.back().begin(), want.hidden.back().end());
  ForwardBatch b2{std::span(&t, 1), std::span(&p, 1), std::span(&seq, 1), {}};
  b2.hidden = last;
  auto got2 = exec.run(b2);
  ASSERT_TRUE(got2.ok()) << got2.status().to_string();
  expect_rows_near(*got2, {want2.logits.back()}, "cached step logits");

  // A step without hidden states is refused with the reason, not run on garbage.
  auto bad = exec.run({std::span(&t, 1), std::span(&p, 1), std::span(&seq, 1), {}});
  EXPECT_FALSE(bad.ok());
}

TEST_P(MtpFamily, DraftsChainTheBlockLikeTheReference) {
  auto e = make_engine(options(), 1, DType::F32, 16);
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  auto rf = gguf::File::parse(e->bytes, "ref");
  ASSERT_TRUE(rf.ok());
  const ReferenceModel ref(*rf);
  auto bf = gguf::File::parse(e->bytes, "mtp");
  ASSERT_TRUE(bf.ok());
  MtpOptions mo;
  mo.kv_tokens = 256;
  mo.kv_type = DType::F32;
  auto d = MtpDrafter::load(std::move(*bf), *e->model, *e->backend, mo);
  ASSERT_TRUE(d.ok()) << d.status().to_string();

  // The prompt is confirmed and the target sampled one more token (its K/V not yet written).
  std::vector<int32_t> tokens = kPrompt;
  tokens.push_back(33);
  auto s = (*d)->start(kPrompt);
  EXPECT_TRUE(s->wants_hidden());
  s->observe_hidden(tokens, 0, engine_hidden(*e, kPrompt));
  std::vector<int32_t> drafts;
  s->propose(tokens, 4, drafts);
  ASSERT_EQ(drafts.size(), 4u);

  // The reference chain: pairs (H_p, t_{p+1}) for the confirmed positions, then each draft
  // paired with the block's own output before it. Each engine draft must be the reference's
  // greedy choice (up to the tolerance where two logits nearly tie).
  const auto H = ref.hidden(kPrompt);
  std::vector<std::vector<double>> h(H.begin(), H.end());
  std::vector<int32_t> next(tokens.begin() + 1, tokens.end());
  for (size_t i = 0; i < drafts.size(); ++i) {
    const auto out = ref.mtp(h, next);
    const std::vector<double>& row = out.logits.back();
    const double best = *std::max_element(row.begin(), row.end());
    EXPECT_GE(row[drafts[i]], best - kTol * scale_of(row)) << "draft " << i;
    h.push_back(out.hidden.back());
    next.push_back(drafts[i]);
  }

  // A drafter never drafts from entries the target has not confirmed: one more token without
  // its hidden state gives nothing.
  tokens.push_back(drafts[0]);
  drafts.clear();
  s->propose(tokens, 2, drafts);
  EXPECT_TRUE(drafts.empty());
}

struct Gen {
  std::vector<int32_t> tokens;
  RequestHandle::Timing timing;
};

std::vector<Gen> run_all(Engine& e, std::shared_ptr<Drafter> drafter,
                         const std::vector<SequenceRequest>& reqs, SchedulerStats* stats) {
  SchedulerOptions so;
  so.max_batch_tokens = 48;  // prompts take several chunks
  so.ctx_size = 256;
  so.drafter = std::move(drafter);
  if (so.drafter) so.spec.kind = SpecKind::kMtp;
  Scheduler sched(*e.exec, *e.kv, e.model->config().n_vocab, so);
  std::vector<std::shared_ptr<RequestHandle>> hs;
  for (const SequenceRequest& r : reqs) hs.push_back(sched.submit(r));
  std::vector<Gen> out;
  for (auto& h : hs) {
    Gen g;
    std::vector<TokenOutput> outs;
    while (h->next(outs, std::chrono::milliseconds(100))) {
    }
    for (const TokenOutput& t : outs) {
      EXPECT_TRUE(t.error.ok()) << t.error.to_string();
      g.tokens.push_back(t.token);
    }
    g.timing = h->timing();
    out.push_back(std::move(g));
  }
  *stats = sched.stats();
  for (int i = 0; i < 100 && stats->kv_blocks_used != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    *stats = sched.stats();
  }
  return out;
}

TEST_P(MtpFamily, GreedyTokensEqualDecodingWithoutItWithBatchingAndPrefixReuse) {
  auto e = make_engine(options(), 1, DType::F32, 16);
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  std::vector<int32_t> system(40);
  std::iota(system.begin(), system.end(), 60);  // a shared 40-token "system prompt"
  std::vector<std::vector<int32_t>> prompts = {{5, 9, 13, 5, 9}, {200}, system, system, system};
  prompts[3].insert(prompts[3].end(), {7, 8, 9});
  prompts[4].insert(prompts[4].end(), {21, 22});
  std::vector<SequenceRequest> reqs;
  for (const auto& p : prompts) {
    SequenceRequest r;
    r.prompt = p;
    r.sampling.temperature = 0.0f;
    r.sampling.ignore_eos = true;
    r.max_new_tokens = 24;
    reqs.push_back(r);
  }
  SchedulerStats st;
  const auto want = run_all(*e, nullptr, reqs, &st);

  auto bf = gguf::File::parse(e->bytes, "mtp");
  ASSERT_TRUE(bf.ok());
  MtpOptions mo;
  mo.kv_tokens = 64 * 16;
  mo.kv_type = DType::F32;
  auto d = MtpDrafter::load(std::move(*bf), *e->model, *e->backend, mo);
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  // Twice with the same drafter: the second run finds the prompts' blocks in both caches.
  for (int round = 0; round < 2; ++round) {
    const auto got = run_all(*e, *d, reqs, &st);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(want[i].tokens, got[i].tokens) << "round " << round << ", request " << i;
      EXPECT_GT(got[i].timing.draft_tokens, 0) << "round " << round << ", request " << i;
    }
    EXPECT_GT(st.draft_tokens, 0u);
    EXPECT_LE(st.accepted_tokens, st.draft_tokens);
    EXPECT_EQ(st.kv_blocks_used, 0) << "blocks left after every request finished";
    if (round == 1) {
      for (size_t i = 2; i < got.size(); ++i) {
        EXPECT_GE(got[i].timing.cached_tokens, 32) << "request " << i << " reused no prefix";
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Families, MtpFamily,
                         ::testing::Values(Family::kGlm4Moe, Family::kDeepSeek2),
                         [](const ::testing::TestParamInfo<Family>& i) {
                           return std::string(family_name(i.param));
                         });

}  // namespace
}  // namespace arc::testing
