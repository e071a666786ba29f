// How much work the device's sampling candidates do (issue #40: sampling must cost a small
// fraction of a decode step, with no sort of the vocabulary), counted by the CUDA emulator as
// operations: basic blocks executed by all CUDA threads (arc_cuda_emu/emulator.h: kernel_work).
// Counts, not times: the same on any host. On a real GPU there are no counters and the test skips.
//
// Each parameter set is measured on rows of 75,968 and 151,936 logits (Qwen's vocabulary):
//  - the work grows in proportion to the vocabulary (a sort or a per-entry loop over the
//    candidates would add a log factor or k per entry);
//  - per entry it stays within the passes the kernel's design makes over the row, each priced
//    at what the one-pass greedy selection costs per entry: 1 (greedy), 2 with log-probs, up to
//    10 (log-probs, penalties, radix select, collection and the tempered mass together).
#include <algorithm>
#include <random>

#include "arc/kernels/cuda_candidates.h"
#include "cuda_test_util.h"
#if defined(ARC_CUDA_EMULATION)
#include "arc_cuda_emu/emulator.h"
#endif

namespace arc::kernels::cuda::test {
namespace {

struct Params {
  const char* what;
  int32_t k;
  uint32_t flags;
  bool penalties;
  double max_passes;  // the design's passes over the row, in greedy-pass units
};

class CandidatesWork : public CudaTest {
 protected:
  // Operations of one candidates launch on one row of `n_vocab` normal(0, 2) logits.
  uint64_t ops_for(const Params& p, int64_t n_vocab) {
#if defined(ARC_CUDA_EMULATION)
    std::mt19937_64 g(static_cast<uint64_t>(n_vocab));
    std::normal_distribution<float> norm(0.0f, 2.0f);
    std::vector<float> logits(static_cast<size_t>(n_vocab));
    for (float& x : logits) x = norm(g);
    CandidateRow row;
    row.k = p.k;
    row.flags = p.flags;
    row.temperature = 0.6f;
    std::vector<int32_t> pen_tokens{0}, pen_counts{0};
    if (p.penalties) {  // a 300-token history: what a chat turn carries
      pen_tokens.clear();
      pen_counts.clear();
      for (int32_t i = 0; i < 300; ++i) {
        pen_tokens.push_back(static_cast<int32_t>((i * 7919) % n_vocab));
        pen_counts.push_back(i % 3);
      }
      row.repetition_penalty = 1.1f;
      row.presence_penalty = 0.2f;
      row.frequency_penalty = 0.1f;
      row.pen_end = static_cast<int32_t>(pen_tokens.size());
    }
    Dev<float> dl(logits), dwork(logits.size());
    Dev<CandidateRow> drows(std::vector<CandidateRow>{row});
    Dev<int32_t> dtok(pen_tokens), dcnt(pen_counts);
    Dev<int32_t> dids(kMaxCandidates);
    Dev<float> dvals(kMaxCandidates);
    Dev<double> dstats(3);
    TopCandidatesArgs a;
    a.logits = dl.get();
    a.n_rows = 1;
    a.n_vocab = n_vocab;
    a.rows = drows.get();
    a.pen_tokens = dtok.get();
    a.pen_counts = dcnt.get();
    a.work = dwork.get();
    a.k_stride = kMaxCandidates;
    a.ids = dids.get();
    a.values = dvals.get();
    a.stats = dstats.get();
    sync();
    cuda_emu::reset_kernel_work();
    EXPECT_TRUE(top_candidates(ctx_, a));
    sync();
    for (const cuda_emu::KernelWork& w : cuda_emu::kernel_work()) {
      if (w.name.find("candidates_kernel") == std::string::npos) continue;
      EXPECT_EQ(w.launches, 1u);
      EXPECT_EQ(w.threads, 1024u);  // one block per row
      return w.ops;
    }
    ADD_FAILURE() << "no candidates_kernel launch was counted";
#else
    (void)p;
    (void)n_vocab;
#endif
    return 0;
  }
};

TEST_F(CandidatesWork, GrowsWithTheVocabularyAndStaysWithinItsPasses) {
#if !defined(ARC_CUDA_EMULATION)
  GTEST_SKIP() << "operation counts exist on the CUDA emulator only";
#else
  if (!cuda_emu::counts_operations()) GTEST_SKIP() << "built with ARC_CUDA_EMU_COUNT_OPS=OFF";
  const Params params[] = {
      {"greedy", 1, 0, false, 1.0},
      {"greedy with log-probs", 1, kCandidateLse, false, 2.0},
      {"top_k 40", 40, 0, false, 7.0},
      {"whole distribution (temperature 0.6)", kMaxCandidates, kCandidateMass, false, 8.0},
      {"whole distribution, penalties, log-probs", kMaxCandidates, kCandidateMass | kCandidateLse,
       true, 10.0},
  };
  const int64_t big = 151936, half = big / 2;
  const double greedy_per_entry = static_cast<double>(ops_for(params[0], big)) / big;
  ASSERT_GT(greedy_per_entry, 0.0);
  for (const Params& p : params) {
    const uint64_t ops_half = ops_for(p, half), ops_big = ops_for(p, big);
    ASSERT_GT(ops_half, 0u) << p.what;
    const double growth = static_cast<double>(ops_big) / static_cast<double>(ops_half);
    const double passes = static_cast<double>(ops_big) / big / greedy_per_entry;
    std::printf("  %-42s %12llu operations for %lld logits (%.2f per logit, %.2f greedy passes)\n",
                p.what, static_cast<unsigned long long>(ops_big), static_cast<long long>(big),
                static_cast<double>(ops_big) / big, passes);
    EXPECT_GT(growth, 1.9) << p.what;
    EXPECT_LT(growth, 2.1) << p.what;
    EXPECT_LE(passes, p.max_passes) << p.what;
  }
#endif
}

}  // namespace
}  // namespace arc::kernels::cuda::test
