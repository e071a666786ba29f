// argmax_rows and top_k_rows against host loops (the host sampler's order: higher value first,
// lower index on ties). ids exact; log-probabilities 1e-4 absolute (F32 log-sum-exp over the
// vocabulary vs double).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "cuda_test_util.h"

namespace arc::kernels::cuda::test {
namespace {

TEST_F(CudaTest, ArgmaxRows) {
  for (int64_t n_vocab : {1, 31, 4097, 151936}) {
    const int64_t rows = 3;
    auto logits = random_floats(static_cast<size_t>(rows * n_vocab), 51, -10.0f, 10.0f);
    if (n_vocab > 40) logits[1 * n_vocab + 7] = logits[1 * n_vocab + 39] = 50.0f;  // tie: lowest id
    std::vector<int32_t> want(rows);
    for (int64_t r = 0; r < rows; ++r) {
      const float* row = logits.data() + r * n_vocab;
      want[r] = static_cast<int32_t>(std::max_element(row, row + n_vocab) - row);
    }
    Dev<float> dl(logits);
    Dev<int32_t> dout(rows);
    ASSERT_TRUE(argmax_rows(ctx_, dl.get(), rows, n_vocab, dout.get()));
    sync();
    EXPECT_EQ(dout.download(), want) << "n_vocab " << n_vocab;
  }
}

TEST_F(CudaTest, TopKRows) {
  for (int64_t n_vocab : {50, 4096, 10007, 151936}) {
    for (int64_t k : {1, 5, 40}) {
      const int64_t rows = 2;
      const float temp = 0.7f;
      const auto logits = random_floats(static_cast<size_t>(rows * n_vocab), 52, -8.0f, 8.0f);
      Dev<float> dl(logits), dlp(static_cast<size_t>(rows * k));
      Dev<int32_t> dids(static_cast<size_t>(rows * k));
      ASSERT_TRUE(top_k_rows(ctx_, dl.get(), rows, n_vocab, k, temp, dids.get(), dlp.get()));
      sync();
      const auto ids = dids.download();
      const auto lp = dlp.download();
      for (int64_t r = 0; r < rows; ++r) {
        const float* row = logits.data() + r * n_vocab;
        std::vector<int32_t> idx(static_cast<size_t>(n_vocab));
        std::iota(idx.begin(), idx.end(), 0);
        std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), [&](int32_t a, int32_t b) {
          return row[a] > row[b] || (row[a] == row[b] && a < b);
        });
        double mx = -INFINITY, sum = 0.0;
        for (int64_t i = 0; i < n_vocab; ++i) mx = std::max(mx, double{row[i]} / temp);
        for (int64_t i = 0; i < n_vocab; ++i) sum += std::exp(double{row[i]} / temp - mx);
        const double lse = mx + std::log(sum);
        for (int64_t j = 0; j < k; ++j) {
          ASSERT_EQ(ids[r * k + j], idx[j]) << "n_vocab " << n_vocab << " k " << k << " j " << j;
          EXPECT_NEAR(lp[r * k + j], double{row[idx[j]]} / temp - lse, 1e-4);
        }
      }
    }
  }
}

// Refused before anything is enqueued: runs without a device.
TEST(CudaArgs, TopKRefusesBadArguments) {
  static float buf[64];
  static int32_t ids[64];
  Context ctx;
  EXPECT_FALSE(top_k_rows(ctx, buf, 1, 64, 0, 1.0f, ids, buf));   // k = 0
  EXPECT_FALSE(top_k_rows(ctx, buf, 1, 64, 65, 1.0f, ids, buf));  // k > n_vocab
  EXPECT_FALSE(top_k_rows(ctx, buf, 1, 64, 4, 0.0f, ids, buf));   // greedy: use argmax_rows
  EXPECT_FALSE(top_k_rows(ctx, buf, 1, 64, 4, 1.0f, ids, buf));   // no scratch for candidates
  ScratchShape shape;
  shape.n_vocab = 64;
  EXPECT_GT(scratch_bytes(shape), 0u);
}

}  // namespace
}  // namespace arc::kernels::cuda::test
