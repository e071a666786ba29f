// Speculative decoding through the scheduler, against the scheduler without it: greedy tokens
// identical for every drafter (including one that is always wrong), with batching, stop tokens,
// max_tokens, logprobs, cancellation and prefix reuse; sampled output drawn from the model's own
// distribution (chi-square against the exact two-token distribution computed from the forward).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <thread>

#include "model/test_util.h"
#include "sched/drafter.h"
#include "sched/scheduler.h"

namespace arc::testing {
namespace {

Result<Engine> tiny_engine() {
  TestModelOptions o;
  o.family = Family::kQwen3Moe;
  o.n_layer = 2;
  o.seed = 11;
  return make_engine(o, 1, DType::F32, 16);
}

struct Gen {
  std::vector<int32_t> tokens;
  std::vector<float> logprobs;
  std::string finish;
};

Gen collect(const std::shared_ptr<RequestHandle>& h) {
  Gen g;
  std::vector<TokenOutput> outs;
  while (h->next(outs, std::chrono::milliseconds(100))) {
  }
  for (const TokenOutput& t : outs) {
    EXPECT_TRUE(t.error.ok()) << t.error.to_string();
    if (t.finished) {
      g.finish = t.finish_reason;
      if (t.finish_reason != "length" && t.finish_reason != "stop") continue;  // no token
    }
    g.tokens.push_back(t.token);
    g.logprobs.push_back(t.logprob);
  }
  return g;
}

SequenceRequest greedy_request(std::vector<int32_t> prompt, int64_t n_new) {
  SequenceRequest r;
  r.prompt = std::move(prompt);
  r.sampling.temperature = 0.0f;
  r.sampling.ignore_eos = true;
  r.max_new_tokens = n_new;
  r.top_logprobs = 0;
  return r;
}

// Prompts with repeats (n-gram drafts find matches) and without.
std::vector<std::vector<int32_t>> prompts() {
  return {{5, 9, 13, 5, 9, 13, 5, 9},
          {100, 101, 102, 103},
          {7, 7, 7, 7, 7, 7},
          {40, 41, 42, 43, 44, 40, 41, 42, 43, 44, 40, 41},
          {200}};
}

// Runs every prompt concurrently and returns their outputs.
std::vector<Gen> run_all(Engine& e, std::shared_ptr<Drafter> drafter, SpecOptions spec,
                         const std::vector<SequenceRequest>& reqs,
                         SchedulerStats* stats = nullptr) {
  SchedulerOptions so;
  so.max_batch_tokens = 64;
  so.ctx_size = 256;
  so.drafter = std::move(drafter);
  so.spec = spec;
  Scheduler sched(*e.exec, *e.kv, e.model->config().n_vocab, so);
  std::vector<std::shared_ptr<RequestHandle>> hs;
  for (const SequenceRequest& r : reqs) hs.push_back(sched.submit(r));
  std::vector<Gen> out;
  for (auto& h : hs) out.push_back(collect(h));
  if (stats) {
    // The loop updates its figures when it next goes idle.
    *stats = sched.stats();
    for (int i = 0; i < 100 && stats->kv_blocks_used != 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      *stats = sched.stats();
    }
  }
  return out;
}

void expect_same(const std::vector<Gen>& want, const std::vector<Gen>& got, const char* what) {
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(want[i].tokens, got[i].tokens) << what << ", request " << i;
    EXPECT_EQ(want[i].finish, got[i].finish) << what << ", request " << i;
    ASSERT_EQ(want[i].logprobs.size(), got[i].logprobs.size()) << what;
    for (size_t j = 0; j < want[i].logprobs.size(); ++j) {
      EXPECT_NEAR(want[i].logprobs[j], got[i].logprobs[j], 1e-4) << what << ", token " << j;
    }
  }
}

TEST(Speculative, GreedyTokensEqualDecodingWithoutItForEveryDrafter) {
  auto e = tiny_engine();
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  const int64_t n_vocab = e->model->config().n_vocab;
  std::vector<SequenceRequest> reqs;
  for (const auto& p : prompts()) reqs.push_back(greedy_request(p, 40));
  const std::vector<Gen> want = run_all(*e, nullptr, {}, reqs);

  SpecOptions ngram;
  ngram.kind = SpecKind::kNgram;
  SchedulerStats st;
  expect_same(want, run_all(*e, std::make_shared<NgramDrafter>(), ngram, reqs, &st), "ngram");
  EXPECT_GT(st.draft_tokens, 0u);
  EXPECT_GT(st.accepted_tokens, 0u) << "the n-gram drafter never hit: the test exercises nothing";
  EXPECT_LE(st.accepted_tokens, st.draft_tokens);
  EXPECT_EQ(st.kv_blocks_used, 0) << "blocks left after every request finished";

  // The scripted drafter knows request 0's continuation: every error rate gives the same
  // tokens, a fixed k as well as the adaptive one; other requests get wrong drafts.
  for (double err : {0.0, 0.3, 1.0}) {
    for (int k : {0, 3, 7}) {
      SpecOptions sc;
      sc.kind = SpecKind::kScripted;
      sc.error_rate = err;
      sc.k = k;
      auto d = std::make_shared<ScriptedDrafter>(want[0].tokens, err, n_vocab);
      SchedulerStats s2;
      const std::string what = "scripted " + std::to_string(err) + " k " + std::to_string(k);
      expect_same(want, run_all(*e, d, sc, reqs, &s2), what.c_str());
      EXPECT_GT(s2.draft_tokens, 0u) << what;
      if (err == 0.0) EXPECT_GT(s2.accepted_tokens, 25u) << what;
      if (err == 1.0) EXPECT_EQ(s2.accepted_tokens, 0u) << what;
    }
  }
}

TEST(Speculative, StopTokensMaxTokensAndLogprobsAsWithout) {
  auto e = tiny_engine();
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  const int64_t n_vocab = e->model->config().n_vocab;
  std::vector<SequenceRequest> base;
  for (const auto& p : prompts()) base.push_back(greedy_request(p, 30));
  const std::vector<Gen> free_run = run_all(*e, nullptr, {}, base);
  // Each request stops at its 6th token (as an end-of-generation id), or after 1..5 tokens.
  std::vector<SequenceRequest> reqs = base;
  for (size_t i = 0; i < base.size(); ++i) {
    reqs[i].sampling.ignore_eos = false;
    reqs[i].stop_tokens = {free_run[i].tokens[5]};
    reqs[i].top_logprobs = 3;
    SequenceRequest capped = base[i];
    capped.max_new_tokens = static_cast<int64_t>(i) + 1;
    reqs.push_back(capped);
  }
  const std::vector<Gen> want = run_all(*e, nullptr, {}, reqs);
  SpecOptions sc;
  sc.kind = SpecKind::kScripted;
  sc.k = 8;
  // Drafts that run through the stop token and past max_tokens.
  for (size_t i = 0; i < base.size(); ++i) {
    auto d = std::make_shared<ScriptedDrafter>(free_run[i].tokens, 0.0, n_vocab);
    std::vector<SequenceRequest> one = {reqs[i], reqs[base.size() + i]};
    const std::vector<Gen> w = {want[i], want[base.size() + i]};
    expect_same(w, run_all(*e, d, sc, one), "scripted through stops");
  }
}

TEST(Speculative, CancellationMidDraftAndPrefixReuse) {
  auto e = tiny_engine();
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  const std::vector<int32_t> prompt = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3, 8};
  const std::vector<Gen> want = run_all(*e, nullptr, {}, {greedy_request(prompt, 60)});
  SchedulerOptions so;
  so.max_batch_tokens = 64;
  so.ctx_size = 256;
  so.spec.kind = SpecKind::kScripted;
  so.spec.k = 6;
  so.drafter = std::make_shared<ScriptedDrafter>(want[0].tokens, 0.2, e->model->config().n_vocab);
  Scheduler sched(*e->exec, *e->kv, e->model->config().n_vocab, so);
  for (int round = 0; round < 3; ++round) {
    // Cancelled after its first outputs, while drafts are in flight.
    auto h = sched.submit(greedy_request(prompt, 60));
    std::vector<TokenOutput> outs;
    while (outs.empty()) h->next(outs, std::chrono::milliseconds(50));
    h->cancel();
    while (h->next(outs, std::chrono::milliseconds(50))) {
    }
    EXPECT_TRUE(outs.back().finished);
    // The same prompt again reuses the cached prefix and still gives the same tokens.
    const Gen g = collect(sched.submit(greedy_request(prompt, 60)));
    EXPECT_EQ(g.tokens, want[0].tokens) << "round " << round;
    EXPECT_GT(h->timing().prompt_tokens, 0);
  }
  // The loop updates its figures when it next goes idle.
  SchedulerStats st = sched.stats();
  for (int i = 0; i < 100 && st.kv_blocks_used != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    st = sched.stats();
  }
  EXPECT_GT(st.prefix_hit_tokens, 0u);
  EXPECT_GT(st.accepted_tokens, 0u);
  EXPECT_EQ(st.kv_blocks_used, 0);
}

