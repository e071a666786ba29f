// MLA attention over the paged latent cache (kernels/mla.h): the CPU kernel against the scalar
// reference over odd sizes, several sequences sharing a step, scattered blocks and both cache
// types; the reference against attention computed directly from the un-paged rows; the store
// against the rows it was given; group-limited routing against the reference router.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>

#include "arc/kernels/fp16.h"
#include "arc/kernels/mla.h"
#include "arc/kernels/moe.h"
#include "arc/kernels/ops_isa.h"
#include "arc/thread_pool.h"
#include "kernel_test_util.h"

namespace k = arc::kernels;
using arc::DType;

namespace {

// Sequences of the given lengths, each taking its last `n_new` positions as this step's tokens
// (the decode and chunked-prefill shapes), their latent rows stored in shuffled blocks.
struct MlaBatch {
  int64_t n_head, r, rope, bs;
  DType type;
  std::vector<int32_t> token_seq, token_pos, tables, slots;
  int64_t max_blocks = 0, n_blocks = 0;
  std::vector<float> lat, kpe;  // [n_rows_total, r], [.., rope] rows by (seq, pos)
  std::vector<int64_t> row_of;  // first row of each sequence
  std::vector<uint8_t> cache;
  std::vector<float> q_lat, q;  // [n_tokens, n_head, r], [n_tokens, n_head, 3 + rope]
  int64_t q_head = 0;

  MlaBatch(std::vector<int64_t> lens, int64_t n_new, int64_t heads, int64_t rank, int64_t rd,
           int64_t block, DType t, uint32_t seed)
      : n_head(heads), r(rank), rope(rd), bs(block), type(t) {
    for (int64_t len : lens) max_blocks = std::max(max_blocks, (len + bs - 1) / bs);
    n_blocks = max_blocks * static_cast<int64_t>(lens.size()) + 3;
    std::vector<int32_t> ids(static_cast<size_t>(n_blocks));
    std::iota(ids.begin(), ids.end(), 0);
    std::shuffle(ids.begin(), ids.end(), std::mt19937(seed));
    tables.assign(static_cast<size_t>(max_blocks * lens.size()), -1);
    int64_t rows = 0, next = 0;
    for (size_t s = 0; s < lens.size(); ++s) {
      row_of.push_back(rows);
      for (int64_t b = 0; b < (lens[s] + bs - 1) / bs; ++b)
        tables[s * max_blocks + b] = ids[next++];
      rows += lens[s];
    }
    lat = arc::kernels::testing::random_floats(static_cast<size_t>(rows * r), seed + 1);
    kpe = arc::kernels::testing::random_floats(static_cast<size_t>(rows * rope), seed + 2);
    cache.assign(static_cast<size_t>(n_blocks * bs * (r + rope)) * (t == DType::F16 ? 2 : 4), 0);
    // Store every row of every sequence through the reference store.
    for (size_t s = 0; s < lens.size(); ++s) {
      std::vector<int32_t> sl;
      for (int64_t p = 0; p < lens[s]; ++p) {
        sl.push_back(static_cast<int32_t>(tables[s * max_blocks + p / bs] * bs + p % bs));
      }
      k::MlaKvStoreArgs st;
      st.latent = lat.data() + row_of[s] * r;
      st.kpe = kpe.data() + row_of[s] * rope;
      st.cache = cache.data();
      st.kv_type = t;
      st.slots = sl.data();
      st.n_tokens = lens[s];
      st.kv_lora_rank = r;
      st.rope_dim = rope;
      k::mla_kv_store(st);
    }
    for (size_t s = 0; s < lens.size(); ++s) {
      for (int64_t p = std::max<int64_t>(0, lens[s] - n_new); p < lens[s]; ++p) {
        token_seq.push_back(static_cast<int32_t>(s));
        token_pos.push_back(static_cast<int32_t>(p));
      }
    }
    const int64_t n = static_cast<int64_t>(token_pos.size());
    q_lat =
        arc::kernels::testing::random_floats(static_cast<size_t>(n * n_head * r), seed + 3, 0.3f);
    q_head = 3 + rope;  // q_pe sits after 3 other values in each head, as in the model's q
    q = arc::kernels::testing::random_floats(static_cast<size_t>(n * n_head * q_head), seed + 4);
  }
  k::MlaAttentionArgs args(float* out) const {
    k::MlaAttentionArgs a;
    a.q_lat = q_lat.data();
    a.q_pe = q.data() + 3;
    a.q_pe_token_stride = n_head * q_head;
    a.q_pe_head_stride = q_head;
    a.out = out;
    a.n_tokens = static_cast<int64_t>(token_pos.size());
    a.n_head = n_head;
    a.kv_lora_rank = r;
    a.rope_dim = rope;
    a.cache = cache.data();
    a.kv_type = type;
    a.block_size = bs;
    a.token_seq = token_seq.data();
    a.token_pos = token_pos.data();
    a.block_tables = tables.data();
    a.max_blocks_per_seq = max_blocks;
    a.scale = 0.11f;
    return a;
  }
  size_t out_size() const { return token_pos.size() * static_cast<size_t>(n_head * r); }
};

double max_err(const std::vector<float>& a, const std::vector<float>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(double(a[i]) - b[i]));
  return m;
}

