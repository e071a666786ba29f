// The plain form of MLA attention (kernels/mla.h, mla_plain_attention): its reference against
// the absorbed form's reference (the same attention computed the other way round: v_b of the
// latent-space output), and the CPU kernel against the reference over odd sizes, several
// sequences sharing a step, and any thread count.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "arc/kernels/mla.h"
#include "arc/thread_pool.h"
#include "kernel_test_util.h"

namespace k = arc::kernels;
using arc::DType;
using arc::kernels::testing::random_floats;

namespace {

// Sequences of the given lengths, each taking its last `n_new` positions as this step's tokens;
// every position's latent and rope key gathered as one row [r | rope] (rows by (seq, pos)); k_b
// and v_b per head, and the decompressed keys and values.
struct PlainCase {
  int64_t nh, r, nope, rope, dv, n_rows = 0;
  std::vector<int64_t> lens, row0;
  std::vector<int32_t> token_seq, token_pos, token_row0;
  std::vector<float> rows, kb, vb, k_nope, v, q;  // q: [n_tokens, nh, nope + rope]

  PlainCase(std::vector<int64_t> l, int64_t n_new, int64_t heads, int64_t rank, int64_t dn,
            int64_t dr, int64_t dvv, uint32_t seed)
      : nh(heads), r(rank), nope(dn), rope(dr), dv(dvv), lens(std::move(l)) {
    for (size_t s = 0; s < lens.size(); ++s) {
      row0.push_back(n_rows);
      for (int64_t p = std::max<int64_t>(0, lens[s] - n_new); p < lens[s]; ++p) {
        token_seq.push_back(static_cast<int32_t>(s));
        token_pos.push_back(static_cast<int32_t>(p));
        token_row0.push_back(static_cast<int32_t>(n_rows));
      }
      n_rows += lens[s];
    }
    const int64_t w = r + rope;
    rows = random_floats(static_cast<size_t>(n_rows * w), seed);
    kb = random_floats(static_cast<size_t>(nh * r * nope), seed + 1, 0.3f);  // [h][r][nope]
    vb = random_floats(static_cast<size_t>(nh * dv * r), seed + 2, 0.3f);    // [h][dv][r]
    q = random_floats(static_cast<size_t>(n_tokens() * nh * (nope + rope)), seed + 3);
    k_nope.assign(static_cast<size_t>(n_rows * nh * nope), 0.0f);
    v.assign(static_cast<size_t>(n_rows * nh * dv), 0.0f);
    for (int64_t j = 0; j < n_rows; ++j) {
      for (int64_t h = 0; h < nh; ++h) {
        for (int64_t d = 0; d < nope; ++d) {
          double s = 0;
          for (int64_t i = 0; i < r; ++i) s += double{kb[(h * r + i) * nope + d]} * rows[j * w + i];
          k_nope[(j * nh + h) * nope + d] = static_cast<float>(s);
        }
        for (int64_t e = 0; e < dv; ++e) {
          double s = 0;
          for (int64_t i = 0; i < r; ++i) s += double{vb[(h * dv + e) * r + i]} * rows[j * w + i];
          v[(j * nh + h) * dv + e] = static_cast<float>(s);
        }
      }
    }
  }
  int64_t n_tokens() const { return static_cast<int64_t>(token_pos.size()); }
  size_t out_size() const { return static_cast<size_t>(n_tokens() * nh * dv); }
  k::MlaPlainAttentionArgs args(float* out) const {
    k::MlaPlainAttentionArgs a;
    a.q = q.data();
    a.q_token_stride = nh * (nope + rope);
    a.q_head_stride = nope + rope;
    a.k_nope = k_nope.data();
    a.kpe = rows.data() + r;
    a.kpe_stride = r + rope;
    a.v = v.data();
    a.out = out;
    a.n_tokens = n_tokens();
    a.n_head = nh;
    a.nope_dim = nope;
    a.rope_dim = rope;
    a.v_dim = dv;
    a.token_row0 = token_row0.data();
    a.token_pos = token_pos.data();
    a.scale = 0.17f;
    return a;
  }
};

// Plain == absorbed: q_lat = k_b q_nope over the paged latent cache, then v_b of the output.
TEST(MlaPlainAttention, ReferenceEqualsAbsorbedForm) {
  PlainCase c({9, 14}, 6, 3, 20, 8, 4, 6, 5);
  std::vector<float> plain(c.out_size());
  ASSERT_TRUE(k::ref::mla_plain_attention(c.args(plain.data())));
  // The cache: sequence s's position p in block s * max_blocks + p / bs (F32 rows [r | rope]).
  const int64_t bs = 4, w = c.r + c.rope, max_blocks = 4;
  std::vector<float> cache(static_cast<size_t>(2 * max_blocks * bs * w), 0.0f);
  std::vector<int32_t> tables(static_cast<size_t>(2 * max_blocks));
  for (int64_t s = 0; s < 2; ++s) {
    for (int64_t b = 0; b < max_blocks; ++b)
      tables[s * max_blocks + b] = static_cast<int32_t>(s * max_blocks + b);
    for (int64_t p = 0; p < c.lens[s]; ++p)
      std::copy_n(c.rows.begin() + (c.row0[s] + p) * w, w,
                  cache.begin() + (s * max_blocks * bs + p) * w);
  }
  const int64_t n = c.n_tokens();
  std::vector<float> q_lat(static_cast<size_t>(n * c.nh * c.r)), o_lat(q_lat.size());
  for (int64_t t = 0; t < n; ++t)
    for (int64_t h = 0; h < c.nh; ++h)
      for (int64_t i = 0; i < c.r; ++i) {
        double s = 0;
        for (int64_t d = 0; d < c.nope; ++d)
          s += double{c.kb[(h * c.r + i) * c.nope + d]} *
               c.q[(t * c.nh + h) * (c.nope + c.rope) + d];
        q_lat[(t * c.nh + h) * c.r + i] = static_cast<float>(s);
      }
  k::MlaAttentionArgs a;
  a.q_lat = q_lat.data();
  a.q_pe = c.q.data() + c.nope;
  a.q_pe_token_stride = c.nh * (c.nope + c.rope);
  a.q_pe_head_stride = c.nope + c.rope;
  a.out = o_lat.data();
  a.n_tokens = n;
  a.n_head = c.nh;
  a.kv_lora_rank = c.r;
  a.rope_dim = c.rope;
  a.cache = cache.data();
  a.kv_type = DType::F32;
  a.block_size = bs;
  a.token_seq = c.token_seq.data();
  a.token_pos = c.token_pos.data();
  a.block_tables = tables.data();
  a.max_blocks_per_seq = max_blocks;
  a.scale = 0.17f;
  ASSERT_TRUE(k::ref::mla_attention(a));
  for (int64_t t = 0; t < n; ++t)
    for (int64_t h = 0; h < c.nh; ++h)
      for (int64_t e = 0; e < c.dv; ++e) {
        double s = 0;
        for (int64_t i = 0; i < c.r; ++i)
          s += double{c.vb[(h * c.dv + e) * c.r + i]} * o_lat[(t * c.nh + h) * c.r + i];
        EXPECT_NEAR(plain[(t * c.nh + h) * c.dv + e], s, 2e-5) << t << " " << h << " " << e;
      }
}

TEST(MlaPlainAttention, KernelMatchesReferenceOverShapes) {
  arc::ThreadPool pool(3);
  const PlainCase cases[] = {
      PlainCase({1}, 1, 1, 8, 4, 2, 4, 11), PlainCase({70, 5}, 70, 4, 24, 16, 8, 12, 12),
      PlainCase({33, 130}, 40, 2, 16, 0 + 5, 3, 7, 13), PlainCase({12}, 3, 5, 16, 8, 0, 8, 14)};
  for (const PlainCase& c : cases) {
    SCOPED_TRACE(::testing::Message()
                 << "heads " << c.nh << " nope " << c.nope << " rope " << c.rope);
    std::vector<float> want(c.out_size()), got(c.out_size()), got1(c.out_size());
    ASSERT_TRUE(k::ref::mla_plain_attention(c.args(want.data())));
    ASSERT_TRUE(k::mla_plain_attention(c.args(got.data()), &pool));
    ASSERT_TRUE(k::mla_plain_attention(c.args(got1.data()), nullptr));
    for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], 2e-5) << i;
    EXPECT_EQ(0, std::memcmp(got.data(), got1.data(), got.size() * sizeof(float)));
  }
}

}  // namespace
