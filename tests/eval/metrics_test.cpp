// The per-token arithmetic of eval against plain long-double formulas, the window plan against
// its definition, the summaries against hand-computed values, and the saved-logit file.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include "arc/eval/logit_file.h"
#include "arc/eval/stats.h"
#include "arc/eval/token_metrics.h"
#include "arc/eval/windows.h"

namespace arc::eval {
namespace {

using LD = long double;

// log-probabilities of a row, the textbook way.
std::vector<LD> log_softmax(const std::vector<float>& x) {
  LD mx = x[0];
  for (float v : x) mx = std::max<LD>(mx, v);
  LD s = 0;
  for (float v : x) s += std::exp(static_cast<LD>(v) - mx);
  std::vector<LD> out;
  for (float v : x) out.push_back(static_cast<LD>(v) - mx - std::log(s));
  return out;
}

LD kl_oracle(const std::vector<float>& r, const std::vector<float>& q) {
  const auto lr = log_softmax(r), lq = log_softmax(q);
  LD kl = 0;
  for (size_t i = 0; i < r.size(); ++i) kl += std::exp(lr[i]) * (lr[i] - lq[i]);
  return kl;
}

// A logit row: a normal body of std `spread`, optionally a favourite.
std::vector<float> row(std::mt19937& g, size_t n, float spread, float favourite = 0) {
  std::normal_distribution<float> d(0, spread);
  std::vector<float> x(n);
  for (float& v : x) v = d(g);
  if (favourite != 0) x[g() % n] += favourite;
  return x;
}

// q = r plus noise of std `noise`: a quantized build of the same model.
std::vector<float> perturb(std::mt19937& g, const std::vector<float>& r, float noise) {
  std::normal_distribution<float> d(0, noise);
  std::vector<float> q = r;
  for (float& v : q) v += d(g);
  return q;
}

TEST(EvalMetrics, NllAndKlMatchLongDouble) {
  std::mt19937 g(11);
  for (size_t n : {2u, 7u, 259u, 5000u}) {
    for (float spread : {0.1f, 2.0f, 8.0f}) {
      const auto r = row(g, n, spread, 5);
      const auto q = perturb(g, r, 0.3f);
      const auto lr = log_softmax(r);
      for (int32_t t : {0, static_cast<int32_t>(n / 2), static_cast<int32_t>(n - 1)}) {
        EXPECT_NEAR(token_nll(r, t), static_cast<double>(-lr[t]), 1e-9 * (1 + std::fabs(lr[t])));
      }
      const double want = static_cast<double>(kl_oracle(r, q));
      EXPECT_NEAR(kl_divergence(r, q), want, 1e-10 + 1e-9 * want) << n << " " << spread;
      EXPECT_EQ(kl_divergence(r, r), 0.0);
      // The vectorised path the evaluator takes.
      ExpRow re, qe;
      exp_row(r, re);
      exp_row(q, qe);
      EXPECT_NEAR(re.lse(), static_cast<double>(log_sum_exp(r)), 1e-12 * (1 + std::fabs(re.lse())));
      EXPECT_NEAR(kl_divergence(r, re, q, qe.lse()), want, 1e-10 + 1e-9 * want);
      EXPECT_EQ(kl_divergence(r, re, r, re.lse()), 0.0);
    }
  }
  // Extreme logits: no overflow, no NaN.
  std::vector<float> big = {1e4f, -1e4f, 0.0f}, other = {0.0f, 1e4f, 0.0f};
  EXPECT_NEAR(token_nll(big, 0), 0.0, 1e-12);
  EXPECT_NEAR(kl_divergence(big, other), 1e4, 1);
}

TEST(EvalMetrics, ArgmaxTakesTheLowestIdOfTies) {
  const std::vector<float> x = {1, 3, 2, 3};
  EXPECT_EQ(argmax(x), 1);
}

// The bounds of the KL from a compressed reference row hold for every kind of row; with every
// entry kept they are exact.
TEST(EvalMetrics, CompressedKlBoundsHold) {
  std::mt19937 g(5);
  CompressScratch order;
  std::vector<double> scratch;
  int checked = 0;
  for (size_t n : {3u, 64u, 259u, 4000u}) {
    for (float spread : {0.05f, 1.0f, 4.0f}) {
      for (float noise : {0.01f, 0.5f, 3.0f}) {
        for (int32_t k : {1, 4, 32, 5000}) {
          for (double target : {0.0, 1e-4, 0.05}) {
            const auto r = row(g, n, spread, spread * 2);
            const auto q = perturb(g, r, noise);
            CompressedLogits c;
            c.k = k;
            c.tail_target = target;
            c.samples = 8;
            compress_row(r, static_cast<int32_t>(n / 3), c, order);
            ASSERT_EQ(c.n_rows(), 1);
            const int64_t kept = c.begin[1];
            ASSERT_GE(kept, 1);
            ASSERT_LE(kept, std::min<int64_t>(k, static_cast<int64_t>(n)));
            // Kept entries are the largest, in order; the stored tail is the rest's mass.
            const auto lr = log_softmax(r);
            LD kept_mass = 0;
            for (int64_t j = 0; j < kept; ++j) {
              EXPECT_NEAR(c.logp[j], static_cast<double>(lr[c.ids[j]]), 1e-5);
              if (j > 0) EXPECT_GE(c.logp[j - 1], c.logp[j]);
              kept_mass += std::exp(lr[c.ids[j]]);
            }
            EXPECT_NEAR(c.tail_mass[0], static_cast<double>(1 - kept_mass), 1e-12);
            if (kept < k && kept < static_cast<int64_t>(n)) EXPECT_LT(c.tail_mass[0], target);
            EXPECT_NEAR(c.target_logp[0], static_cast<double>(lr[n / 3]), 1e-5);

            const double full = static_cast<double>(kl_oracle(r, q));
            ExpRow qe;
            exp_row(q, qe);
            const KlBounds b = kl_from_compressed(c, 0, q, qe, scratch);
            // Float log-probabilities in the file: allow their rounding (1e-7 relative).
            const double slack = 1e-6 * (1 + full);
            EXPECT_LE(b.lo, full + slack) << n << " " << spread << " " << noise << " " << k;
            EXPECT_GE(b.hi, full - slack) << n << " " << spread << " " << noise << " " << k;
            EXPECT_GE(b.estimate, b.lo);
            EXPECT_LE(b.estimate, b.hi);
            // Samples of the rest: c.samples of them when there is a rest, each a tail id.
            const int64_t ns = c.sample_begin[1] - c.sample_begin[0];
            EXPECT_EQ(ns, c.tail_mass[0] > 0 ? 8 : 0);
            for (int64_t j = 0; j < ns; ++j) {
              const int32_t id = c.sample_ids[j];
              EXPECT_EQ(std::count(c.ids.begin(), c.ids.end(), id), 0) << "a kept id sampled";
              EXPECT_NEAR(c.sample_logp[j], static_cast<double>(lr[id]), 1e-5);
            }
            if (kept == static_cast<int64_t>(n)) {
              EXPECT_NEAR(b.lo, full, slack);
              EXPECT_NEAR(b.hi, full, slack);
            }
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_EQ(checked, 4 * 3 * 3 * 4 * 3);
}

// Over many rows the sampled estimate is unbiased: its mean meets the full KL's mean, within the
// statistical error of the rows, where the lower bound alone falls well short (flat rows, few
// entries kept).
TEST(EvalMetrics, SampledTailEstimateIsUnbiased) {
  std::mt19937 g(21);
  CompressScratch scratch;
  std::vector<double> tmp, diff;
  double full = 0, lo = 0;
  CompressedLogits c;
  c.k = 16;
  c.samples = 16;
  const int rows = 400;
  for (int i = 0; i < rows; ++i) {
    const auto r = row(g, 3000, 1.0f, 3);
    const auto q = perturb(g, r, 0.4f);
    compress_row(r, 0, c, scratch);
    ExpRow qe;
    exp_row(q, qe);
    const KlBounds b = kl_from_compressed(c, i, q, qe, tmp);
    const double f = static_cast<double>(kl_oracle(r, q));
    full += f;
    lo += b.lo;
    diff.push_back(b.sampled - f);
    EXPECT_GE(b.estimate, b.lo);
    EXPECT_LE(b.estimate, b.hi);
  }
  full /= rows, lo /= rows;
  EXPECT_LT(lo, 0.8 * full);  // the case the samples are for
  const Summary d = summarize(diff);
  EXPECT_LT(std::fabs(d.mean), 4 * d.se) << "mean error " << d.mean << " se " << d.se;
  EXPECT_LT(d.se, 0.1 * full);  // and precise enough to be useful
}

// A cut through equal values keeps the lowest ids of them, and the tail holds exactly the rest.
TEST(EvalMetrics, CompressionCutsTiesByLowestId) {
  const std::vector<float> r = {0, 2, 1, 2, 2, 1, 2, -1};
  CompressedLogits c;
  c.k = 3;
  CompressScratch scratch;
  compress_row(r, 7, c, scratch);
  ASSERT_EQ(c.begin[1], 3);
  EXPECT_EQ(c.ids, (std::vector<int32_t>{1, 3, 4}));
  const auto lr = log_softmax(r);
  LD tail = 0;
  for (int i : {0, 2, 5, 6, 7}) tail += std::exp(lr[i]);
  EXPECT_NEAR(c.tail_mass[0], static_cast<double>(tail), 1e-15);
  EXPECT_NEAR(c.target_logp[0], static_cast<double>(lr[7]), 1e-6);
}

// Each token is scored at most once, always with at least ctx/2 tokens before it in its window;
// with the default stride (ctx/2) every token past the first half window is scored.
TEST(EvalWindows, CoverTheTextOnce) {
  for (int64_t n : {16, 17, 100, 1000, 1023}) {
    for (int64_t ctx : {4, 16, 15}) {
      for (int64_t stride : {ctx / 2, ctx, int64_t{1}, int64_t{3}}) {
        if (n < ctx) continue;
        auto plan = plan_windows(n, ctx, stride);
        ASSERT_TRUE(plan.ok()) << plan.status().to_string();
        std::vector<int> seen(static_cast<size_t>(n), 0);
        for (const EvalWindow& w : *plan) {
          ASSERT_EQ(w.end - w.begin, ctx);
          ASSERT_GE(w.begin, 0);
          ASSERT_LE(w.end, n);
          ASSERT_GE(w.score_begin - w.begin, ctx / 2);
          for (int64_t t = w.score_begin; t < w.end; ++t) seen[t]++;
        }
        for (int64_t t = 0; t < n; ++t) {
          ASSERT_LE(seen[t], 1) << n << " " << ctx << " " << stride << " token " << t;
          if (stride <= ctx / 2 && t >= ctx / 2) ASSERT_EQ(seen[t], 1) << t;
        }
      }
    }
  }
}

TEST(EvalWindows, ClearErrors) {
  auto s = plan_windows(100, 512, 256);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(
      s.status().message().find("the text has 100 tokens, fewer than one window of --ctx 512"),
      std::string::npos)
      << s.status().message();
  EXPECT_NE(s.status().message().find("--ctx 100 or less"), std::string::npos);
  EXPECT_FALSE(plan_windows(100, 16, 0).ok());
  EXPECT_FALSE(plan_windows(100, 16, 17).ok());
  EXPECT_FALSE(plan_windows(100, 2, 1).ok());
}

TEST(EvalStats, MeanErrorAndPercentiles) {
  const std::vector<double> v = {4, 1, 3, 2, 10};
  const Summary s = summarize(v);
  EXPECT_EQ(s.n, 5);
  EXPECT_DOUBLE_EQ(s.mean, 4.0);
  // sample variance: (0 + 9 + 1 + 4 + 36) / 4 = 12.5; se = sqrt(12.5 / 5)
  EXPECT_NEAR(s.se, std::sqrt(2.5), 1e-12);
  EXPECT_DOUBLE_EQ(s.median, 3.0);
  EXPECT_NEAR(s.p90, 4 + 0.6 * 6, 1e-12);  // numpy: rank 3.6 between 4 and 10
  EXPECT_NEAR(s.p99, 4 + 0.96 * 6, 1e-12);
  EXPECT_DOUBLE_EQ(s.max, 10.0);
  EXPECT_EQ(summarize(std::vector<double>{}).n, 0);
  EXPECT_EQ(summarize(std::vector<double>{2}).se, 0.0);
}

class LogitFile : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() /
             ("arc_eval_logits_" + std::to_string(::getpid()) + ".bin"))
                .string();
  }
  void TearDown() override { std::filesystem::remove(path_); }
  std::string path_;
};

TEST_F(LogitFile, RoundTripsAndRefusesDamage) {
  std::mt19937 g(3);
  ReferenceLogits ref;
  ref.model = "ref.gguf";
  ref.tokenizer_fingerprint = "0123456789abcdef";
  ref.text_name = "built-in";
  ref.ctx = 8;
  ref.stride = 4;
  ref.n_vocab = 50;
  ref.windows_done = 2;
  for (int i = 0; i < 12; ++i) ref.tokens.push_back(static_cast<int32_t>(g() % 50));
  ref.rows.k = 6;
  ref.rows.tail_target = 1e-3;
  ref.rows.samples = 3;
  CompressScratch order;
  for (int i = 0; i < 8; ++i) compress_row(row(g, 50, 2.0f, 4), i, ref.rows, order);
  ASSERT_TRUE(write_reference_logits(path_, ref).ok());
  auto back = read_reference_logits(path_);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->model, ref.model);
  EXPECT_EQ(back->tokenizer_fingerprint, ref.tokenizer_fingerprint);
  EXPECT_EQ(back->tokens, ref.tokens);
  EXPECT_EQ(back->ctx, 8);
  EXPECT_EQ(back->stride, 4);
  EXPECT_EQ(back->windows_done, 2);
  EXPECT_EQ(back->rows.k, 6);
  EXPECT_EQ(back->rows.tail_target, 1e-3);
  EXPECT_EQ(back->rows.begin, ref.rows.begin);
  EXPECT_EQ(back->rows.ids, ref.rows.ids);
  EXPECT_EQ(back->rows.logp, ref.rows.logp);
  EXPECT_EQ(back->rows.tail_mass, ref.rows.tail_mass);
  EXPECT_EQ(back->rows.tail_plogp, ref.rows.tail_plogp);
  EXPECT_EQ(back->rows.samples, 3);
  EXPECT_EQ(back->rows.sample_begin, ref.rows.sample_begin);
  EXPECT_EQ(back->rows.sample_ids, ref.rows.sample_ids);
  EXPECT_EQ(back->rows.sample_logp, ref.rows.sample_logp);
  EXPECT_EQ(back->rows.target_logp, ref.rows.target_logp);

  // Truncated: a clear DATA_LOSS naming the file.
  const auto size = std::filesystem::file_size(path_);
  std::filesystem::resize_file(path_, size - 5);
  auto cut = read_reference_logits(path_);
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(cut.status().message().find(path_), std::string::npos);
  EXPECT_NE(cut.status().message().find("truncated"), std::string::npos);
  // Not such a file at all.
  std::ofstream(path_, std::ios::trunc) << "hello, this is no logit file at all";
  auto junk = read_reference_logits(path_);
  ASSERT_FALSE(junk.ok());
  EXPECT_EQ(junk.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(read_reference_logits(path_ + ".missing").status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace arc::eval