// The exact distribution of the first two sampled tokens (temperature, top_k), from the forward.
std::map<std::pair<int32_t, int32_t>, double> exact_pairs(Engine& e, std::vector<int32_t> prompt,
                                                          float temperature, int top_k) {
  const int32_t seq = e.kv->add_sequence();
  EXPECT_TRUE(e.kv->reserve(seq, 64).ok());
  auto dist = [&](std::span<const float> l) {
    std::vector<int32_t> idx(l.size());
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<int32_t>(i);
    std::partial_sort(idx.begin(), idx.begin() + top_k, idx.end(),
                      [&](int32_t a, int32_t b) { return l[a] > l[b] || (l[a] == l[b] && a < b); });
    std::vector<std::pair<int32_t, double>> p;
    double z = 0;
    for (int i = 0; i < top_k; ++i) {
      const double w = std::exp((l[idx[i]] - l[idx[0]]) / temperature);
      p.push_back({idx[i], w});
      z += w;
    }
    for (auto& x : p) x.second /= z;
    return p;
  };
  auto logits_after = [&](const std::vector<int32_t>& toks) {
    std::vector<int32_t> pos(toks.size()), seqs(toks.size(), seq);
    for (size_t i = 0; i < pos.size(); ++i) pos[i] = static_cast<int32_t>(i);
    auto l = e.exec->run({toks, pos, seqs, {}});
    EXPECT_TRUE(l.ok());
    return l.ok() ? *l : std::vector<float>{};
  };
  std::map<std::pair<int32_t, int32_t>, double> out;
  for (auto [t1, p1] : dist(logits_after(prompt))) {
    std::vector<int32_t> with = prompt;
    with.push_back(t1);
    for (auto [t2, p2] : dist(logits_after(with))) out[{t1, t2}] = p1 * p2;
  }
  e.kv->free_sequence(seq);
  return out;
}

