// Shared check of ForwardExecutor's sampled steps (arc/step_candidates.h) for any backend: the
// same batch run with whole rows and then with StepSampling; the sampled step's candidates must
// equal kernels::top_candidates_ref on that step's own rows (fetch_row) bit for bit, its whole
// rows must be those rows, and they must match the whole-row run. Used by the CPU model tests
// and the CUDA backend tests.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <vector>

#include "arc/kernels/candidates.h"
#include "model/test_util.h"
#include "sched/scheduler.h"

namespace arc::testing {

inline StepSampling mixed_sampling(int64_t n_rows) {
  StepSampling s;
  for (int64_t r = 0; r < n_rows; ++r) {
    kernels::CandidateRow row;
    row.pen_begin = row.pen_end = static_cast<int32_t>(s.pen_tokens.size());
    switch (r % 4) {
      case 0:  // greedy with logprobs
        row.k = 1;
        row.flags = kernels::kCandidateLse;
        break;
      case 1:  // top-k with penalties
        row.k = 40;
        row.repetition_penalty = 1.2f;
        row.presence_penalty = 0.5f;
        row.frequency_penalty = 0.25f;
        for (int32_t t = 1; t < 200; t += 3) {
          s.pen_tokens.push_back(t);
          s.pen_counts.push_back(t % 4);
        }
        break;
      case 2:  // the whole row
        row.k = 0;
        break;
      default:  // the cap, with the tempered mass and the lse
        row.k = kernels::kMaxCandidates;
        row.flags = kernels::kCandidateLse | kernels::kCandidateMass;
        row.temperature = 0.8f;
        row.repetition_penalty = 0.9f;
        for (int32_t t = 0; t < 50; ++t) {
          s.pen_tokens.push_back(t * 5);
          s.pen_counts.push_back(t % 2);
        }
        break;
    }
    row.pen_end = static_cast<int32_t>(s.pen_tokens.size());
    s.rows.push_back(row);
  }
  return s;
}

// Runs `batch` whole, then sampled, on `e` and compares. The batch's K/V slots are written twice
// with the same values.
inline void expect_sampled_step_matches(Engine& e, const ForwardBatch& batch) {
  const int64_t v = e.model->config().n_vocab;
  auto whole = e.exec->run(batch);
  ASSERT_TRUE(whole.ok()) << whole.status().to_string();
  const int64_t n_rows = static_cast<int64_t>(whole->size()) / v;
  const StepSampling s = mixed_sampling(n_rows);
  ASSERT_TRUE(e.exec->submit(batch, s).ok());
  StepCandidates c;
  ASSERT_TRUE(e.exec->wait(c).ok());
  ASSERT_EQ(c.n_rows, n_rows);
  ASSERT_EQ(c.n_vocab, v);
  for (int64_t r = 0; r < n_rows; ++r) {
    // The oracle is this step's own row (fetched after the candidates); it must also be the row
    // of the whole-row run (to rounding: a GPU may group the same sums differently).
    std::vector<float> raw;
    ASSERT_TRUE(e.exec->fetch_row(r, raw).ok());
    ASSERT_EQ(static_cast<int64_t>(raw.size()), v);
    double diff = 0.0, mag = 0.0;
    for (int64_t i = 0; i < v; ++i) {
      diff = std::max(diff, std::fabs(static_cast<double>(raw[i]) - (*whole)[r * v + i]));
      mag = std::max(mag, std::fabs(static_cast<double>((*whole)[r * v + i])));
    }
    EXPECT_LE(diff, 1e-4 * (1.0 + mag)) << "row " << r;
    const kernels::CandidateRow& row = s.rows[r];
    if (row.k == 0) {
      const auto full = c.full_row(r);
      ASSERT_EQ(static_cast<int64_t>(full.size()), v);
      EXPECT_TRUE(std::equal(full.begin(), full.end(), raw.begin())) << "row " << r;
      continue;
    }
    kernels::CandidateRow one = row;
    const int32_t k = static_cast<int32_t>(std::min<int64_t>(row.k, v));
    ASSERT_EQ(c.k[r], k);
    std::vector<int32_t> ids(static_cast<size_t>(k));
    std::vector<float> values(static_cast<size_t>(k));
    double stats[3];
    kernels::TopCandidatesArgs a;
    a.logits = raw.data();
    a.n_rows = 1;
    a.n_vocab = v;
    a.rows = &one;
    a.pen_tokens = s.pen_tokens.data();
    a.pen_counts = s.pen_counts.data();
    a.k_stride = k;
    a.ids = ids.data();
    a.values = values.data();
    a.stats = stats;
    kernels::top_candidates_ref(a);
    for (int32_t i = 0; i < k; ++i) {
      ASSERT_EQ(c.ids[r * c.k_stride + i], ids[i]) << "row " << r << " rank " << i;
      ASSERT_EQ(c.values[r * c.k_stride + i], values[i]) << "row " << r << " rank " << i;
    }
    for (int j = 0; j < 3; ++j) {
      EXPECT_NEAR(c.stats[3 * r + j], stats[j], 1e-12 * (1.0 + std::fabs(stats[j])))
          << "row " << r << " stat " << j;
    }
  }
}

// The scheduler samples through candidates; a plain loop over whole rows with the same seed (the
// sampler as it was) is the oracle. Both prefill the prompt in the same chunks of 8 (some steps
// want no row), so both see the same logits on any backend.
inline void expect_scheduler_matches_whole_rows(const std::function<Result<Engine>()>& make) {
  constexpr int64_t kChunk = 8;
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
    auto ref = make();
    ASSERT_TRUE(ref.ok()) << ref.status().to_string();
    const int32_t sq = ref->kv->add_sequence();
    ASSERT_TRUE(ref->kv->reserve(sq, static_cast<int64_t>(prompt.size()) + n_new).ok());
    std::vector<int32_t> hist = prompt, want;
    Sampler sampler(sp);
    Result<std::vector<float>> logits = std::vector<float>{};
    for (size_t b = 0; b < prompt.size(); b += kChunk) {
      const size_t n = std::min<size_t>(kChunk, prompt.size() - b);
      std::vector<int32_t> tok(prompt.begin() + b, prompt.begin() + b + n), pos(n), seqs(n, sq);
      for (size_t i = 0; i < n; ++i) pos[i] = static_cast<int32_t>(b + i);
      logits = ref->exec->run({tok, pos, seqs, {}});
      ASSERT_TRUE(logits.ok()) << logits.status().to_string();
    }
    for (int i = 0; i < n_new && logits.ok(); ++i) {
      const int32_t t = sampler.sample(*logits, hist, static_cast<int64_t>(prompt.size()));
      want.push_back(t);
      hist.push_back(t);
      const int32_t p = static_cast<int32_t>(hist.size()) - 1;
      logits = ref->exec->run({std::span(&t, 1), std::span(&p, 1), std::span(&sq, 1), {}});
    }
    ASSERT_TRUE(logits.ok()) << logits.status().to_string();
    // Scheduler.
    auto e = make();
    ASSERT_TRUE(e.ok()) << e.status().to_string();
    SchedulerOptions so;
    so.max_batch_tokens = kChunk;
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

}  // namespace arc::testing
