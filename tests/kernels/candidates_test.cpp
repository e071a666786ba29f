// kernels::top_candidates (the CPU backend's fast host path) against the scalar reference
// top_candidates_ref: ids and values equal, stats within rounding of the reference's sums, over
// vocabularies of odd sizes, ties, signed zeros, infinities and NaN, penalties, every k.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "arc/kernels/candidates.h"
#include "arc/kernels/cpu_dispatch.h"

namespace arc::kernels {
namespace {

struct Run {
  std::vector<int32_t> ids;
  std::vector<float> values;
  std::vector<double> stats;
};

struct Case {
  std::vector<float> logits;  // [n_rows, n_vocab]
  int64_t n_vocab = 0;
  std::vector<CandidateRow> rows;
  std::vector<int32_t> pen_tokens, pen_counts;
};

template <class Fn>
Run run(const Case& c, Fn fn) {
  const int64_t n_rows = static_cast<int64_t>(c.rows.size());
  Run out;
  out.ids.assign(static_cast<size_t>(n_rows * kMaxCandidates), -7);
  out.values.assign(out.ids.size(), -7.0f);
  out.stats.assign(static_cast<size_t>(3 * n_rows), -7.0);
  TopCandidatesArgs a;
  a.logits = c.logits.data();
  a.n_rows = n_rows;
  a.n_vocab = c.n_vocab;
  a.rows = c.rows.data();
  a.pen_tokens = c.pen_tokens.data();
  a.pen_counts = c.pen_counts.data();
  a.k_stride = kMaxCandidates;
  a.ids = out.ids.data();
  a.values = out.values.data();
  a.stats = out.stats.data();
  fn(a);
  return out;
}

void expect_same_run(const Case& c, const Run& ref, const Run& fast, const std::string& what) {
  for (size_t r = 0; r < c.rows.size(); ++r) {
    for (int32_t i = 0; i < kMaxCandidates; ++i) {
      const size_t at = r * kMaxCandidates + i;
      ASSERT_EQ(fast.ids[at], ref.ids[at]) << what << " row " << r << " rank " << i;
      // Bit patterns: -0 and +0, NaN and the untouched -7 all compared exactly.
      ASSERT_EQ(std::bit_cast<uint32_t>(fast.values[at]), std::bit_cast<uint32_t>(ref.values[at]))
          << what << " row " << r << " rank " << i;
    }
    for (int j = 0; j < 3; ++j) {
      const double x = fast.stats[3 * r + j], y = ref.stats[3 * r + j];
      if (std::isnan(y) || std::isinf(y)) {
        EXPECT_EQ(std::isnan(x), std::isnan(y)) << what << " row " << r << " stat " << j;
        if (!std::isnan(y)) {
          EXPECT_EQ(x, y) << what << " row " << r << " stat " << j;
        }
      } else {
        EXPECT_NEAR(x, y, 1e-13 * (1.0 + std::fabs(y))) << what << " row " << r << " stat " << j;
      }
    }
  }
}

// Every instruction-set level of the machine (each has its own sums) against the reference.
void expect_same(const Case& c, const std::string& what_case) {
  const Run ref = run(c, top_candidates_ref);
  for (cpu::IsaLevel level : cpu::available_isas()) {
    const std::string what = what_case + " at " + std::string(cpu::isa_name(level));
    bool ran = false;
    const Run fast = run(
        c, [level, &ran](const TopCandidatesArgs& a) { ran = cpu::top_candidates_at(level, a); });
    ASSERT_TRUE(ran) << what;
    expect_same_run(c, ref, fast, what);
  }
  const Run dispatched = run(c, top_candidates);
  expect_same_run(c, ref, dispatched, what_case + " dispatched");
}

CandidateRow make_row(int32_t k, uint32_t flags, float temperature = 0.8f) {
  CandidateRow row;
  row.k = k;
  row.flags = flags;
  row.temperature = temperature;
  return row;
}

constexpr uint32_t kBoth = kCandidateLse | kCandidateMass;

// Logits for every row of `c`, each drawn in order from `draw`.
template <class Draw>
void fill_logits(Case& c, Draw draw) {
  c.logits.resize(static_cast<size_t>(c.n_vocab) * c.rows.size());
  for (float& x : c.logits) x = draw();
}

TEST(TopCandidates, EqualsReferenceOnRandomRows) {
  std::mt19937 rng(11);
  for (int64_t n_vocab : {1, 2, 7, 8, 9, 100, 1023, 1024, 1025, 5003, 151936}) {
    Case c;
    c.n_vocab = n_vocab;
    for (int32_t k : {1, 2, 5, 40, 1000, kMaxCandidates}) {
      c.rows.push_back(make_row(k, kBoth, k % 2 == 0 ? 0.7f : 1.3f));
    }
    c.rows.push_back(make_row(3, 0));
    c.rows.push_back(make_row(0, kBoth));                   // skipped: k out of range
    c.rows.push_back(make_row(kMaxCandidates + 1, kBoth));  // skipped too
    std::normal_distribution<float> nd(0.0f, 4.0f);
    fill_logits(c, [&] { return nd(rng); });
    expect_same(c, "vocab " + std::to_string(n_vocab));
  }
}

TEST(TopCandidates, TiesKeepTheLowerIdFirst) {
  // Logits from a handful of values: every selection boundary falls inside a run of ties.
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> pick(0, 4);
  Case c;
  c.n_vocab = 3001;
  for (int32_t k : {1, 3, 64, 700}) c.rows.push_back(make_row(k, kBoth));
  fill_logits(c, [&] { return 0.5f * static_cast<float>(pick(rng)) - 1.0f; });
  expect_same(c, "ties");
}

TEST(TopCandidates, SignedZerosInfinitiesAndNan) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<std::vector<float>> rows = {
      {-0.0f, 0.0f, -0.0f, -1.0f, 0.0f, -2.0f, -0.0f, -3.0f, 0.0f},  // zeros tie across signs
      {nan, -1.0f, 2.0f, nan, 2.0f, -inf, 0.5f, nan, 1.0f},          // NaN in front (lse: NaN)
      {-1.0f, nan, 2.0f, nan, 2.0f, -inf, 0.5f, nan, 1.0f},          // NaN inside
      {-inf, -inf, nan, -inf, nan, -inf, -inf, -inf, -inf},          // nothing finite
      {nan, nan, nan, nan, nan, nan, nan, nan, nan},                 // nothing but NaN
      {1.0f, inf, -2.0f, inf, 0.0f, 3.0f, -inf, 4.0f, 5.0f},         // +inf: non-finite sums
      {-800.0f, 0.0f, -750.0f, -709.0f, -707.0f, -100.0f, -30.0f, -1e-3f, -745.5f},  // underflow
  };
  for (int32_t k : {1, 2, 4, 9}) {
    Case c;
    c.n_vocab = 9;
    for (const auto& r : rows) {
      c.rows.push_back(make_row(k, kBoth, 1.0f));
      c.logits.insert(c.logits.end(), r.begin(), r.end());
    }
    expect_same(c, "k " + std::to_string(k));
  }
}

// Both paths penalise through penalised_row (one piece of code): this checks the selection and
// sums on penalised rows; the penalties themselves are checked against an independent copy of
// the sampler's arithmetic in tests/sched/sampler_candidates_test.cpp.
TEST(TopCandidates, PenaltiesAsTheReference) {
  std::mt19937 rng(9);
  std::normal_distribution<float> nd(0.0f, 3.0f);
  Case c;
  c.n_vocab = 4099;
  for (int32_t k : {1, 17, kMaxCandidates}) {
    CandidateRow row = make_row(k, kBoth, 0.9f);
    row.repetition_penalty = 1.3f;
    row.presence_penalty = 0.4f;
    row.frequency_penalty = 0.2f;
    row.pen_begin = static_cast<int32_t>(c.pen_tokens.size());
    for (int32_t t = k % 5; t < c.n_vocab; t += 7) {
      c.pen_tokens.push_back(t);
      c.pen_counts.push_back(t % 3);
    }
    c.pen_tokens.push_back(-1);  // out of range: ignored by both
    c.pen_counts.push_back(1);
    c.pen_tokens.push_back(c.n_vocab);  // out of range too
    c.pen_counts.push_back(1);
    row.pen_end = static_cast<int32_t>(c.pen_tokens.size());
    c.rows.push_back(row);
  }
  fill_logits(c, [&] { return nd(rng); });
  expect_same(c, "penalties");
}

TEST(TopCandidates, ExpMatchesLibmAcrossTheRange) {
  // One row per exponent scale, a single candidate: stats[2] is then sum exp((x - max) / T) and
  // the whole comparison rests on the exp itself, from 0 down past the underflow.
  Case c;
  c.n_vocab = 2000;
  for (float t : {0.05f, 0.5f, 1.0f, 7.0f}) c.rows.push_back(make_row(1, kCandidateMass, t));
  for (size_t r = 0; r < c.rows.size(); ++r) {
    for (int64_t i = 0; i < c.n_vocab; ++i) c.logits.push_back(-0.02f * static_cast<float>(i));
  }
  expect_same(c, "exp range");
}

}  // namespace
}  // namespace arc::kernels
