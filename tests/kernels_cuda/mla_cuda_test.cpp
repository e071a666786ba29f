// MLA store and attention (kernels/cuda/mla.cu) against kernels/ref over odd sizes, several
// sequences in scattered blocks and both cache types; group-limited routing against the
// reference router. Attention: max |out - ref| <= 2e-5 (F32 math against double).
#include <algorithm>
#include <numeric>
#include <random>

#include "arc/kernels/mla.h"
#include "arc/kernels/moe.h"
#include "cuda_test_util.h"

namespace arc::kernels::cuda::test {
namespace {

struct MlaShape {
  std::vector<int64_t> lens;
  int64_t n_new, heads, r, rope, bs;
};

TEST_F(CudaTest, MlaStoreAndAttentionMatchRef) {
  const MlaShape shapes[] = {{{1}, 1, 1, 8, 2, 4},
                             {{37}, 1, 5, 40, 8, 16},
                             {{5, 23}, 1, 16, 512, 64, 16},
                             {{19, 7}, 7, 3, 33, 6, 8}};
  uint32_t seed = 40;
  for (const MlaShape& s : shapes) {
    for (DType t : {DType::F32, DType::F16}) {
      SCOPED_TRACE(::testing::Message() << "heads " << s.heads << " rank " << s.r << " "
                                        << (t == DType::F16 ? "F16" : "F32"));
      const int64_t w = s.r + s.rope;
      int64_t max_blocks = 0, rows = 0;
      for (int64_t len : s.lens) {
        max_blocks = std::max(max_blocks, (len + s.bs - 1) / s.bs);
        rows += len;
      }
      const int64_t n_blocks = max_blocks * static_cast<int64_t>(s.lens.size()) + 2;
      std::vector<int32_t> ids(static_cast<size_t>(n_blocks));
      std::iota(ids.begin(), ids.end(), 0);
      std::shuffle(ids.begin(), ids.end(), std::mt19937(seed));
      std::vector<int32_t> tables(static_cast<size_t>(max_blocks * s.lens.size()), 0), slots;
      int64_t next = 0;
      for (size_t q = 0; q < s.lens.size(); ++q) {
        for (int64_t b = 0; b < (s.lens[q] + s.bs - 1) / s.bs; ++b)
          tables[q * max_blocks + b] = ids[next++];
        for (int64_t p = 0; p < s.lens[q]; ++p)
          slots.push_back(
              static_cast<int32_t>(tables[q * max_blocks + p / s.bs] * s.bs + p % s.bs));
      }
      slots.push_back(-1);  // one padding row: stores nothing
      const auto lat = random_floats(static_cast<size_t>((rows + 1) * s.r), seed + 1);
      const auto kpe = random_floats(static_cast<size_t>((rows + 1) * s.rope), seed + 2);
      const size_t cache_bytes =
          static_cast<size_t>(n_blocks * s.bs * w) * (t == DType::F16 ? 2 : 4);
      std::vector<uint8_t> want_cache(cache_bytes, 0);
      MlaKvStoreArgs st{lat.data(), kpe.data(), want_cache.data(), t, slots.data(), rows + 1,
                        s.r,        s.rope};
      ref::mla_kv_store(st);
      Dev<float> dlat(lat), dkpe(kpe);
      Dev<int32_t> dslots(slots);
      Dev<uint8_t> dcache(std::vector<uint8_t>(cache_bytes, 0));
      MlaKvStoreArgs gs = st;
      gs.latent = dlat.get();
      gs.kpe = dkpe.get();
      gs.cache = dcache.get();
      gs.slots = dslots.get();
      ASSERT_TRUE(mla_kv_store(ctx_, gs));
      sync();
      EXPECT_EQ(dcache.download(), want_cache);

      std::vector<int32_t> tseq, tpos;
      for (size_t q = 0; q < s.lens.size(); ++q)
        for (int64_t p = std::max<int64_t>(0, s.lens[q] - s.n_new); p < s.lens[q]; ++p) {
          tseq.push_back(static_cast<int32_t>(q));
          tpos.push_back(static_cast<int32_t>(p));
        }
      const int64_t n = static_cast<int64_t>(tpos.size()), qh = 3 + s.rope;
      const auto q_lat =
          random_floats(static_cast<size_t>(n * s.heads * s.r), seed + 3, -0.3f, 0.3f);
      const auto q = random_floats(static_cast<size_t>(n * s.heads * qh), seed + 4);
      std::vector<float> want(static_cast<size_t>(n * s.heads * s.r));
      MlaAttentionArgs a;
      a.q_lat = q_lat.data();
      a.q_pe = q.data() + 3;
      a.q_pe_token_stride = s.heads * qh;
      a.q_pe_head_stride = qh;
      a.out = want.data();
      a.n_tokens = n;
      a.n_head = s.heads;
      a.kv_lora_rank = s.r;
      a.rope_dim = s.rope;
      a.cache = want_cache.data();
      a.kv_type = t;
      a.block_size = s.bs;
      a.token_seq = tseq.data();
      a.token_pos = tpos.data();
      a.block_tables = tables.data();
      a.max_blocks_per_seq = max_blocks;
      a.scale = 0.09f;
      ASSERT_TRUE(ref::mla_attention(a));
      Dev<float> dql(q_lat), dq(q), dout(want.size());
      Dev<int32_t> dseq(tseq), dpos(tpos), dtab(tables);
      MlaAttentionArgs g = a;
      g.q_lat = dql.get();
      g.q_pe = dq.get() + 3;
      g.out = dout.get();
      g.cache = dcache.get();
      g.token_seq = dseq.get();
      g.token_pos = dpos.get();
      g.block_tables = dtab.get();
      ASSERT_TRUE(mla_attention(ctx_, g));
      sync();
      EXPECT_LE(max_abs_diff(dout.download(), want), 2e-5);
      ++seed;
    }
  }
}

TEST_F(CudaTest, MlaAttentionRefusesUnsupportedShapes) {
  MlaAttentionArgs a;
  a.kv_type = DType::Q8_0;
  a.kv_lora_rank = 64;
  a.n_head = 1;
  EXPECT_FALSE(mla_attention(ctx_, a));
  a.kv_type = DType::F16;
  a.kv_lora_rank = 1024;  // wider than the kernel's 512
  EXPECT_FALSE(mla_attention(ctx_, a));
}

TEST_F(CudaTest, GroupLimitedRouteMatchesRef) {
  const int64_t n_tokens = 23, n_expert = 64, k = 6;
  const auto logits = random_floats(static_cast<size_t>(n_tokens * n_expert), 51, -4.0f, 4.0f);
  const auto bias = random_floats(static_cast<size_t>(n_expert), 52, -0.5f, 0.5f);
  for (auto [groups, used] : {std::pair<int64_t, int64_t>{8, 4}, {8, 1}, {16, 3}}) {
    RouterArgs a;
    a.logits = logits.data();
    a.n_tokens = n_tokens;
    a.n_expert = n_expert;
    a.k = k;
    a.scoring = RouterScoring::kSigmoid;
    a.bias = bias.data();
    a.weight_scale = 2.5f;
    a.n_group = groups;
    a.n_group_used = used;
    std::vector<int32_t> ids(static_cast<size_t>(n_tokens * k));
    std::vector<float> w(ids.size());
    a.ids = ids.data();
    a.weights = w.data();
    ref::moe_route(a);
    Dev<float> dl(logits), db(bias), dw(w.size());
    Dev<int32_t> di(ids.size());
    RouterArgs g = a;
    g.logits = dl.get();
    g.bias = db.get();
    g.ids = di.get();
    g.weights = dw.get();
    ASSERT_TRUE(moe_route(ctx_, g));
    sync();
    EXPECT_EQ(di.download(), ids) << groups << " groups, " << used << " used";
    EXPECT_LE(max_abs_diff(dw.download(), w), 1e-5);
  }
}

}  // namespace
}  // namespace arc::kernels::cuda::test
