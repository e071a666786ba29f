// Device-side sampling, host half: a Sampler finishing on candidates (kernels::top_candidates_ref,
// the CPU implementation of what the CUDA kernel computes) must pick exactly the token the
// full-row Sampler picks, step after step with the same seed, over random rows and parameters;
// logprobs from candidates must equal the full row's. The oracle is Sampler::sample on the whole
// row (the sampler as it was before device sampling).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "arc/kernels/candidates.h"
#include "sched/sampler.h"

namespace arc {
namespace {

using kernels::CandidateRow;
using kernels::TopCandidatesArgs;

// Logits of one row: `peaked` rows look like a confident model (a few tokens hold most of the
// mass), flat rows like an unsure one; `ties` rounds values so equal logits occur.
std::vector<float> random_row(std::mt19937_64& g, int64_t n_vocab, bool peaked, bool ties) {
  std::normal_distribution<float> d(0.0f, peaked ? 2.5f : 0.6f);
  std::vector<float> l(static_cast<size_t>(n_vocab));
  for (float& x : l) {
    x = d(g);
    if (ties) x = std::round(x * 4.0f) / 4.0f;
  }
  if (peaked) {
    std::uniform_int_distribution<int64_t> at(0, n_vocab - 1);
    for (int i = 0; i < 3; ++i) l[static_cast<size_t>(at(g))] += 9.0f - 2.0f * i;
  }
  return l;
}

struct Selected {
  std::vector<int32_t> ids;
  std::vector<float> values;
  double stats[3] = {0, 0, 0};
};

Selected select(const std::vector<float>& logits, const CandidateRow& row,
                const std::vector<int32_t>& pen_tokens, const std::vector<int32_t>& pen_counts) {
  Selected s;
  s.ids.assign(static_cast<size_t>(row.k), -1);
  s.values.assign(static_cast<size_t>(row.k), 0.0f);
  TopCandidatesArgs a;
  a.logits = logits.data();
  a.n_rows = 1;
  a.n_vocab = static_cast<int64_t>(logits.size());
  a.rows = &row;
  a.pen_tokens = pen_tokens.data();
  a.pen_counts = pen_counts.data();
  a.k_stride = row.k;
  a.ids = s.ids.data();
  a.values = s.values.data();
  a.stats = s.stats;
  kernels::top_candidates_ref(a);
  const size_t k = static_cast<size_t>(std::min<int64_t>(row.k, a.n_vocab));
  s.ids.resize(k);
  s.values.resize(k);
  return s;
}

Candidates view(const Selected& s, int64_t n_vocab) {
  Candidates c;
  c.ids = s.ids;
  c.values = s.values;
  c.lse = s.stats[0];
  c.mass = s.stats[2];
  c.n_vocab = n_vocab;
  return c;
}

TEST(TopCandidatesRef, MatchesASortOfThePenalisedRow) {
  std::mt19937_64 g(7);
  for (int iter = 0; iter < 60; ++iter) {
    const int64_t n_vocab = iter % 3 == 0 ? 37 : 2000 + iter;
    std::vector<float> l = random_row(g, n_vocab, iter % 2 == 0, iter % 4 < 2);
    if (iter % 5 == 0) l[3] = -0.0f, l[4] = 0.0f;  // +0 and -0 are equal: lower id first
    CandidateRow row;
    row.k = std::min<int32_t>(1 + iter * 17 % 300, kernels::kMaxCandidates);
    row.flags = kernels::kCandidateLse | kernels::kCandidateMass;
    row.temperature = 0.7f;
    std::vector<int32_t> pen_tokens, pen_counts;
    if (iter % 3 != 2) {
      row.repetition_penalty = 1.3f;
      row.presence_penalty = 0.4f;
      row.frequency_penalty = 0.25f;
      for (int32_t t = 0; t < n_vocab; t += 7) {
        pen_tokens.push_back(t);
        pen_counts.push_back(t % 3);
      }
      row.pen_end = static_cast<int32_t>(pen_tokens.size());
    }
    const Selected s = select(l, row, pen_tokens, pen_counts);

    // Oracle: penalise a copy by the textbook rule, sort every id by (value desc, id asc).
    std::vector<float> p = l;
    for (size_t j = 0; j < pen_tokens.size(); ++j) {
      float& x = p[static_cast<size_t>(pen_tokens[j])];
      x = x > 0 ? x / row.repetition_penalty : x * row.repetition_penalty;
      if (pen_counts[j] > 0) {
        const float f = row.frequency_penalty * static_cast<float>(pen_counts[j]);
        x -= row.presence_penalty + f;
      }
    }
    std::vector<int32_t> order(static_cast<size_t>(n_vocab));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return p[a] > p[b]; });
    const size_t k = std::min<size_t>(static_cast<size_t>(row.k), static_cast<size_t>(n_vocab));
    ASSERT_EQ(s.ids.size(), k);
    for (size_t i = 0; i < k; ++i) {
      ASSERT_EQ(s.ids[i], order[i]) << "iter " << iter << " rank " << i;
      ASSERT_EQ(s.values[i], p[static_cast<size_t>(order[i])]);
    }
    // lse of the raw row: the logprob of any token through it equals token_logprob.
    EXPECT_EQ(static_cast<float>(l[5] - s.stats[0]), token_logprob(l, 5));
    EXPECT_EQ(s.stats[1], static_cast<double>(p[static_cast<size_t>(order[0])]));
    double mass = 0.0;
    for (float x : p) mass += std::exp((x - static_cast<double>(p[order[0]])) / 0.7f);
    EXPECT_NEAR(s.stats[2], mass, 1e-9 * mass);
  }
}

