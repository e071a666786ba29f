// `--spec draft:PATH` batched: the draft model runs every sequence of a step together, one forward
// for all catch-ups and first drafts, then one per further draft position. Its drafts against the
// oracle of a plain greedy decode of the draft model (full recompute on a fresh sequence, no
// cache reuse), the forwards counted (k for N sequences, not N * k), and through the scheduler
// with several concurrent requests the target's greedy tokens identical to no speculation.
#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <numeric>
#include <thread>

#include "model/test_util.h"
#include "sched/draft_model.h"
#include "sched/sampler.h"
#include "sched/scheduler.h"

namespace arc::testing {
namespace {

namespace fs = std::filesystem;

TestModelOptions target_options() {
  TestModelOptions o;
  o.family = Family::kQwen3Moe;
  o.n_layer = 2;
  o.seed = 11;
  return o;
}

// A smaller model of another family on the same (synthetic) vocabulary.
TestModelOptions draft_options() {
  TestModelOptions o;
  o.family = Family::kQwen3;
  o.n_layer = 1;
  o.n_embd = 32;
  o.n_head = 2;
  o.n_kv_head = 1;
  o.n_ff = 64;
  o.seed = 3;
  return o;
}

struct DraftFile {
  std::string path =
      (fs::temp_directory_path() / ("arc_draft_model_test_" + std::to_string(getpid()) + ".gguf"))
          .string();
  DraftFile() { EXPECT_TRUE(write_test_model(draft_options(), path).ok()); }
  ~DraftFile() { fs::remove(path); }
};

// The oracle: the draft model's greedy continuation of `tokens`, each token from a full
// recompute of the sequence so far on a fresh sequence.
std::vector<int32_t> greedy(Engine& d, std::vector<int32_t> tokens, int k) {
  std::vector<int32_t> out;
  for (int i = 0; i < k; ++i) {
    const int32_t seq = d.kv->add_sequence();
    EXPECT_TRUE(d.kv->reserve(seq, static_cast<int64_t>(tokens.size())).ok());
    std::vector<int32_t> pos(tokens.size()), seqs(tokens.size(), seq);
    std::iota(pos.begin(), pos.end(), 0);
    auto l = d.exec->run({tokens, pos, seqs, {}});
    d.kv->free_sequence(seq);
    EXPECT_TRUE(l.ok()) << l.status().to_string();
    if (!l.ok()) return out;
    out.push_back(argmax(*l));
    tokens.push_back(out.back());
  }
  return out;
}

Result<std::shared_ptr<DraftModelDrafter>> load(Engine& target, const std::string& path,
                                                int64_t catch_up_chunk = 256,
                                                int64_t max_batch_tokens = 1024) {
  DraftModelOptions o;
  o.path = path;
  o.kv_tokens = 64 * 16;
  o.kv_type = DType::F32;
  o.catch_up_chunk = catch_up_chunk;
  o.max_batch_tokens = max_batch_tokens;
  return DraftModelDrafter::load(o, *target.backend, target.model->file());
}

TEST(DraftModelBatched, DraftsOfEverySequenceInKForwardsEqualGreedyDecodingOfTheDraftModel) {
  auto t = make_engine(target_options(), 1, DType::F32, 16);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  auto oracle = make_engine(draft_options(), 1, DType::F32, 16);
  ASSERT_TRUE(oracle.ok()) << oracle.status().to_string();
  DraftFile file;
  // Catch-up chunks of 12: the long prompt takes two steps before it drafts.
  auto d = load(*t, file.path, 12);
  ASSERT_TRUE(d.ok()) << d.status().to_string();

  std::vector<std::vector<int32_t>> tokens = {{5, 9, 13, 5, 9}, {100, 101, 102}, {7}, {}};
  tokens[3].resize(20);
  std::iota(tokens[3].begin(), tokens[3].end(), 30);
  std::vector<std::unique_ptr<SequenceDrafter>> seqs;
  for (const auto& p : tokens) seqs.push_back((*d)->start(p));
  constexpr int kK = 3;
  for (int round = 0; round < 3; ++round) {
    std::vector<std::vector<int32_t>> out(tokens.size());
    std::vector<DraftRequest> reqs;
    for (size_t i = 0; i < tokens.size(); ++i) {
      reqs.push_back({seqs[i].get(), tokens[i], kK, &out[i]});
    }
    const uint64_t before = (*d)->forwards();
    (*d)->propose_all(reqs);
    EXPECT_EQ((*d)->forwards() - before, static_cast<uint64_t>(kK))
        << "round " << round << ": " << tokens.size() << " sequences drafting " << kK
        << " tokens each take " << kK << " forwards";
    for (size_t i = 0; i < tokens.size(); ++i) {
      if (i == 3 && round == 0) {
        EXPECT_TRUE(out[i].empty()) << "a prompt longer than a catch-up chunk drafts later";
        continue;
      }
      EXPECT_EQ(out[i], greedy(*oracle, tokens[i], kK)) << "round " << round << ", seq " << i;
    }
    // The target's verdicts: sequence 0 accepts every draft and adds a token, sequence 1 the
    // first draft then another token, sequence 2 none (a token unlike its first draft).
    if (out[0].size() == kK) {
      tokens[0].insert(tokens[0].end(), out[0].begin(), out[0].end());
      tokens[0].push_back(17);
    }
    if (!out[1].empty()) tokens[1].push_back(out[1][0]);
    tokens[1].push_back(out[1].size() > 1 && out[1][1] == 60 ? 61 : 60);
    tokens[2].push_back(out[2].empty() || out[2][0] != 42 ? 42 : 43);
  }

  // One sequence on its own still drafts (a batch of one): k forwards.
  std::vector<int32_t> alone;
  const uint64_t before = (*d)->forwards();
  seqs[0]->propose(tokens[0], kK, alone);
  EXPECT_EQ((*d)->forwards() - before, static_cast<uint64_t>(kK));
  EXPECT_EQ(alone, greedy(*oracle, tokens[0], kK));
}

TEST(DraftModelBatched, AFullFirstForwardDefersCatchUpsNotDrafts) {
  auto t = make_engine(target_options(), 1, DType::F32, 16);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  auto oracle = make_engine(draft_options(), 1, DType::F32, 16);
  ASSERT_TRUE(oracle.ok()) << oracle.status().to_string();
  DraftFile file;
  // Room for 6 tokens in the first forward: of three 5-token prompts one drafts per step at
  // first (the others read what room is left), then each drafts once caught up.
  auto d = load(*t, file.path, 256, 6);
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  const std::vector<std::vector<int32_t>> tokens = {
      {5, 9, 13, 5, 9}, {100, 101, 102, 103, 104}, {7, 8, 7, 8, 7}};
  std::vector<std::unique_ptr<SequenceDrafter>> seqs;
  for (const auto& p : tokens) seqs.push_back((*d)->start(p));
  std::vector<int> first_draft_round(tokens.size(), -1);
  for (int round = 0; round < 6; ++round) {
    std::vector<std::vector<int32_t>> out(tokens.size());
    std::vector<DraftRequest> reqs;
    for (size_t i = 0; i < tokens.size(); ++i)
      reqs.push_back({seqs[i].get(), tokens[i], 2, &out[i]});
    (*d)->propose_all(reqs);
    for (size_t i = 0; i < tokens.size(); ++i) {
      if (out[i].empty()) continue;
      if (first_draft_round[i] < 0) first_draft_round[i] = round;
      EXPECT_EQ(out[i], greedy(*oracle, tokens[i], 2)) << "round " << round << ", seq " << i;
    }
  }
  EXPECT_EQ(first_draft_round[0], 0);
  for (size_t i = 1; i < tokens.size(); ++i) {
    EXPECT_GT(first_draft_round[i], 0) << "seq " << i << " drafted before it fit";
  }
}

struct Gen {
  std::vector<int32_t> tokens;
};

std::vector<Gen> run_all(Engine& e, std::shared_ptr<Drafter> drafter,
                         const std::vector<SequenceRequest>& reqs, SchedulerStats* stats) {
  SchedulerOptions so;
  so.max_batch_tokens = 64;
  so.ctx_size = 256;
  so.drafter = std::move(drafter);
  if (so.drafter) so.spec.kind = SpecKind::kDraftModel;
  so.spec.k = 3;
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
    out.push_back(std::move(g));
  }
  *stats = sched.stats();
  for (int i = 0; i < 100 && stats->kv_blocks_used != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    *stats = sched.stats();
  }
  return out;
}

TEST(DraftModelBatched, GreedyTokensEqualDecodingWithoutItWithConcurrentRequests) {
  auto e = make_engine(target_options(), 1, DType::F32, 16);
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  std::vector<SequenceRequest> reqs;
  for (const auto& p : std::vector<std::vector<int32_t>>{
           {5, 9, 13, 5, 9}, {100, 101, 102, 103}, {7, 7, 7, 7}, {40, 41, 42}, {200}}) {
    SequenceRequest r;
    r.prompt = p;
    r.sampling.temperature = 0.0f;
    r.sampling.ignore_eos = true;
    r.max_new_tokens = 20;
    reqs.push_back(r);
  }
  SchedulerStats st;
  const auto want = run_all(*e, nullptr, reqs, &st);
  DraftFile file;
  auto d = load(*e, file.path);
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  const auto got = run_all(*e, *d, reqs, &st);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(want[i].tokens, got[i].tokens) << "request " << i;
  }
  EXPECT_GT(st.draft_tokens, 0u);
  EXPECT_LE(st.accepted_tokens, st.draft_tokens);
  // Each sequence on its own would take a forward per drafted token and more for catch-ups;
  // batched, the concurrent sequences share them.
  EXPECT_LT((*d)->forwards(), st.draft_tokens) << "drafts were not batched";
  EXPECT_EQ(st.kv_blocks_used, 0);
}

}  // namespace
}  // namespace arc::testing
