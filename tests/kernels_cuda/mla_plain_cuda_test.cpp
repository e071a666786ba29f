// Plain-form MLA attention (kernels/cuda/mla_plain.cu) against kernels/ref over odd sizes,
// DeepSeek's 128 / 64 / 128 and several sequences sharing a step; sizes without a kernel refused.
#include <algorithm>

#include "arc/kernels/mla.h"
#include "cuda_test_util.h"

namespace arc::kernels::cuda::test {
namespace {

struct PlainShape {
  std::vector<int64_t> lens;
  int64_t n_new, heads, nope, rope, dv;
};

TEST_F(CudaTest, MlaPlainAttentionMatchesRef) {
  const PlainShape shapes[] = {{{1}, 1, 1, 4, 2, 4},
                               {{37, 9}, 37, 3, 40, 6, 24},
                               {{20, 11}, 4, 2, 128, 64, 128},
                               {{13}, 13, 2, 16, 0, 8}};
  uint32_t seed = 70;
  for (const PlainShape& s : shapes) {
    SCOPED_TRACE(::testing::Message() << "heads " << s.heads << " nope " << s.nope << " rope "
                                      << s.rope << " v " << s.dv);
    std::vector<int32_t> row0, pos;
    int64_t rows = 0;
    for (int64_t len : s.lens) {
      for (int64_t p = std::max<int64_t>(0, len - s.n_new); p < len; ++p) {
        row0.push_back(static_cast<int32_t>(rows));
        pos.push_back(static_cast<int32_t>(p));
      }
      rows += len;
    }
    const int64_t n = static_cast<int64_t>(pos.size()), qh = s.nope + s.rope, kw = s.rope + 5;
    const auto q = random_floats(static_cast<size_t>(n * s.heads * qh), ++seed);
    const auto kn = random_floats(static_cast<size_t>(rows * s.heads * s.nope), ++seed);
    const auto kp = random_floats(static_cast<size_t>(rows * kw), ++seed);
    const auto v = random_floats(static_cast<size_t>(rows * s.heads * s.dv), ++seed);
    std::vector<float> want(static_cast<size_t>(n * s.heads * s.dv));
    MlaPlainAttentionArgs a;
    a.q = q.data();
    a.q_token_stride = s.heads * qh;
    a.q_head_stride = qh;
    a.k_nope = kn.data();
    a.kpe = kp.data() + 5;  // a view into wider rows, as the gathered [latent | rope] rows
    a.kpe_stride = kw;
    a.v = v.data();
    a.out = want.data();
    a.n_tokens = n;
    a.n_head = s.heads;
    a.nope_dim = s.nope;
    a.rope_dim = s.rope;
    a.v_dim = s.dv;
    a.token_row0 = row0.data();
    a.token_pos = pos.data();
    a.scale = 0.3f;
    ASSERT_TRUE(ref::mla_plain_attention(a));
    Dev<float> dq(q), dkn(std::max<size_t>(1, kn.size())), dkp(kp), dv(v), dout(want.size());
    if (!kn.empty()) dkn.upload(kn);
    Dev<int32_t> drow0(row0), dpos(pos);
    a.q = dq.get();
    a.k_nope = dkn.get();
    a.kpe = dkp.get() + 5;
    a.v = dv.get();
    a.out = dout.get();
    a.token_row0 = drow0.get();
    a.token_pos = dpos.get();
    ASSERT_TRUE(mla_plain_attention(ctx_, a));
    sync();
    EXPECT_LE(max_abs_diff(dout.download(), want), 2e-5 * (1.0 + max_abs(want)));
  }
}

TEST_F(CudaTest, MlaPlainAttentionRefusesUnsupportedSizes) {
  Dev<float> buf(64);
  Dev<int32_t> idx(1);
  MlaPlainAttentionArgs a;
  a.q = a.k_nope = a.kpe = a.v = buf.get();
  a.out = buf.get();
  a.token_row0 = a.token_pos = idx.get();
  a.n_tokens = a.n_head = 1;
  a.nope_dim = 8;
  a.rope_dim = 128;  // beyond kMlaMaxRope
  a.v_dim = 8;
  a.scale = 1.0f;
  EXPECT_FALSE(mla_plain_attention(ctx_, a));
}

}  // namespace
}  // namespace arc::kernels::cuda::test