double chi_square(const std::map<std::pair<int32_t, int32_t>, double>& p,
                  const std::map<std::pair<int32_t, int32_t>, int>& seen, int n) {
  double chi = 0;
  for (const auto& [k, prob] : p) {
    const double want = prob * n;
    const auto it = seen.find(k);
    const double got = it == seen.end() ? 0 : it->second;
    chi += (got - want) * (got - want) / want;
  }
  for (const auto& [k, c] : seen) EXPECT_TRUE(p.count(k)) << "a pair outside the top-k";
  return chi;
}

TEST(Speculative, SampledOutputHasTheModelsDistribution) {
  auto e = tiny_engine();
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  const std::vector<int32_t> prompt = {17, 23, 42, 99};
  const float temperature = 1.5f;
  const int top_k = 4;
  const auto exact = exact_pairs(*e, prompt, temperature, top_k);
  ASSERT_EQ(exact.size(), 16u);
  // The draft: the second most likely first token, then the likeliest after it, so that both
  // acceptance and rejection (a draw from the residual) happen often.
  std::vector<std::pair<double, std::pair<int32_t, int32_t>>> by_p;
  std::map<int32_t, double> first;
  for (const auto& [k, p] : exact) first[k.first] += p;
  std::vector<std::pair<double, int32_t>> firsts;
  for (auto [t, p] : first) firsts.push_back({p, t});
  std::sort(firsts.rbegin(), firsts.rend());
  const int32_t a = firsts[1].second;
  int32_t b = -1;
  double pb = -1;
  for (const auto& [k, p] : exact) {
    if (k.first == a && p > pb) {
      pb = p;
      b = k.second;
    }
  }
  const int n = 3000;
  // chi-square with 15 degrees of freedom: 37.7 is the 0.999 quantile. Seeds are fixed, so the
  // test is deterministic; the plain sampler is checked the same way (the oracle's own check).
  for (bool spec : {false, true}) {
    SchedulerOptions so;
    so.max_batch_tokens = 256;
    so.ctx_size = 64;
    if (spec) {
      so.spec.kind = SpecKind::kScripted;
      so.spec.k = 2;
      so.drafter = std::make_shared<ScriptedDrafter>(std::vector<int32_t>{a, b, a}, 0.0,
                                                     e->model->config().n_vocab);
    }
    Scheduler sched(*e->exec, *e->kv, e->model->config().n_vocab, so);
    std::map<std::pair<int32_t, int32_t>, int> seen;
    std::vector<std::shared_ptr<RequestHandle>> hs;
    for (int i = 0; i < n; ++i) {
      SequenceRequest r;
      r.prompt = prompt;
      r.sampling.temperature = temperature;
      r.sampling.top_k = top_k;
      r.sampling.seed = 1000 + static_cast<uint64_t>(i);
      r.sampling.ignore_eos = true;
      r.max_new_tokens = 3;
      hs.push_back(sched.submit(r));
    }
    std::vector<std::vector<int32_t>> outs;
    for (auto& h : hs) {
      const Gen g = collect(h);
      ASSERT_EQ(g.tokens.size(), 3u);
      seen[{g.tokens[0], g.tokens[1]}]++;
      outs.push_back(g.tokens);
    }
    const double chi = chi_square(exact, seen, n);
    EXPECT_LT(chi, 37.7) << (spec ? "speculative" : "plain") << " sampling";
    if (spec) {
      const SchedulerStats st = sched.stats();
      EXPECT_GT(st.accepted_tokens, 200u);
      EXPECT_GT(st.draft_tokens - st.accepted_tokens, 200u);
      // Per-request seeds repeat: the same seed gives the same tokens again.
      for (int i = 0; i < 20; ++i) {
        SequenceRequest r;
        r.prompt = prompt;
        r.sampling.temperature = temperature;
        r.sampling.top_k = top_k;
        r.sampling.seed = 1000 + static_cast<uint64_t>(i);
        r.sampling.ignore_eos = true;
        r.max_new_tokens = 3;
        EXPECT_EQ(collect(sched.submit(r)).tokens, outs[static_cast<size_t>(i)]);
      }
    }
  }
}