struct Case {
  float temperature, top_p, min_p;
  int top_k;
  bool penalties;
};

// Runs `steps` tokens of one sequence twice from the same seed: the full-row Sampler, and the
// candidates path with the full-row fallback the scheduler uses. Returns how many tokens the
// candidates decided on their own.
int run_lockstep(const Case& cs, int64_t n_vocab, uint64_t seed, int steps, bool peaked,
                 int top_logprobs, double mass_skew = 0.0) {
  SamplingParams sp;
  sp.temperature = cs.temperature;
  sp.top_k = cs.top_k;
  sp.top_p = cs.top_p;
  sp.min_p = cs.min_p;
  if (cs.penalties) {
    sp.repetition_penalty = 1.15f;
    sp.presence_penalty = 0.3f;
    sp.frequency_penalty = 0.2f;
  }
  sp.seed = seed;
  Sampler full(sp), cand(sp);
  std::mt19937_64 g(seed * 31 + 5);
  std::vector<int32_t> history;
  for (int i = 0; i < 12; ++i) history.push_back(static_cast<int32_t>(g() % n_vocab));
  const int64_t n_prompt = static_cast<int64_t>(history.size());
  int decided = 0;
  for (int step = 0; step < steps; ++step) {
    const std::vector<float> l = random_row(g, n_vocab, peaked, step % 3 == 0);
    const int32_t want = full.sample(l, history, n_prompt);

    CandidateRow row;
    std::vector<int32_t> pen_tokens, pen_counts;
    int32_t got = -1;
    bool from_candidates = false;
    if (cand.candidate_row(history, n_prompt, n_vocab, top_logprobs, row, pen_tokens, pen_counts)) {
      Selected s = select(l, row, pen_tokens, pen_counts);
      s.stats[2] *= 1.0 + mass_skew;  // a device summing in another order
      const Candidates c = view(s, n_vocab);
      if (auto t = cand.sample_candidates(c)) {
        got = *t;
        from_candidates = true;
        ++decided;
      }
      if (top_logprobs >= 0 && from_candidates) {
        // Rows with logprobs have no penalties here (candidate_row refuses the mix).
        const auto lp = candidate_logprob(c, got);
        EXPECT_TRUE(lp.has_value());
        if (lp) {
          EXPECT_EQ(*lp, token_logprob(l, got));
        }
        const auto top = candidate_top_logprobs(c, top_logprobs);
        const auto want_top = arc::top_logprobs(l, top_logprobs);
        EXPECT_EQ(top.size(), want_top.size());
        for (size_t i = 0; i < std::min(top.size(), want_top.size()); ++i) {
          EXPECT_EQ(top[i].token, want_top[i].token);
          EXPECT_EQ(top[i].logprob, want_top[i].logprob);
        }
      }
    }
    if (!from_candidates) got = cand.sample(l, history, n_prompt);
    EXPECT_EQ(got, want) << "step " << step << " T " << cs.temperature << " top_k " << cs.top_k
                         << " top_p " << cs.top_p << " min_p " << cs.min_p << " vocab " << n_vocab;
    if (got != want) return decided;
    history.push_back(want);
  }
  return decided;
}

const Case kCases[] = {
    {0.0f, 1.0f, 0.0f, 0, false},      {0.0f, 1.0f, 0.0f, 0, true},
    {1.0f, 1.0f, 0.0f, 1, true},       {0.7f, 1.0f, 0.0f, 40, false},
    {0.7f, 0.9f, 0.0f, 40, true},      {1.3f, 0.5f, 0.1f, 20, false},
    {0.8f, 0.95f, 0.0f, 0, false},     {0.6f, 0.9f, 0.05f, 0, true},
    {1.0f, 1.0f, 0.0f, 0, false},      {1.0f, 1.0f, 0.1f, 0, false},
    {1.5f, 0.99f, 0.0f, 0, true},      {0.9f, 1.0f, 0.0f, 5000, false},
    {0.7f, 0.8f, 0.0f, 1000000, true}, {1.0f, 0.3f, 0.5f, 3, false},
};

