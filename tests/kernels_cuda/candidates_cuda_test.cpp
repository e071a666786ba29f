// The sampling candidates on the device (cuda::top_candidates) against kernels::top_candidates_ref
// on the same rows: ids, penalised values and the max bit for bit (the host sampler finishes on
// them and must pick the token it picks from the whole row); the lse and the tempered mass to
// 1e-10 relative (another summation order over up to 151936 doubles). Odd vocabularies, ties (also
// at the k-th place and between +0 and -0), penalties, k from 1 to the cap, many rows at once.
#include <algorithm>
#include <bit>
#include <cmath>
#include <random>

#include "arc/kernels/cuda_candidates.h"
#include "cuda_test_util.h"

namespace arc::kernels::cuda::test {
namespace {

struct Rows {
  std::vector<float> logits;  // [n_rows, n_vocab]
  std::vector<CandidateRow> rows;
  std::vector<int32_t> pen_tokens, pen_counts;
};

Rows make_rows(int64_t n_rows, int64_t n_vocab, uint64_t seed) {
  Rows d;
  std::mt19937_64 g(seed);
  std::normal_distribution<float> norm(0.0f, 2.0f);
  d.logits.resize(static_cast<size_t>(n_rows * n_vocab));
  for (int64_t r = 0; r < n_rows; ++r) {
    float* l = d.logits.data() + r * n_vocab;
    const int kind = static_cast<int>(r % 5);
    for (int64_t i = 0; i < n_vocab; ++i) {
      float x = norm(g);
      if (kind == 1) x = std::round(x * 2.0f) / 2.0f;  // many ties, also at the k-th place
      if (kind == 2) x = static_cast<float>(i % 7);    // ties everywhere
      if (kind == 3 && i % 11 == 0) x = -INFINITY;     // masked tokens
      l[i] = x;
    }
    if (n_vocab > 4) l[1] = -0.0f, l[2] = 0.0f;
    CandidateRow row;
    const int32_t ks[] = {1, 2, 7, 40, 257, 1000, kMaxCandidates};
    row.k = ks[r % 7];
    row.flags = kCandidateLse | kCandidateMass;
    row.temperature = 0.3f + 0.25f * static_cast<float>(r % 4);
    row.pen_begin = static_cast<int32_t>(d.pen_tokens.size());
    if (r % 2 == 0) {
      row.repetition_penalty = r % 4 == 0 ? 1.3f : 0.8f;
      row.presence_penalty = 0.35f;
      row.frequency_penalty = 0.15f;
      for (int64_t t = r % 3; t < n_vocab; t += 5 + r % 3) {
        d.pen_tokens.push_back(static_cast<int32_t>(t));
        d.pen_counts.push_back(static_cast<int32_t>(t % 4));
      }
      d.pen_tokens.push_back(static_cast<int32_t>(n_vocab + 3));  // out of range: ignored
      d.pen_counts.push_back(1);
    }
    row.pen_end = static_cast<int32_t>(d.pen_tokens.size());
    d.rows.push_back(row);
  }
  return d;
}

TEST_F(CudaTest, TopCandidatesEqualTheHostReference) {
  for (int64_t n_vocab : {1, 3, 33, 1000, 4097, 50021, 151936}) {
    const int64_t n_rows = n_vocab > 100000 ? 9 : 14;
    Rows d = make_rows(n_rows, n_vocab, static_cast<uint64_t>(n_vocab));
    const int32_t stride = kMaxCandidates;
    std::vector<int32_t> want_ids(static_cast<size_t>(n_rows * stride), -1);
    std::vector<float> want_values(want_ids.size(), 0.0f), work(d.logits.size());
    std::vector<double> want_stats(static_cast<size_t>(n_rows * 3));
    TopCandidatesArgs h;
    h.logits = d.logits.data();
    h.n_rows = n_rows;
    h.n_vocab = n_vocab;
    h.rows = d.rows.data();
    h.pen_tokens = d.pen_tokens.data();
    h.pen_counts = d.pen_counts.data();
    h.work = work.data();
    h.k_stride = stride;
    h.ids = want_ids.data();
    h.values = want_values.data();
    h.stats = want_stats.data();
    top_candidates_ref(h);

    Dev<float> dl(d.logits), dwork(d.logits.size());
    Dev<CandidateRow> drows(d.rows);
    Dev<int32_t> dtok(d.pen_tokens), dcnt(d.pen_counts);
    Dev<int32_t> dids(std::vector<int32_t>(want_ids.size(), -1));
    Dev<float> dvals(want_values.size());
    Dev<double> dstats(want_stats.size());
    TopCandidatesArgs a = h;
    a.logits = dl.get();
    a.rows = drows.get();
    a.pen_tokens = dtok.get();
    a.pen_counts = dcnt.get();
    a.work = dwork.get();
    a.ids = dids.get();
    a.values = dvals.get();
    a.stats = dstats.get();
    ASSERT_TRUE(top_candidates(ctx_, a));
    sync();
    const auto ids = dids.download();
    const auto values = dvals.download();
    const auto stats = dstats.download();
    for (int64_t r = 0; r < n_rows; ++r) {
      const int64_t k = std::min<int64_t>(d.rows[r].k, n_vocab);
      for (int64_t i = 0; i < k; ++i) {
        const size_t at = static_cast<size_t>(r * stride + i);
        ASSERT_EQ(ids[at], want_ids[at]) << "vocab " << n_vocab << " row " << r << " rank " << i;
        ASSERT_EQ(std::bit_cast<uint32_t>(values[at]), std::bit_cast<uint32_t>(want_values[at]))
            << "vocab " << n_vocab << " row " << r << " rank " << i;
      }
      EXPECT_EQ(stats[3 * r + 1], want_stats[3 * r + 1]) << "max, row " << r;
      for (int j : {0, 2}) {
        const double w = want_stats[3 * r + j];
        if (std::isnan(w)) {  // a row of -inf only (vocab 1, masked): no distribution either way
          EXPECT_TRUE(std::isnan(stats[3 * r + j])) << "vocab " << n_vocab << " row " << r;
          continue;
        }
        // Sums of up to 151936 doubles in another order: n * eps ~ 2e-11 at worst.
        EXPECT_NEAR(stats[3 * r + j], w, 1e-10 * (1.0 + std::fabs(w)))
            << "vocab " << n_vocab << " row " << r << " stat " << j;
      }
    }
  }
}

TEST_F(CudaTest, TopCandidatesLeavesTheRawLogitsAndSkipsRowsWithoutK) {
  const int64_t n_vocab = 777, n_rows = 3;
  Rows d = make_rows(n_rows, n_vocab, 5);
  d.rows[1].k = 0;  // a row downloaded whole: nothing selected
  Dev<float> dl(d.logits), dwork(d.logits.size());
  Dev<CandidateRow> drows(d.rows);
  Dev<int32_t> dtok(d.pen_tokens), dcnt(d.pen_counts);
  Dev<int32_t> dids(std::vector<int32_t>(n_rows * 8, -1));
  Dev<float> dvals(n_rows * 8);
  Dev<double> dstats(n_rows * 3);
  for (auto& row : d.rows) row.k = std::min(row.k, 8);
  drows.upload(d.rows);
  TopCandidatesArgs a;
  a.logits = dl.get();
  a.n_rows = n_rows;
  a.n_vocab = n_vocab;
  a.rows = drows.get();
  a.pen_tokens = dtok.get();
  a.pen_counts = dcnt.get();
  a.work = dwork.get();
  a.k_stride = 8;
  a.ids = dids.get();
  a.values = dvals.get();
  a.stats = dstats.get();
  ASSERT_TRUE(top_candidates(ctx_, a));
  sync();
  EXPECT_EQ(dl.download(), d.logits);  // penalties went to `work`
  const auto ids = dids.download();
  for (int i = 0; i < 8; ++i) EXPECT_EQ(ids[8 + i], -1);
  // Shapes the kernel refuses.
  a.k_stride = 0;
  EXPECT_FALSE(top_candidates(ctx_, a));
  a.k_stride = 8;
  a.n_vocab = 0;
  EXPECT_FALSE(top_candidates(ctx_, a));
}

}  // namespace
}  // namespace arc::kernels::cuda::test
