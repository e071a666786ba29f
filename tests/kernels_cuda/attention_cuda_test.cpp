// KV store and paged attention against the CPU kv_store and ref::paged_attention: GQA, two
// sequences in shuffled cache blocks, long contexts (several decode splits), prefill tiles that
// mix sequences, batched decode, sliding windows, attention sinks, head_dim 64/128/256 (and 16, 80
// with F16), F32/F16/Q8_0 caches. Tolerance 1e-4 absolute: outputs are convex combinations of
// values in [-1, 1]; the GPU uses F32 exp/sums, the reference double.
#include <algorithm>
#include <numeric>
#include <random>
#include <string>

#include "arc/kernels/attention.h"
#include "cuda_test_util.h"

namespace arc::kernels::cuda::test {
namespace {

size_t row_bytes(DType t, int64_t d) {
  return t == DType::F32 ? d * 4 : t == DType::F16 ? d * 2 : d / 32 * 34;
}

std::string case_name(const std::tuple<int64_t, int, int64_t>& p) {
  const int kv = std::get<1>(p);
  std::string name = "d";
  name += std::to_string(std::get<0>(p));
  name += kv == 0 ? "_F32" : kv == 1 ? "_F16" : "_Q8_0";
  name += "_w";
  name += std::to_string(std::get<2>(p));
  return name;
}

class AttentionCuda : public CudaTest,
                      public ::testing::WithParamInterface<std::tuple<int64_t, int, int64_t>> {};

TEST_P(AttentionCuda, DecodeAndPrefillMatchRef) {
  const auto [head_dim, kv_index, window] = GetParam();
  const DType kv = kv_index == 0 ? DType::F32 : kv_index == 1 ? DType::F16 : DType::Q8_0;
  const int64_t n_kv_head = 2, n_head = 8, bs = 16;
  const int64_t len[2] = {1000, 37};
  const int64_t max_blocks = 70;
  const int64_t n_blocks = 2 * max_blocks;
  // Block tables: a shuffled assignment of physical blocks to the two sequences.
  std::vector<int32_t> phys(static_cast<size_t>(n_blocks));
  std::iota(phys.begin(), phys.end(), 0);
  std::shuffle(phys.begin(), phys.end(), std::mt19937(3));
  std::vector<int32_t> tables(phys.begin(), phys.end());  // [2, max_blocks]

  // Fill the cache on the CPU (kv_store) with every position of both sequences.
  const size_t rb = row_bytes(kv, head_dim);
  std::vector<uint8_t> kc(static_cast<size_t>(n_blocks * bs * n_kv_head) * rb), vc(kc.size());
  std::vector<float> k_all, v_all;
  std::vector<int32_t> slots;
  for (int s = 0; s < 2; ++s) {
    for (int64_t p = 0; p < len[s]; ++p)
      slots.push_back(tables[s * max_blocks + p / bs] * static_cast<int32_t>(bs) +
                      static_cast<int32_t>(p % bs));
  }
  const int64_t n_store = static_cast<int64_t>(slots.size());
  k_all = random_floats(static_cast<size_t>(n_store * n_kv_head * head_dim), 21);
  v_all = random_floats(static_cast<size_t>(n_store * n_kv_head * head_dim), 22);
  KvStoreArgs st;
  st.k = k_all.data();
  st.v = v_all.data();
  st.k_cache = kc.data();
  st.v_cache = vc.data();
  st.kv_type = kv;
  st.slots = slots.data();
  st.n_tokens = n_store;
  st.n_kv_head = n_kv_head;
  st.head_dim = head_dim;
  kernels::kv_store(st);

  // The GPU kv_store must write the same bytes (Q8_0: same scale, values within 1).
  {
    Dev<float> dk(k_all), dv(v_all);
    Dev<int32_t> dslots(slots);
    Dev<uint8_t> dkc(kc.size()), dvc(vc.size());
    KvStoreArgs g = st;
    g.k = dk.get();
    g.v = dv.get();
    g.k_cache = dkc.get();
    g.v_cache = dvc.get();
    g.slots = dslots.get();
    ASSERT_TRUE(kv_store(ctx_, g));
    sync();
    const auto gk = dkc.download(), gv = dvc.download();
    size_t diff = 0;
    for (size_t i = 0; i < kc.size(); ++i) {
      const int dk8 =
          std::abs(static_cast<int>(static_cast<int8_t>(gk[i])) - static_cast<int8_t>(kc[i]));
      const int dv8 =
          std::abs(static_cast<int>(static_cast<int8_t>(gv[i])) - static_cast<int8_t>(vc[i]));
      if (kv == DType::Q8_0 ? (i % 34 >= 2 && (dk8 > 1 || dv8 > 1)) || (i % 34 < 2 && (dk8 || dv8))
                            : (dk8 || dv8))
        ++diff;
    }
    EXPECT_EQ(diff, 0u) << "kv_store bytes differ";
  }

  // Queries: decode (3 tokens), a batched decode of 40 tokens (split-K kernel, up to 64 tokens)
  // and a prefill of 107 tokens (the end of seq 0 and all of seq 1: tiles mixing sequences).
  struct Tok {
    int32_t seq, pos;
  };
  std::vector<Tok> decode = {{0, 999}, {1, 36}, {0, 5}};
  std::vector<Tok> batched;
  for (int32_t i = 0; i < 40; ++i) batched.push_back({i % 2, i % 2 ? 36 - i / 2 : 999 - 23 * i});
  std::vector<Tok> prefill;
  for (int32_t p = 930; p < 1000; ++p) prefill.push_back({0, p});
  for (int32_t p = 0; p < 37; ++p) prefill.push_back({1, p});
  Dev<uint8_t> dkc(kc), dvc(vc);
  Dev<int32_t> dtables(tables);
  for (const auto& toks : {decode, batched, prefill}) {
    const int64_t n = static_cast<int64_t>(toks.size());
    std::vector<int32_t> seq, pos;
    for (const Tok& t : toks) seq.push_back(t.seq), pos.push_back(t.pos);
    const auto q = random_floats(static_cast<size_t>(n * n_head * head_dim), 23, -2.0f, 2.0f);
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
    a.kv_type = kv;
    a.block_size = bs;
    a.token_seq = seq.data();
    a.token_pos = pos.data();
    a.block_tables = tables.data();
    a.max_blocks_per_seq = max_blocks;
    a.sliding_window = window;
    // Attention sinks (gpt-oss) on the windowed and the F16 cases: decode, batched decode and
    // prefill kernels. Logits from below to above the scores.
    const auto sinks = random_floats(static_cast<size_t>(n_head), 24, -3.0f, 5.0f);
    if (window > 0 || kv == DType::F16) a.sinks = sinks.data();
    const auto got = device_paged_attention(a, dkc.get(), dvc.get(), dtables.get());
    ASSERT_EQ(got.size(), ref.size());
    EXPECT_LE(max_abs_diff(got, ref), 1e-4) << "tokens " << n;
  }
}

INSTANTIATE_TEST_SUITE_P(HeadDimsCachesWindows, AttentionCuda,
                         ::testing::Combine(::testing::Values<int64_t>(64, 128, 256),
                                            ::testing::Values(0, 1, 2),
                                            ::testing::Values<int64_t>(0, 100)),
                         [](const auto& info) { return case_name(info.param); });
// Head dims that are not multiples of 32 (the engine's tiny test models use 16): F16 caches.
INSTANTIATE_TEST_SUITE_P(SmallAndOddHeadDims, AttentionCuda,
                         ::testing::Combine(::testing::Values<int64_t>(16, 80),
                                            ::testing::Values(1),
                                            ::testing::Values<int64_t>(0, 100)),
                         [](const auto& info) { return case_name(info.param); });

// Refused before anything is enqueued: runs without a device.
TEST(CudaArgs, AttentionRefusesUnsupported) {
  const Context ctx;
  PagedAttentionArgs a;
  a.n_tokens = 1;
  a.n_head = 2;
  a.n_kv_head = 1;
  a.head_dim = 84;  // not a multiple of 8 (the prefill kernel's dims per thread)
  a.kv_type = DType::F16;
  EXPECT_FALSE(paged_attention(ctx, a));
  a.head_dim = 512;  // above the largest kernel
  EXPECT_FALSE(paged_attention(ctx, a));
  a.head_dim = 128;
  a.n_head = 3;  // not a multiple of n_kv_head = 2
  a.n_kv_head = 2;
  EXPECT_FALSE(paged_attention(ctx, a));
  a.n_head = 4;
  a.kv_type = DType::Q4_K;
  EXPECT_FALSE(paged_attention(ctx, a));
  a.kv_type = DType::F16;
  a.n_tokens = 3;  // decode path: split-K partials need scratch, and there is none
  a.max_blocks_per_seq = 4;
  EXPECT_FALSE(paged_attention(ctx, a));
  KvStoreArgs k;
  k.kv_type = DType::Q8_0;
  k.head_dim = 48;  // Q8_0 rows are whole 32-value blocks
  k.n_kv_head = 1;
  k.n_tokens = 1;
  EXPECT_FALSE(kv_store(ctx, k));
}

}  // namespace
}  // namespace arc::kernels::cuda::test