TEST(SamplerCandidates, SameTokensAsTheFullRowSampler) {
  int decided = 0, total = 0;
  uint64_t seed = 1;
  for (const Case& cs : kCases) {
    for (int64_t n_vocab : {int64_t{61}, int64_t{3001}, int64_t{20011}}) {
      for (bool peaked : {true, false}) {
        const int steps = n_vocab > 10000 ? 12 : 30;
        decided += run_lockstep(cs, n_vocab, seed++, steps, peaked, -1);
        total += steps;
        if (HasFailure()) return;
      }
    }
  }
  // The point of candidates: most tokens need no whole row.
  EXPECT_GT(decided, total * 6 / 10) << decided << " of " << total;
}

TEST(SamplerCandidates, LogprobsFromCandidatesEqualTheFullRow) {
  const Case cases[] = {{0.0f, 1.0f, 0.0f, 0, false},
                        {0.8f, 0.9f, 0.0f, 0, false},
                        {1.0f, 1.0f, 0.0f, 0, false},
                        {0.7f, 1.0f, 0.0f, 3, false}};
  uint64_t seed = 100;
  for (const Case& cs : cases) {
    for (int n : {0, 1, 5, 20}) {
      run_lockstep(cs, 3001, seed++, 15, true, n);
      if (HasFailure()) return;
    }
  }
}

TEST(SamplerCandidates, DeviceRoundingOfTheMassNeverChangesTheToken) {
  // The mass from a device differs from the host's sorted sum in its last bits; decisions close
  // to an edge fall back to the full row, so the tokens stay the same.
  const Case cases[] = {
      {1.0f, 1.0f, 0.0f, 0, false}, {0.8f, 0.95f, 0.0f, 0, false}, {1.2f, 0.9f, 0.02f, 0, true}};
  uint64_t seed = 500;
  for (const Case& cs : cases) {
    for (double skew : {1e-12, -1e-12, 3e-11}) {
      run_lockstep(cs, 20011, seed++, 25, true, -1, skew);
      if (HasFailure()) return;
    }
  }
}

TEST(SamplerCandidates, RowRequests) {
  SamplingParams sp;
  sp.temperature = 0.0f;
  std::vector<int32_t> toks, counts;
  CandidateRow row;
  // Greedy: one candidate, or as many as the logprobs want.
  ASSERT_TRUE(Sampler(sp).candidate_row({}, 0, 1000, -1, row, toks, counts));
  EXPECT_EQ(row.k, 1);
  ASSERT_TRUE(Sampler(sp).candidate_row({}, 0, 1000, 5, row, toks, counts));
  EXPECT_EQ(row.k, 5);
  EXPECT_EQ(row.flags, kernels::kCandidateLse);
  // Top-k sampling: k candidates, no mass needed.
  sp.temperature = 0.7f;
  sp.top_k = 40;
  ASSERT_TRUE(Sampler(sp).candidate_row({}, 0, 1000, -1, row, toks, counts));
  EXPECT_EQ(row.k, 40);
  EXPECT_EQ(row.flags, 0u);
  // No top-k: the cap and the row's mass.
  sp.top_k = 0;
  ASSERT_TRUE(Sampler(sp).candidate_row({}, 0, 100000, -1, row, toks, counts));
  EXPECT_EQ(row.k, kernels::kMaxCandidates);
  EXPECT_EQ(row.flags, kernels::kCandidateMass);
  // A top-k above the cap, and logprobs with penalties, need the whole row.
  sp.top_k = kernels::kMaxCandidates + 1;
  EXPECT_FALSE(Sampler(sp).candidate_row({}, 0, 100000, -1, row, toks, counts));
  sp.top_k = 0;
  sp.presence_penalty = 0.5f;
  const std::vector<int32_t> hist = {4, 9, 4, 7, 9, 9, -3, 200};
  EXPECT_FALSE(Sampler(sp).candidate_row(hist, 3, 100, 0, row, toks, counts));
  // Penalty pairs: distinct valid tokens with their output counts (output = from index 3).
  ASSERT_TRUE(Sampler(sp).candidate_row(hist, 3, 100, -1, row, toks, counts));
  EXPECT_EQ(toks, (std::vector<int32_t>{4, 9, 7}));  // order of first appearance
  EXPECT_EQ(counts, (std::vector<int32_t>{0, 2, 1}));
  EXPECT_EQ(row.pen_begin, 0);
  EXPECT_EQ(row.pen_end, 3);
}

}  // namespace
}  // namespace arc
