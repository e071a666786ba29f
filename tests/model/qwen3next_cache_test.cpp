// qwen3next prefix caching: the recurrent layers resume from state snapshots filed at block
// boundaries. With the cache on and off (no snapshot slots: nothing can be resumed) the same
// greedy tokens and logits within rounding, for a shared prefix, a branch, an evicted snapshot
// (resume from an earlier one), sequences batched together, and 64 concurrent requests with
// shared prefixes through the scheduler (no mixed outputs; every block and state freed).
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "arc/kv_cache.h"
#include "model/reference_check.h"
#include "model/test_util.h"
#include "sched/scheduler.h"

namespace arc::testing {
namespace {

constexpr int64_t kBlock = 8;

TestModelOptions model_opts() {
  TestModelOptions o = tiny_model({"", Family::kQwen3Next, 8, "F32"});
  o.n_layer = 4;
  o.full_attn_interval = 2;
  o.head_dim = 16;
  return o;
}

// An engine whose cache keeps `snapshots` state snapshots (0: prefix caching off).
Result<Engine> engine(int64_t snapshots, int threads = 2) {
  Engine e;
  ARC_ASSIGN_OR_RETURN(e.bytes, build_test_model(model_opts()));
  ARC_ASSIGN_OR_RETURN(gguf::File f, gguf::File::parse(e.bytes, "qwen3next"));
  e.backend = make_cpu_backend(threads);
  ARC_ASSIGN_OR_RETURN(e.model, Model::from_file(std::move(f), *e.backend));
  KvCacheOptions kvo = kv_cache_options(e.model->config(), kBlock, 512, DType::F32);
  kvo.state_seqs = 64;
  kvo.state_snapshots = snapshots;
  ARC_ASSIGN_OR_RETURN(e.kv, KvCache::create(*e.backend, kvo));
  e.exec = std::make_unique<ForwardExecutor>(*e.model, *e.backend, *e.kv);
  return e;
}

std::vector<int32_t> tokens(int64_t n, int32_t seed) {
  std::vector<int32_t> t;
  for (int64_t i = 0; i < n; ++i) t.push_back(static_cast<int32_t>((seed * 31 + i * 7) % 250 + 3));
  return t;
}

struct Gen {
  std::vector<int32_t> toks;
  std::vector<std::vector<float>> logits;  // the prompt's last row, then each decode step's
  int64_t cached = 0;
};

// One request as the scheduler runs it: attach the cached prefix, prefill the rest, then
// `n_new` greedy tokens, committing after every step; the sequence is freed at the end.
Gen generate(Engine& e, const std::vector<int32_t>& prompt, int n_new) {
  Gen g;
  std::vector<int32_t> all = prompt;
  const int32_t seq = e.kv->add_sequence();
  g.cached = e.kv->attach_cached_prefix(seq, all);
  EXPECT_TRUE(e.kv->reserve(seq, static_cast<int64_t>(all.size()) + n_new).ok());
  int64_t done = g.cached;
  const int64_t v = e.model->config().n_vocab;
  for (int step = 0; step <= n_new; ++step) {
    std::vector<int32_t> t(all.begin() + done, all.end()), pos, seqs;
    for (int64_t i = done; i < static_cast<int64_t>(all.size()); ++i) {
      pos.push_back(static_cast<int32_t>(i));
      seqs.push_back(seq);
    }
    auto got = e.exec->run({t, pos, seqs, {}});
    EXPECT_TRUE(got.ok()) << got.status().to_string();
    if (!got.ok()) break;
    done = static_cast<int64_t>(all.size());
    e.kv->commit(seq, all, done);
    g.logits.emplace_back(got->end() - v, got->end());
    if (step == n_new) break;
    const int32_t next =
        static_cast<int32_t>(std::max_element(got->end() - v, got->end()) - (got->end() - v));
    g.toks.push_back(next);
    all.push_back(next);
  }
  e.kv->free_sequence(seq);
  return g;
}

void expect_same(const Gen& got, const Gen& want, const std::string& what) {
  EXPECT_EQ(got.toks, want.toks) << what;
  ASSERT_EQ(got.logits.size(), want.logits.size()) << what;
  for (size_t s = 0; s < got.logits.size(); ++s) {
    double scale = 1.0;
    for (float x : want.logits[s]) scale = std::max(scale, std::fabs(static_cast<double>(x)));
    for (size_t i = 0; i < got.logits[s].size(); ++i) {
      ASSERT_NEAR(got.logits[s][i], want.logits[s][i], 1e-5 * scale)
          << what << " step " << s << " logit " << i;
    }
  }
}

TEST(Qwen3NextPrefixCache, SharedPrefixAndBranchMatchTheCacheOff) {
  auto on = engine(16), off = engine(0);
  ASSERT_TRUE(on.ok() && off.ok()) << on.status().to_string();
  std::vector<int32_t> a = tokens(37, 1);
  // b shares a's first 32 tokens (4 blocks), then branches.
  std::vector<int32_t> b(a.begin(), a.begin() + 32);
  for (int32_t t : tokens(9, 2)) b.push_back(t);
  const Gen a_on = generate(*on, a, 6), a_off = generate(*off, a, 6);
  expect_same(a_on, a_off, "a");
  EXPECT_EQ(a_on.cached, 0);
  const Gen b_on = generate(*on, b, 6), b_off = generate(*off, b, 6);
  EXPECT_EQ(b_on.cached, 32);  // resumed from the snapshot at a's 4th block boundary
  EXPECT_EQ(b_off.cached, 0);  // nothing to resume from: the attention blocks alone are unused
  expect_same(b_on, b_off, "b");
  // a again: its prompt and the first decode steps come from the cache (a's decode filed a
  // snapshot at 40), the answer is the same.
  const Gen a2 = generate(*on, a, 6);
  EXPECT_EQ(a2.cached, 32);
  expect_same(a2, a_off, "a again");
  std::vector<int32_t> a_long = a;
  a_long.insert(a_long.end(), a_off.toks.begin(), a_off.toks.end());  // 43 tokens
  const Gen a3 = generate(*on, a_long, 3), a3_off = generate(*off, a_long, 3);
  EXPECT_EQ(a3.cached, 40);
  expect_same(a3, a3_off, "a with its answer");
  EXPECT_EQ(on->kv->state()->n_live(), 0);
  EXPECT_EQ(on->kv->state()->n_snapshots_pending(), 0);
  EXPECT_EQ(on->kv->n_used_blocks(), 0);
}

TEST(Qwen3NextPrefixCache, EvictedSnapshotResumesFromAnEarlierOne) {
  auto on = engine(2), off = engine(0);
  ASSERT_TRUE(on.ok() && off.ok());
  const std::vector<int32_t> a = tokens(37, 3);  // snapshots at 24 and 32 (the last two)
  generate(*on, a, 0);
  ASSERT_EQ(on->kv->state()->n_snapshots_filed(), 2);
  // d resumes at 24 (touching that snapshot) and crosses no new boundary.
  std::vector<int32_t> d(a.begin(), a.begin() + 24);
  d.push_back(5);
  d.push_back(6);
  EXPECT_EQ(generate(*on, d, 0).cached, 24);
  // An unrelated prompt takes a snapshot at 8: the least recently used one (at 32) goes.
  generate(*on, tokens(12, 4), 0);
  std::vector<int32_t> b(a.begin(), a.begin() + 32);
  for (int32_t t : tokens(5, 5)) b.push_back(t);
  const Gen b_on = generate(*on, b, 5), b_off = generate(*off, b, 5);
  EXPECT_EQ(b_on.cached, 24);  // the blocks up to 32 are cached, the state only up to 24
  expect_same(b_on, b_off, "b");
}

TEST(Qwen3NextPrefixCache, BatchedSequencesMatchTheirSoloRuns) {
  auto on = engine(16), off = engine(0);
  ASSERT_TRUE(on.ok() && off.ok());
  const std::vector<int32_t> a = tokens(20, 6);
  generate(*on, a, 0);  // files snapshots at 8 and 16
  // Three sequences in one step: one resumed from the cache, two new; then a decode step.
  std::vector<std::vector<int32_t>> prompts = {a, tokens(11, 7), tokens(5, 8)};
  prompts[0].push_back(9);
  std::vector<int32_t> seqs, toks, pos, cached;
  for (const auto& p : prompts) {
    const int32_t s = on->kv->add_sequence();
    cached.push_back(static_cast<int32_t>(on->kv->attach_cached_prefix(s, p)));
    ASSERT_TRUE(on->kv->reserve(s, static_cast<int64_t>(p.size()) + 1).ok());
    seqs.push_back(s);
  }
  EXPECT_EQ(cached[0], 16);
  std::vector<int32_t> bseq, rows;
  for (size_t r = 0; r < prompts.size(); ++r) {
    for (size_t i = static_cast<size_t>(cached[r]); i < prompts[r].size(); ++i) {
      toks.push_back(prompts[r][i]);
      pos.push_back(static_cast<int32_t>(i));
      bseq.push_back(seqs[r]);
    }
  }
  auto got = on->exec->run({toks, pos, bseq, {}});
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  const int64_t v = on->model->config().n_vocab;
  for (size_t r = 0; r < prompts.size(); ++r) {
    const Gen want = generate(*off, prompts[r], 0);
    const std::vector<float> row(got->begin() + static_cast<int64_t>(r) * v,
                                 got->begin() + static_cast<int64_t>(r + 1) * v);
    Gen g;
    g.logits = {row};
    expect_same(g, want, "sequence " + std::to_string(r));
  }
  for (int32_t s : seqs) on->kv->free_sequence(s);
  EXPECT_EQ(on->kv->state()->n_live(), 0);
}

// 64 requests at once through the scheduler: 4 shared prefixes (3 blocks) with distinct tails.
// Each answer equals the request run alone with the cache off; afterwards nothing is held.
TEST(Qwen3NextPrefixCache, SixtyFourConcurrentRequestsThroughTheScheduler) {
  auto on = engine(32), off = engine(0, 1);
  ASSERT_TRUE(on.ok() && off.ok());
  std::vector<SequenceRequest> reqs;
  for (int i = 0; i < 64; ++i) {
    SequenceRequest r;
    r.prompt = tokens(24, 100 + i % 4);
    for (int32_t t : tokens(3 + i % 5, 200 + i)) r.prompt.push_back(t);
    r.max_new_tokens = 4;
    r.sampling.temperature = 0.0f;
    r.sampling.ignore_eos = true;
    reqs.push_back(r);
  }
  SchedulerOptions so;
  so.max_batch_tokens = 128;
  so.ctx_size = 64;
  so.max_running = 64;
  std::vector<std::vector<int32_t>> got(64);
  int64_t cached = 0;
  {
    Scheduler sched(*on->exec, *on->kv, on->model->config().n_vocab, so);
    std::vector<std::shared_ptr<RequestHandle>> hs;
    for (const auto& r : reqs) hs.push_back(sched.submit(r));
    for (size_t i = 0; i < hs.size(); ++i) {
      std::vector<TokenOutput> out;
      while (hs[i]->next(out, std::chrono::milliseconds(100))) {
      }
      for (const TokenOutput& o : out) {
        EXPECT_TRUE(o.error.ok()) << o.error.to_string();
        if (!o.is_prompt) got[i].push_back(o.token);
      }
      cached += hs[i]->timing().cached_tokens;
    }
    // The loop frees a finished sequence just after its last token: wait until none runs.
    SchedulerStats st = sched.stats();
    for (int i = 0; i < 500 && (st.running > 0 || st.kv_blocks_used > 0); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      st = sched.stats();
    }
    EXPECT_EQ(st.running, 0);
    EXPECT_EQ(st.kv_blocks_used, 0);
    EXPECT_EQ(st.state_slots_used, 0);
    EXPECT_EQ(st.state_snapshots_pending, 0);
    EXPECT_GT(st.state_snapshots_filed, 0);
  }
  EXPECT_GT(cached, 0);  // later requests resumed from the shared prefixes' snapshots
  for (size_t i = 0; i < reqs.size(); ++i) {
    EXPECT_EQ(got[i], generate(*off, reqs[i].prompt, 4).toks) << "request " << i;
  }
  EXPECT_EQ(on->kv->state()->n_live(), 0);
  EXPECT_EQ(on->kv->state()->n_snapshots_pending(), 0);
  EXPECT_EQ(on->kv->n_used_blocks(), 0);
}

}  // namespace
}  // namespace arc::testing
