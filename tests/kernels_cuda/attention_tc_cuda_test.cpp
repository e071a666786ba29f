// Prefill attention on tensor cores (chunks of kPrefillTensorCoreMinTokens tokens or more, F16
// cache, head_dim 64/128/256) against ref::paged_attention: odd chunk lengths, chunks that
// continue a cached context, several sequences in one batch (tiles mixing sequences), GQA, sliding
// windows, shuffled cache blocks. Tolerance 5e-3 absolute: queries and probabilities are rounded
// to F16 for the tensor cores (outputs are convex combinations of values in [-1, 1]).
#include <algorithm>
#include <numeric>
#include <random>
#include <string>

#include "arc/kernels/attention.h"
#include "cuda_test_util.h"

namespace arc::kernels::cuda::test {
namespace {

class AttentionTcCuda : public CudaTest,
                        public ::testing::WithParamInterface<std::tuple<int64_t, int64_t>> {};

TEST_P(AttentionTcCuda, PrefillChunksMatchRef) {
  const auto [head_dim, window] = GetParam();
  const int64_t n_kv_head = 2, n_head = 6, bs = 16;  // GQA 3:1
  const int64_t len[3] = {700, 131, 259};            // cached context + chunk per sequence
  const int64_t max_blocks = 48, n_seq = 3, n_blocks = n_seq * max_blocks;
  std::vector<int32_t> tables(static_cast<size_t>(n_blocks));
  std::iota(tables.begin(), tables.end(), 0);
  std::shuffle(tables.begin(), tables.end(), std::mt19937(11));

  const size_t rb = static_cast<size_t>(head_dim) * 2;
  std::vector<uint8_t> kc(static_cast<size_t>(n_blocks * bs * n_kv_head) * rb), vc(kc.size());
  std::vector<int32_t> slots;
  for (int s = 0; s < n_seq; ++s) {
    for (int64_t p = 0; p < len[s]; ++p)
      slots.push_back(tables[s * max_blocks + p / bs] * static_cast<int32_t>(bs) +
                      static_cast<int32_t>(p % bs));
  }
  const int64_t n_store = static_cast<int64_t>(slots.size());
  const auto k_all = random_floats(static_cast<size_t>(n_store * n_kv_head * head_dim), 31);
  const auto v_all = random_floats(static_cast<size_t>(n_store * n_kv_head * head_dim), 32);
  KvStoreArgs st;
  st.k = k_all.data();
  st.v = v_all.data();
  st.k_cache = kc.data();
  st.v_cache = vc.data();
  st.kv_type = DType::F16;
  st.slots = slots.data();
  st.n_tokens = n_store;
  st.n_kv_head = n_kv_head;
  st.head_dim = head_dim;
  kernels::kv_store(st);
  Dev<uint8_t> dkc(kc), dvc(vc);
  Dev<int32_t> dtables(tables);

  struct Tok {
    int32_t seq, pos;
  };
  // 1. One sequence, 131 tokens from position 0 (a last tile of 3 tokens).
  // 2. A chunk of 333 tokens continuing at position 367 of sequence 0 (keys before the chunk).
  // 3. Three sequences in one batch: 259 + 131 + 197 tokens (tiles holding two sequences).
  std::vector<std::vector<Tok>> batches(3);
  for (int32_t p = 0; p < 131; ++p) batches[0].push_back({1, p});
  for (int32_t p = 367; p < 700; ++p) batches[1].push_back({0, p});
  for (int32_t p = 0; p < 259; ++p) batches[2].push_back({2, p});
  for (int32_t p = 0; p < 131; ++p) batches[2].push_back({1, p});
  for (int32_t p = 503; p < 700; ++p) batches[2].push_back({0, p});
  uint32_t seed = 40;
  for (const auto& toks : batches) {
    const int64_t n = static_cast<int64_t>(toks.size());
    ASSERT_GE(n, 128);  // detail::kPrefillTensorCoreMinTokens: the tensor-core kernel runs
    std::vector<int32_t> seq, pos;
    for (const Tok& t : toks) seq.push_back(t.seq), pos.push_back(t.pos);
    const auto q = random_floats(static_cast<size_t>(n * n_head * head_dim), seed++, -2.0f, 2.0f);
    std::vector<float> ref(q.size());
    PagedAttentionArgs a;
    a.q = q.data();
    a.out = ref.data();
    a.n_tokens = n;
    a.n_head = n_head;
    a.n_kv_head = n_kv_head;
    a.head_dim = head_dim;
    a.k_cache = kc.data();
    a.v_cache = vc.data();
    a.kv_type = DType::F16;
    a.block_size = bs;
    a.token_seq = seq.data();
    a.token_pos = pos.data();
    a.block_tables = tables.data();
    a.max_blocks_per_seq = max_blocks;
    a.sliding_window = window;
    // Attention sinks (gpt-oss) on the windowed cases.
    const auto sinks = random_floats(static_cast<size_t>(n_head), 33, -3.0f, 5.0f);
    if (window > 0) a.sinks = sinks.data();
    const auto got = device_paged_attention(a, dkc.get(), dvc.get(), dtables.get());
    ASSERT_EQ(got.size(), ref.size());
    EXPECT_LE(max_abs_diff(got, ref), 5e-3) << "tokens " << n;
    // F16 rounding errors are spread thin; a wrong mask or a lost rescale moves whole rows.
    double mean = 0.0;
    for (size_t i = 0; i < got.size(); ++i) mean += std::fabs(double{got[i]} - ref[i]);
    EXPECT_LE(mean / static_cast<double>(got.size()), 1e-3) << "tokens " << n;
  }
}

INSTANTIATE_TEST_SUITE_P(HeadDimsWindows, AttentionTcCuda,
                         ::testing::Combine(::testing::Values<int64_t>(64, 128, 256),
                                            ::testing::Values<int64_t>(0, 50)),
                         [](const auto& info) {
                           return "d" + std::to_string(std::get<0>(info.param)) + "_w" +
                                  std::to_string(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace arc::kernels::cuda::test
