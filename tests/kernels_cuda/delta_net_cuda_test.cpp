// Gated DeltaNet ops (kernels/cuda/delta_net.cu) against the double reference (kernels/ref/
// delta_net_ref.cpp): several sequences of different lengths in one call with scattered state
// slots, single-token decode steps carried across calls, GQA ratios 1 and 2, small and odd head
// sizes and Qwen3-Next's 128, snapshots after marked tokens, state copy, the gated norm with
// several heads per token and sigmoid_mul. Every state pool is compared whole, so a kernel that
// writes a slot it should not (or misses a snapshot) fails.
#include <algorithm>
#include <vector>

#include "arc/kernels/delta_net.h"
#include "cuda_test_util.h"

namespace arc::kernels::cuda::test {
namespace {

constexpr int64_t kSlots = 9;

// One call's token layout: the runs of several sequences (lens[i] tokens in slot slots[i]), and
// snapshot slots for chosen tokens (-1 elsewhere).
struct Batch {
  std::vector<int32_t> token_state, token_snapshot;
};

Batch make_batch(const std::vector<int64_t>& lens, const std::vector<int32_t>& slots,
                 const std::vector<std::pair<int64_t, int32_t>>& snaps) {
  Batch b;
  for (size_t s = 0; s < lens.size(); ++s)
    for (int64_t i = 0; i < lens[s]; ++i) b.token_state.push_back(slots[s]);
  b.token_snapshot.assign(b.token_state.size(), -1);
  for (auto [t, slot] : snaps) b.token_snapshot[static_cast<size_t>(t)] = slot;
  return b;
}

// The calls of each test: a prefill of three sequences of different lengths (one of them a
// single token) with snapshots, then two decode steps of one token per sequence (the second
// with a snapshot of every token, as speculative verification takes them).
std::vector<Batch> calls() {
  return {make_batch({7, 1, 12}, {4, 0, 7}, {{2, 1}, {7, 2}, {19, 8}}),
          make_batch({1, 1, 1}, {4, 0, 7}, {}),
          make_batch({1, 1, 1}, {7, 4, 0}, {{0, 3}, {1, 5}, {2, 6}})};
}

TEST_F(CudaTest, DeltaNetConvMatchesRef) {
  for (int64_t kernel : {4, 3, 1}) {
    const int64_t channels = kernel == 4 ? 301 : 37;  // 301: two channel blocks
    SCOPED_TRACE(::testing::Message() << "kernel " << kernel << " channels " << channels);
    const int64_t tail = kernel - 1;
    const auto weight = random_floats(static_cast<size_t>(channels * kernel), 11);
    const auto bias = random_floats(static_cast<size_t>(channels), 12);
    auto want_pool =
        random_floats(static_cast<size_t>(std::max<int64_t>(1, kSlots * tail * channels)), 13);
    Dev<float> dweight(weight), dbias(bias), dpool(want_pool);
    uint32_t seed = 20;
    for (const Batch& b : calls()) {
      const int64_t n = static_cast<int64_t>(b.token_state.size());
      const auto x = random_floats(static_cast<size_t>(n * channels), ++seed, -2.0f, 2.0f);
      std::vector<float> want(x.size());
      DeltaConvArgs a;
      a.x = x.data();
      a.y = want.data();
      a.weight = weight.data();
      a.bias = kernel == 3 ? nullptr : bias.data();
      a.conv_states = want_pool.data();
      a.token_state = b.token_state.data();
      a.token_snapshot = b.token_snapshot.data();
      a.n_tokens = n;
      a.channels = channels;
      a.kernel = kernel;
      ASSERT_TRUE(ref::delta_net_conv(a));
      Dev<float> dx(x), dy(x.size());
      Dev<int32_t> dstate(b.token_state), dsnap(b.token_snapshot);
      a.x = dx.get();
      a.y = dy.get();
      a.weight = dweight.get();
      a.bias = kernel == 3 ? nullptr : dbias.get();
      a.conv_states = dpool.get();
      a.token_state = dstate.get();
      a.token_snapshot = dsnap.get();
      ASSERT_TRUE(delta_net_conv(ctx_, a));
      sync();
      EXPECT_LE(max_abs_diff(dy.download(), want), 2e-6 * (1.0 + max_abs(want)));
      // The tails are copies of inputs: exact.
      EXPECT_EQ(dpool.download(), want_pool);
    }
  }
}

struct RuleShape {
  int64_t hk, hv, dk, dv;
};

TEST_F(CudaTest, GatedDeltaRuleMatchesRef) {
  const RuleShape shapes[] = {{2, 2, 16, 16}, {2, 4, 32, 24}, {1, 2, 48, 40}, {2, 2, 128, 128}};
  for (const RuleShape& sh : shapes) {
    SCOPED_TRACE(::testing::Message() << "k heads " << sh.hk << " v heads " << sh.hv << " dk "
                                      << sh.dk << " dv " << sh.dv);
    const int64_t slot_floats = sh.hv * sh.dk * sh.dv;
    // A row of the conv output: q | k | v, plus 3 floats of padding (a stride that is not the
    // packed width); a and b interleaved in one row per token.
    const int64_t stride = 2 * sh.hk * sh.dk + sh.hv * sh.dv + 3, ab_stride = 2 * sh.hv + 1;
    const auto a_log = random_floats(static_cast<size_t>(sh.hv), 31, -1.0f, 0.5f);
    const auto dt_bias = random_floats(static_cast<size_t>(sh.hv), 32);
    auto want_pool = random_floats(static_cast<size_t>(kSlots * slot_floats), 33, -0.3f, 0.3f);
    Dev<float> dalog(a_log), ddt(dt_bias), dpool(want_pool);
    uint32_t seed = 40;
    for (const Batch& b : calls()) {
      const int64_t n = static_cast<int64_t>(b.token_state.size());
      const auto qkv = random_floats(static_cast<size_t>(n * stride), ++seed);
      const auto ab = random_floats(static_cast<size_t>(n * ab_stride), ++seed, -3.0f, 3.0f);
      std::vector<float> want(static_cast<size_t>(n * sh.hv * sh.dv));
      const std::vector<float> before = want_pool;
      GatedDeltaRuleArgs a;
      a.q = qkv.data();
      a.k = qkv.data() + sh.hk * sh.dk;
      a.v = qkv.data() + 2 * sh.hk * sh.dk;
      a.qkv_stride = stride;
      a.a = ab.data();
      a.b = ab.data() + sh.hv;
      a.ab_stride = ab_stride;
      a.a_log = a_log.data();
      a.dt_bias = dt_bias.data();
      a.out = want.data();
      a.delta_states = want_pool.data();
      a.token_state = b.token_state.data();
      a.token_snapshot = b.token_snapshot.data();
      a.n_tokens = n;
      a.n_k_heads = sh.hk;
      a.n_v_heads = sh.hv;
      a.head_k_dim = sh.dk;
      a.head_v_dim = sh.dv;
      a.scale = 1.0f / std::sqrt(static_cast<float>(sh.dk));
      ASSERT_TRUE(ref::gated_delta_rule(a));
      Dev<float> dqkv(qkv), dab(ab), dout(want.size());
      Dev<int32_t> dstate(b.token_state), dsnap(b.token_snapshot);
      a.q = dqkv.get();
      a.k = dqkv.get() + sh.hk * sh.dk;
      a.v = dqkv.get() + 2 * sh.hk * sh.dk;
      a.a = dab.get();
      a.b = dab.get() + sh.hv;
      a.a_log = dalog.get();
      a.dt_bias = ddt.get();
      a.out = dout.get();
      a.delta_states = dpool.get();
      a.token_state = dstate.get();
      a.token_snapshot = dsnap.get();
      ASSERT_TRUE(gated_delta_rule(ctx_, a));
      sync();
      EXPECT_LE(max_abs_diff(dout.download(), want), 1e-5 * (1.0 + max_abs(want)));
      const auto pool = dpool.download();
      EXPECT_LE(max_abs_diff(pool, want_pool), 1e-5 * (1.0 + max_abs(want_pool)));
      // Slots this call neither runs nor snapshots into stay bit-exact (no stray writes).
      for (int64_t slot = 0; slot < kSlots; ++slot) {
        if (std::count(b.token_state.begin(), b.token_state.end(), slot) > 0 ||
            std::count(b.token_snapshot.begin(), b.token_snapshot.end(), slot) > 0)
          continue;
        EXPECT_TRUE(std::equal(pool.begin() + slot * slot_floats,
                               pool.begin() + (slot + 1) * slot_floats,
                               before.begin() + slot * slot_floats))
            << "slot " << slot;
      }
      want_pool = pool;  // the next call starts from the device's states (no drift across calls)
      dpool.upload(want_pool);
    }
  }
}

TEST_F(CudaTest, GatedDeltaRuleRefusesUnsupportedSizes) {
  GatedDeltaRuleArgs a;
  Dev<float> buf(16);
  Dev<int32_t> ts(1);
  a.q = a.k = a.v = a.a = a.b = a.a_log = a.dt_bias = buf.get();
  a.out = a.delta_states = buf.get();
  a.token_state = ts.get();
  a.n_tokens = 1;
  a.n_k_heads = a.n_v_heads = 1;
  a.head_k_dim = 256;  // beyond kDeltaMaxKeyDim
  a.head_v_dim = 16;
  a.scale = 1.0f;
  EXPECT_FALSE(gated_delta_rule(ctx_, a));
  a.head_k_dim = 16;
  a.head_v_dim = 512;
  EXPECT_FALSE(gated_delta_rule(ctx_, a));
  DeltaConvArgs c;
  c.x = buf.get();
  c.y = buf.get() + 8;
  c.weight = c.conv_states = buf.get();
  c.token_state = ts.get();
  c.n_tokens = 1;
  c.channels = 1;
  c.kernel = 9;
  EXPECT_FALSE(delta_net_conv(ctx_, c));
}

TEST_F(CudaTest, DeltaStateCopyMatchesRef) {
  const int64_t conv_floats = 3 * 29, delta_floats = 2 * 16 * 24;
  auto conv = random_floats(static_cast<size_t>(kSlots * conv_floats), 51);
  auto delta = random_floats(static_cast<size_t>(kSlots * delta_floats), 52);
  const std::vector<int32_t> src = {1, 4, 8}, dst = {6, 0, 3};
  Dev<float> dconv(conv), ddelta(delta);
  Dev<int32_t> dsrc(src), ddst(dst);
  DeltaStateCopyArgs a{conv.data(), delta.data(), src.data(),  dst.data(),
                       3,           conv_floats,  delta_floats};
  ASSERT_TRUE(ref::delta_state_copy(a));
  a.conv_states = dconv.get();
  a.delta_states = ddelta.get();
  a.src = dsrc.get();
  a.dst = ddst.get();
  ASSERT_TRUE(delta_state_copy(ctx_, a));
  sync();
  EXPECT_EQ(dconv.download(), conv);
  EXPECT_EQ(ddelta.download(), delta);
}

TEST_F(CudaTest, GatedRmsNormMatchesRef) {
  for (int64_t heads : {1, 3}) {
    for (bool alias : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "heads per token " << heads << " alias " << alias);
      const int64_t d = 40, n_tokens = 5, rows = n_tokens * heads, z_stride = heads * d + 7;
      const auto x = random_floats(static_cast<size_t>(rows * d), 61, -3.0f, 3.0f);
      const auto w = random_floats(static_cast<size_t>(d), 62);
      const auto z = random_floats(static_cast<size_t>(n_tokens * z_stride), 63, -4.0f, 4.0f);
      std::vector<float> want(x.size());
      GatedRmsNormArgs a{x.data(),    w.data(), z.data(), z_stride, heads,
                         want.data(), rows,     d,        1e-6f};
      ASSERT_TRUE(ref::gated_rms_norm(a));
      Dev<float> dx(x), dw(w), dz(z), dy(x.size());
      a.x = dx.get();
      a.w = dw.get();
      a.z = dz.get();
      a.y = alias ? dx.get() : dy.get();
      ASSERT_TRUE(gated_rms_norm(ctx_, a));
      sync();
      const auto got = alias ? dx.download() : dy.download();
      EXPECT_LE(max_abs_diff(got, want), 2e-6 * (1.0 + max_abs(want)));
    }
  }
}

TEST_F(CudaTest, SigmoidMulMatchesRef) {
  for (bool alias : {false, true}) {
    const int64_t rows = 6, d = 300, g_stride = 2 * d + 5;
    const auto x = random_floats(static_cast<size_t>(rows * d), 71, -3.0f, 3.0f);
    const auto g = random_floats(static_cast<size_t>(rows * g_stride), 72, -6.0f, 6.0f);
    std::vector<float> want(x.size());
    SigmoidMulArgs a{x.data(), g.data() + d, g_stride, want.data(), rows, d};
    ASSERT_TRUE(ref::sigmoid_mul(a));
    Dev<float> dx(x), dg(g), dy(x.size());
    a.x = dx.get();
    a.g = dg.get() + d;
    a.y = alias ? dx.get() : dy.get();
    ASSERT_TRUE(sigmoid_mul(ctx_, a));
    sync();
    EXPECT_LE(max_abs_diff(alias ? dx.download() : dy.download(), want),
              1e-6 * (1.0 + max_abs(want)));
  }
}

}  // namespace
}  // namespace arc::kernels::cuda::test