TEST(MlaAttention, KernelMatchesReferenceOverShapes) {
  arc::ThreadPool pool(3);
  struct Shape {
    std::vector<int64_t> lens;
    int64_t n_new, heads, r, rope, bs;
  };
  const Shape shapes[] = {
      {{1}, 1, 1, 8, 2, 4},             // one key
      {{37}, 1, 9, 40, 8, 16},          // decode, heads beyond one group, odd rank
      {{5, 23, 16}, 1, 16, 64, 16, 4},  // three sequences' decode
      {{19, 7}, 7, 3, 33, 6, 8},        // chunked prefill of two sequences
      {{300}, 4, 2, 16, 4, 256},        // the largest block
      // Whole vectors for the AVX2 / AVX-512 kernels: DeepSeek-V3's latent (512 + 64) in
      // decode, and a chunked prefill over scattered blocks with a partial last block.
      {{70}, 1, 16, 512, 64, 16},
      {{20, 9}, 3, 5, 32, 16, 8},
  };
  uint32_t seed = 10;
  for (const Shape& s : shapes) {
    for (DType t : {DType::F32, DType::F16}) {
      SCOPED_TRACE(::testing::Message() << "heads " << s.heads << " r " << s.r << " block " << s.bs
                                        << " " << (t == DType::F16 ? "F16" : "F32"));
      MlaBatch b(s.lens, s.n_new, s.heads, s.r, s.rope, s.bs, t, seed++);
      std::vector<float> want(b.out_size());
      ASSERT_TRUE(k::ref::mla_attention(b.args(want.data())));
      for (k::OpsIsa isa : k::ops_isas_available()) {  // every variant this CPU runs
        SCOPED_TRACE(k::ops_isa_name(isa));
        std::vector<float> got(b.out_size(), -1.0f);
        ASSERT_TRUE(k::mla_attention_isa(isa, b.args(got.data()), &pool));
        EXPECT_LT(max_err(want, got), 2e-5);
      }
    }
  }
}

TEST(MlaAttention, ResultDoesNotDependOnThreadCount) {
  arc::ThreadPool one(1), three(3);
  MlaBatch b({41, 17}, 5, 20, 48, 16, 16, DType::F16, 3);
  for (k::OpsIsa isa : k::ops_isas_available()) {
    SCOPED_TRACE(k::ops_isa_name(isa));
    std::vector<float> a(b.out_size()), c(b.out_size());
    ASSERT_TRUE(k::mla_attention_isa(isa, b.args(a.data()), &one));
    ASSERT_TRUE(k::mla_attention_isa(isa, b.args(c.data()), &three));
    EXPECT_EQ(0, std::memcmp(a.data(), c.data(), a.size() * sizeof(float)));
  }
}

