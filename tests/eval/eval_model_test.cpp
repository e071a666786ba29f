// The whole evaluation on generated models: perplexity and KL divergence from run_eval() on the
// engine's forward against an independent computation (the double-precision reference forward of
// tests/model, long-double arithmetic written out here), and the properties the figures must
// have: a model against itself, quantized builds in their order, saved logits within bounds.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <numeric>
#include <tuple>

#include "arc/eval/builtin_text.h"
#include "arc/eval/evaluator.h"
#include "arc/gguf.h"
#include "model/reference_forward.h"
#include "model/test_util.h"

namespace arc::testing {
namespace {

using LD = long double;
constexpr int64_t kCtx = 32;
constexpr int64_t kWindows = 8;
constexpr int32_t kBos = 256;  // the synthetic vocabulary's BOS

TestModelOptions dense(const char* type) {
  TestModelOptions o;
  o.family = Family::kQwen3;
  o.n_layer = 2;
  o.n_embd = 256;  // K-quants need rows of 256
  o.n_ff = 256;
  o.n_head = 4;
  o.n_kv_head = 2;
  o.head_dim = 64;
  o.type = type;
  o.seed = 9;
  return o;
}

// The text: the built-in text's first bytes as ids of the synthetic byte vocabulary, exactly
// kWindows windows of stride ctx/2.
std::vector<int32_t> text_tokens() {
  const std::string t = eval::builtin_eval_text();
  std::vector<int32_t> ids;
  for (int64_t i = 0; i < kCtx + (kWindows - 1) * kCtx / 2; ++i) {
    ids.push_back(static_cast<unsigned char>(t[static_cast<size_t>(i)]));
  }
  return ids;
}

eval::WindowLogits logits_of(Engine& e) {
  return [&e](std::span<const int32_t> toks, std::span<const int32_t> rows,
              std::vector<float>& logits) -> Status {
    const int32_t seq = e.kv->add_sequence();
    ARC_RETURN_IF_ERROR(e.kv->reserve(seq, static_cast<int64_t>(toks.size())));
    std::vector<int32_t> pos(toks.size()), seqs(toks.size(), seq);
    std::iota(pos.begin(), pos.end(), 0);
    auto out = e.exec->run({toks, pos, seqs, rows});
    e.kv->free_sequence(seq);
    ARC_RETURN_IF_ERROR(out);
    logits = std::move(*out);
    return ok_status();
  };
}

eval::EvalSetup setup_for(const std::vector<int32_t>& toks, Engine& model) {
  eval::EvalSetup s;
  s.tokens = toks;
  s.ctx = kCtx;
  s.stride = kCtx / 2;
  s.bos = kBos;
  s.n_vocab = model.model->config().n_vocab;
  s.model = logits_of(model);
  return s;
}

// The oracle's logits: window w (starting at w * ctx/2, BOS first) through the reference
// forward; rows [ctx][n_vocab].
std::vector<std::vector<double>> oracle_window(const ReferenceModel& ref,
                                               const std::vector<int32_t>& toks, int64_t w) {
  std::vector<int32_t> in(toks.begin() + w * kCtx / 2, toks.begin() + w * kCtx / 2 + kCtx);
  in[0] = kBos;
  return ref.forward(in);
}

LD oracle_lse(const std::vector<double>& x) {
  const LD mx = *std::max_element(x.begin(), x.end());
  LD s = 0;
  for (double v : x) s += std::exp(static_cast<LD>(v) - mx);
  return mx + std::log(s);
}

struct Built {
  std::vector<uint8_t> bytes;
  std::unique_ptr<gguf::File> file;
  std::unique_ptr<ReferenceModel> ref;
};
Built reference_of(const TestModelOptions& o) {
  Built b;
  b.bytes = *build_test_model(o);
  b.file = std::make_unique<gguf::File>(*gguf::File::parse(b.bytes, "ref"));
  b.ref = std::make_unique<ReferenceModel>(*b.file);
  return b;
}

TEST(EvalModel, PerplexityMatchesTheReferenceForward) {
  const auto toks = text_tokens();
  auto e = make_engine(dense("F32"), 2);
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  auto got = eval::run_eval(setup_for(toks, *e));
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  ASSERT_EQ(got->windows_done, kWindows);
  ASSERT_EQ(got->nll.size(), static_cast<size_t>(kWindows * kCtx / 2));

  // The oracle: window w scores tokens [w*ctx/2 + ctx/2, w*ctx/2 + ctx), row j-1 predicting j.
  const Built b = reference_of(dense("F32"));
  LD sum = 0;
  size_t at = 0;
  for (int64_t w = 0; w < kWindows; ++w) {
    const auto logits = oracle_window(*b.ref, toks, w);
    for (int64_t j = kCtx / 2; j < kCtx; ++j) {
      const int32_t target = toks[static_cast<size_t>(w * kCtx / 2 + j)];
      const LD nll = oracle_lse(logits[j - 1]) - logits[j - 1][target];
      EXPECT_NEAR(got->nll[at], static_cast<double>(nll), 1e-2 * (1 + std::fabs((double)nll)))
          << "window " << w << " position " << j;
      sum += nll;
      ++at;
    }
  }
  const double want_ppl = std::exp(static_cast<double>(sum / static_cast<LD>(at)));
  const double got_ppl =
      std::exp(std::accumulate(got->nll.begin(), got->nll.end(), 0.0) / got->nll.size());
  EXPECT_NEAR(got_ppl, want_ppl, 1e-3 * want_ppl);
}

// Every logit row of window w (BOS first) from the engine's forward, outside eval: [ctx][n_vocab].
std::vector<std::vector<float>> engine_window(Engine& e, const std::vector<int32_t>& toks,
                                              int64_t w) {
  std::vector<int32_t> in(toks.begin() + w * kCtx / 2, toks.begin() + w * kCtx / 2 + kCtx);
  in[0] = kBos;
  std::vector<int32_t> rows(in.size());
  std::iota(rows.begin(), rows.end(), 0);
  std::vector<float> flat;
  EXPECT_TRUE(logits_of(e)(in, rows, flat).ok());
  const size_t v = flat.size() / in.size();
  std::vector<std::vector<float>> out;
  for (size_t i = 0; i < in.size(); ++i) {
    out.emplace_back(flat.begin() + i * v, flat.begin() + (i + 1) * v);
  }
  return out;
}

template <typename T>
LD kl_ld(const std::vector<T>& r, const std::vector<T>& q) {
  LD mr = r[0], mq = q[0];
  for (size_t v = 0; v < r.size(); ++v) mr = std::max<LD>(mr, r[v]), mq = std::max<LD>(mq, q[v]);
  LD sr = 0, sq = 0;
  for (size_t v = 0; v < r.size(); ++v) sr += std::exp(r[v] - mr), sq += std::exp(q[v] - mq);
  const LD lr = mr + std::log(sr), lq = mq + std::log(sq);
  LD kl = 0;
  for (size_t v = 0; v < r.size(); ++v) {
    const LD lp = r[v] - lr;
    kl += std::exp(lp) * (lp - (q[v] - lq));
  }
  return kl;
}

// KL(F32 || build) per token: exactly the long-double KL of the two engines' own logit rows
// (fetched outside eval), and near the KL of the two files' double-precision reference forwards;
// Q8_0 below Q4_K_M, both small.
TEST(EvalModel, KlOfQuantizedBuildsMatchesIndependentComputations) {
  const auto toks = text_tokens();
  auto f32 = make_engine(dense("F32"), 2);
  ASSERT_TRUE(f32.ok());
  const Built rf = reference_of(dense("F32"));
  double mean_kl[2] = {0, 0};
  int i = 0;
  for (const char* type : {"Q8_0", "Q4_K_M"}) {
    auto q = make_engine(dense(type), 2);
    ASSERT_TRUE(q.ok());
    eval::EvalSetup s = setup_for(toks, *q);
    s.reference = logits_of(*f32);
    auto got = eval::run_eval(s);
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    const Built rq = reference_of(dense(type));
    LD sum_got = 0, sum_weights = 0;
    size_t at = 0;
    for (int64_t w = 0; w < kWindows; ++w) {
      const auto er = engine_window(*f32, toks, w), eq = engine_window(*q, toks, w);
      const auto rr = oracle_window(*rf.ref, toks, w), rq_l = oracle_window(*rq.ref, toks, w);
      for (int64_t j = kCtx / 2; j < kCtx; ++j) {
        const double want = static_cast<double>(kl_ld(er[j - 1], eq[j - 1]));
        ASSERT_NEAR(got->kl[at], want, 1e-9 + 1e-7 * want) << type << " window " << w << " " << j;
        const bool agree =
            std::max_element(er[j - 1].begin(), er[j - 1].end()) - er[j - 1].begin() ==
            std::max_element(eq[j - 1].begin(), eq[j - 1].end()) - eq[j - 1].begin();
        EXPECT_EQ(got->top1[at], agree ? 1 : 0);
        sum_weights += kl_ld(rr[j - 1], rq_l[j - 1]);
        sum_got += got->kl[at++];
      }
    }
    mean_kl[i] = static_cast<double>(sum_got / at);
    const double weights_only = static_cast<double>(sum_weights / at);
    // The engine's quantized matmuls also round activations to 8 bits (the reference forward
    // keeps them in double), so the build as it runs drifts up to a few times further than its
    // weights alone: the same order of magnitude, never less than half.
    EXPECT_GT(mean_kl[i], 0.5 * weights_only) << type;
    EXPECT_LT(mean_kl[i], 3.0 * weights_only + 2e-4) << type;
    ++i;
  }
  EXPECT_LT(mean_kl[0], 0.01);  // Q8_0
  EXPECT_LT(mean_kl[1], 0.5);   // Q4_K_M
  EXPECT_LT(mean_kl[0], mean_kl[1]);
}

TEST(EvalModel, AModelAgainstItselfIsExact) {
  const auto toks = text_tokens();
  auto e = make_engine(dense("Q4_K_M"), 2);
  ASSERT_TRUE(e.ok());
  eval::EvalSetup s = setup_for(toks, *e);
  s.reference = logits_of(*e);
  auto got = eval::run_eval(s);
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  ASSERT_EQ(got->kl.size(), static_cast<size_t>(kWindows * kCtx / 2));
  for (size_t i = 0; i < got->kl.size(); ++i) {
    EXPECT_EQ(got->kl[i], 0.0);
    EXPECT_EQ(got->top1[i], 1);
    EXPECT_EQ(got->nll[i], got->nll_ref[i]);
  }
}

// One run saves F32's rows; Q4_K_M against them gives a KL interval holding the full KL of a
// run against the F32 model itself, token by token.
TEST(EvalModel, SavedLogitsBoundTheFullKl) {
  const auto toks = text_tokens();
  auto f32 = make_engine(dense("F32"), 2);
  auto q4 = make_engine(dense("Q4_K_M"), 2);
  ASSERT_TRUE(f32.ok() && q4.ok());
  for (auto [k, tail, samples] :
       {std::tuple{4, 0.0, 0}, std::tuple{16, 1e-3, 32}, std::tuple{300, 0.0, 32}}) {
    eval::EvalSetup save = setup_for(toks, *f32);
    save.save_top_k = k;
    save.save_tail_mass = tail;
    save.save_tail_samples = samples;
    auto saved = eval::run_eval(save);
    ASSERT_TRUE(saved.ok());
    ASSERT_EQ(saved->saved.n_rows(), static_cast<int64_t>(saved->nll.size()));

    eval::EvalSetup full = setup_for(toks, *q4);
    full.reference = logits_of(*f32);
    auto want = eval::run_eval(full);
    eval::EvalSetup from_saved = setup_for(toks, *q4);
    from_saved.saved = &saved->saved;
    from_saved.saved_windows = saved->windows_done;
    auto got = eval::run_eval(from_saved);
    ASSERT_TRUE(want.ok() && got.ok()) << got.status().to_string();
    ASSERT_EQ(got->kl.size(), want->kl.size());
    double lo = 0, hi = 0, exact = 0;
    for (size_t i = 0; i < got->kl.size(); ++i) {
      const double slack = 1e-6 * (1 + want->kl[i]);
      EXPECT_LE(got->kl_lo[i], want->kl[i] + slack) << "token " << i << " k " << k;
      EXPECT_GE(got->kl_hi[i], want->kl[i] - slack) << "token " << i << " k " << k;
      EXPECT_GE(got->kl[i], got->kl_lo[i]);
      EXPECT_LE(got->kl[i], got->kl_hi[i]);
      if (samples == 0) EXPECT_EQ(got->kl[i], got->kl_lo[i]);
      EXPECT_NEAR(got->nll_ref[i], want->nll_ref[i], 1e-5 * (1 + want->nll_ref[i]));
      EXPECT_EQ(got->top1[i], want->top1[i]);
      lo += got->kl_lo[i];
      hi += got->kl_hi[i];
      exact += want->kl[i];
    }
    EXPECT_LE(lo, exact + 1e-6 * (1 + exact));
    EXPECT_GE(hi, exact - 1e-6 * (1 + exact));
    if (k >= 259) EXPECT_NEAR(lo, hi, 1e-6 * (1 + exact));  // every entry kept: exact
  }
}

TEST(EvalModel, StopKeepsTheWindowsDone) {
  const auto toks = text_tokens();
  auto e = make_engine(dense("F32"), 1);
  ASSERT_TRUE(e.ok());
  std::atomic<bool> stop{false};
  eval::EvalSetup s = setup_for(toks, *e);
  s.stop = &stop;
  s.on_window = [&](const eval::EvalProgress& p) {
    EXPECT_EQ(p.windows_total, kWindows);
    if (p.windows_done == 3) stop = true;
  };
  auto got = eval::run_eval(s);
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(got->interrupted);
  EXPECT_EQ(got->windows_done, 3);
  EXPECT_EQ(got->windows_planned, kWindows);
  EXPECT_EQ(got->nll.size(), static_cast<size_t>(3 * kCtx / 2));
}

TEST(EvalModel, BadInputsAreRefused) {
  auto e = make_engine(dense("F32"), 1);
  ASSERT_TRUE(e.ok());
  std::vector<int32_t> shortt(10, 65);
  auto r = eval::run_eval(setup_for(shortt, *e));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("fewer than one window"), std::string::npos);
  std::vector<int32_t> bad = text_tokens();
  bad[5] = 100000;
  r = eval::run_eval(setup_for(bad, *e));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("outside the model's vocabulary"), std::string::npos);
}

}  // namespace
}  // namespace arc::testing