TEST(Speculative, ParsesTheSpecOption) {
  EXPECT_EQ(parse_spec("none", 0)->kind, SpecKind::kNone);
  EXPECT_EQ(parse_spec("ngram", 4)->kind, SpecKind::kNgram);
  EXPECT_EQ(parse_spec("ngram", 4)->max_k(), 4);
  EXPECT_EQ(parse_spec("ngram", 0)->max_k(), SpecOptions::kDefaultMaxK);
  auto d = parse_spec("draft:/m/small.gguf", 0);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->kind, SpecKind::kDraftModel);
  EXPECT_EQ(d->draft_path, "/m/small.gguf");
  EXPECT_NEAR(parse_spec("scripted:0.25", 0)->error_rate, 0.25, 1e-12);
  EXPECT_FALSE(parse_spec("scripted:2", 0).ok());
  EXPECT_FALSE(parse_spec("draft:", 0).ok());
  EXPECT_FALSE(parse_spec("medusa", 0).ok());
  EXPECT_FALSE(parse_spec("ngram", 99).ok());
}

TEST(Speculative, NgramDrafterProposesWhatFollowedTheLatestMatch) {
  NgramDrafter d(2, 3);
  auto s = d.start({});
  std::vector<int32_t> out;
  const std::vector<int32_t> t = {1, 2, 3, 4, 9, 1, 2, 3, 5, 6, 2, 3};
  s->propose(t, 3, out);
  EXPECT_EQ(out, (std::vector<int32_t>{5, 6, 2}));  // "2 3" last followed by 5 6 2
  out.clear();
  const std::vector<int32_t> loop = {8, 8, 8};
  auto s2 = d.start({});
  s2->propose(loop, 4, out);
  EXPECT_EQ(out, (std::vector<int32_t>{8, 8, 8, 8}));  // a loop keeps looping
  out.clear();
  const std::vector<int32_t> none = {1, 2, 3, 4};
  auto s3 = d.start({});
  s3->propose(none, 4, out);
  EXPECT_TRUE(out.empty());
}

TEST(Speculative, AdaptiveKBacksOffAndRecovers) {
  AdaptiveK k(4, true);
  EXPECT_EQ(k.next(), 4);
  k.record(4, 0);
  EXPECT_EQ(k.next(), 2);
  k.record(2, 0);
  EXPECT_EQ(k.next(), 1);
  k.record(1, 0);
  int idle = 0;
  while (k.next() == 0) ++idle;
  EXPECT_GE(idle, 3);
  k.record(1, 1);
  EXPECT_EQ(k.next(), 2);
  k.record(2, 1);
  EXPECT_EQ(k.next(), 2);
  AdaptiveK fixed(5, false);
  fixed.record(5, 0);
  EXPECT_EQ(fixed.next(), 5);
}

}  // namespace
}  // namespace arc::testing