// The reference against softmax attention written directly over the un-paged F32 rows.
TEST(MlaAttention, ReferenceEqualsDirectAttention) {
  MlaBatch b({13}, 13, 3, 12, 4, 4, DType::F32, 99);
  std::vector<float> got(b.out_size());
  ASSERT_TRUE(k::ref::mla_attention(b.args(got.data())));
  const auto a = b.args(got.data());
  for (int64_t t = 0; t < 13; ++t) {
    for (int64_t h = 0; h < b.n_head; ++h) {
      std::vector<double> s(static_cast<size_t>(t + 1));
      for (int64_t p = 0; p <= t; ++p) {
        double d = 0;
        for (int64_t i = 0; i < b.r; ++i)
          d += b.q_lat[(t * b.n_head + h) * b.r + i] * b.lat[p * b.r + i];
        for (int64_t i = 0; i < b.rope; ++i)
          d += a.q_pe[t * a.q_pe_token_stride + h * a.q_pe_head_stride + i] * b.kpe[p * b.rope + i];
        s[p] = std::exp(d * a.scale);
      }
      const double z = std::accumulate(s.begin(), s.end(), 0.0);
      for (int64_t i = 0; i < b.r; ++i) {
        double o = 0;
        for (int64_t p = 0; p <= t; ++p) o += s[p] / z * b.lat[p * b.r + i];
        EXPECT_NEAR(got[(t * b.n_head + h) * b.r + i], o, 1e-5);
      }
    }
  }
}

TEST(MlaKvStore, WritesRowsAndSkipsPadding) {
  const int64_t r = 5, rope = 3, w = r + rope;
  const auto lat = arc::kernels::testing::random_floats(3 * r, 1);
  const auto kpe = arc::kernels::testing::random_floats(3 * rope, 2);
  const int32_t slots[3] = {4, -1, 0};
  for (DType t : {DType::F32, DType::F16}) {
    std::vector<uint8_t> cache(static_cast<size_t>(6 * w * 4), 0xAB);
    const std::vector<uint8_t> before = cache;
    k::MlaKvStoreArgs st{lat.data(), kpe.data(), cache.data(), t, slots, 3, r, rope};
    k::mla_kv_store(st);
    auto value = [&](int64_t slot, int64_t i) {
      return t == DType::F32
                 ? reinterpret_cast<const float*>(cache.data())[slot * w + i]
                 : k::fp16_to_fp32(reinterpret_cast<const uint16_t*>(cache.data())[slot * w + i]);
    };
    for (auto [tok, slot] : {std::pair<int, int>{0, 4}, {2, 0}}) {
      for (int64_t i = 0; i < r; ++i) EXPECT_NEAR(value(slot, i), lat[tok * r + i], 2e-3);
      for (int64_t i = 0; i < rope; ++i) EXPECT_NEAR(value(slot, r + i), kpe[tok * rope + i], 2e-3);
    }
    // Slot 2 (token 1's padding) untouched.
    const size_t eb = t == DType::F16 ? 2 : 4;
    EXPECT_EQ(0, std::memcmp(cache.data() + 2 * w * eb, before.data() + 2 * w * eb, w * eb));
  }
}

TEST(MoeRoute, GroupLimitedSelectionMatchesReference) {
  const int64_t n_tok = 64, n_exp = 32;
  const auto logits = arc::kernels::testing::random_floats(n_tok * n_exp, 5, 2.0f);
  const auto bias = arc::kernels::testing::random_floats(n_exp, 6, 0.3f);
  for (auto [groups, used] : {std::pair<int64_t, int64_t>{8, 4}, {4, 1}, {1, 1}, {32, 3}}) {
    SCOPED_TRACE(::testing::Message() << groups << " groups, " << used << " used");
    k::RouterArgs a;
    a.logits = logits.data();
    a.n_tokens = n_tok;
    a.n_expert = n_exp;
    a.k = 3;
    a.scoring = k::RouterScoring::kSigmoid;
    a.bias = bias.data();
    a.weight_scale = 2.5f;
    a.n_group = groups;
    a.n_group_used = used;
    std::vector<int32_t> ids1(n_tok * 3), ids2(n_tok * 3);
    std::vector<float> w1(n_tok * 3), w2(n_tok * 3);
    a.ids = ids1.data();
    a.weights = w1.data();
    k::moe_route(a);
    a.ids = ids2.data();
    a.weights = w2.data();
    k::ref::moe_route(a);
    EXPECT_EQ(ids1, ids2);
    for (size_t i = 0; i < w1.size(); ++i) EXPECT_NEAR(w1[i], w2[i], 1e-5);
    // Every chosen expert lies in one of `used` groups.
    const int64_t per = n_exp / groups;
    for (int64_t t = 0; t < n_tok; ++t) {
      std::vector<int64_t> g;
      for (int j = 0; j < 3; ++j) g.push_back(ids1[t * 3 + j] / per);
      std::sort(g.begin(), g.end());
      EXPECT_LE(std::unique(g.begin(), g.end()) - g.begin(), used);
    }
  }
}

}  // namespace
