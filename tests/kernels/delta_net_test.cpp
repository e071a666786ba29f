// Gated DeltaNet ops (kernels/delta_net.h): the CPU kernels against the double-precision
// reference with several sequences in one call (scattered state slots, GQA ratio 2, snapshots),
// states carried across calls equal to one call, and 1 vs 3 threads bit-identical.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "arc/kernels/delta_net.h"
#include "arc/thread_pool.h"
#include "kernel_test_util.h"

namespace k = arc::kernels;
using k::testing::random_floats;

namespace {

constexpr int64_t kHk = 2, kHv = 4, kDk = 16, kDv = 12, kKernel = 4, kSlots = 9;
constexpr int64_t kChannels = 2 * kHk * kDk + kHv * kDv;
constexpr int64_t kConvSlot = (kKernel - 1) * kChannels, kDeltaSlot = kHv * kDk * kDv;

// A step of three sequences (lengths 5, 1, 7) living in slots 2, 0 and 4; tokens 2 and 4 of the
// first and token 6 of the third snapshot into slots 6, 7 and 8.
struct Step {
  std::vector<int32_t> state, snapshot;
  int64_t n = 0;
  std::vector<float> x, ab, z, weight, bias, a_log, dt_bias, norm_w;
};

Step make_step(uint32_t seed) {
  Step s;
  const int32_t slots[3] = {2, 0, 4};
  const int64_t lens[3] = {5, 1, 7};
  for (int q = 0; q < 3; ++q)
    for (int64_t i = 0; i < lens[q]; ++i) {
      s.state.push_back(slots[q]);
      int32_t snap = -1;
      if (q == 0 && i == 2) snap = 6;
      if (q == 0 && i == 4) snap = 7;
      if (q == 2 && i == 6) snap = 8;
      s.snapshot.push_back(snap);
    }
  s.n = static_cast<int64_t>(s.state.size());
  s.x = random_floats(static_cast<size_t>(s.n * kChannels), seed);
  s.ab = random_floats(static_cast<size_t>(s.n * 2 * kHv), seed + 1);
  s.z = random_floats(static_cast<size_t>(s.n * kHv * kDv), seed + 7);
  s.weight = random_floats(static_cast<size_t>(kChannels * kKernel), seed + 2, 0.5f);
  s.bias = random_floats(static_cast<size_t>(kChannels), seed + 3, 0.1f);
  s.a_log = random_floats(static_cast<size_t>(kHv), seed + 4, 0.5f);
  s.dt_bias = random_floats(static_cast<size_t>(kHv), seed + 5, 0.5f);
  s.norm_w = random_floats(static_cast<size_t>(kDv), seed + 6);
  return s;
}

struct States {
  std::vector<float> conv, delta;
};

States random_states(uint32_t seed) {
  return {random_floats(static_cast<size_t>(kSlots * kConvSlot), seed, 0.5f),
          random_floats(static_cast<size_t>(kSlots * kDeltaSlot), seed + 1, 0.1f)};
}

// conv -> gated delta rule -> gated rms norm over tokens [t0, t1) of the step, as the layer does.
// `ref` runs kernels::ref, else the CPU kernels on `pool`.
std::vector<float> run_layer(const Step& s, States& st, int64_t t0, int64_t t1, bool ref,
                             arc::ThreadPool* pool) {
  const int64_t n = t1 - t0;
  std::vector<float> y(static_cast<size_t>(n * kChannels)), o(static_cast<size_t>(n * kHv * kDv));
  k::DeltaConvArgs c;
  c.x = s.x.data() + t0 * kChannels;
  c.y = y.data();
  c.weight = s.weight.data();
  c.bias = s.bias.data();
  c.conv_states = st.conv.data();
  c.token_state = s.state.data() + t0;
  c.token_snapshot = s.snapshot.data() + t0;
  c.n_tokens = n;
  c.channels = kChannels;
  c.kernel = kKernel;
  EXPECT_TRUE(ref ? k::ref::delta_net_conv(c) : k::delta_net_conv(c, pool));
  k::GatedDeltaRuleArgs g;
  g.q = y.data();
  g.k = y.data() + kHk * kDk;
  g.v = y.data() + 2 * kHk * kDk;
  g.qkv_stride = kChannels;
  g.b = s.ab.data() + t0 * 2 * kHv;
  g.a = g.b + kHv;
  g.ab_stride = 2 * kHv;
  g.a_log = s.a_log.data();
  g.dt_bias = s.dt_bias.data();
  g.out = o.data();
  g.delta_states = st.delta.data();
  g.token_state = c.token_state;
  g.token_snapshot = c.token_snapshot;
  g.n_tokens = n;
  g.n_k_heads = kHk;
  g.n_v_heads = kHv;
  g.head_k_dim = kDk;
  g.head_v_dim = kDv;
  g.scale = 1.0f / std::sqrt(static_cast<float>(kDk));
  EXPECT_TRUE(ref ? k::ref::gated_delta_rule(g) : k::gated_delta_rule(g, pool));
  k::GatedRmsNormArgs r;
  r.x = o.data();
  r.w = s.norm_w.data();
  r.z = s.z.data() + t0 * kHv * kDv;
  r.z_token_stride = kHv * kDv;
  r.heads_per_token = kHv;
  r.y = o.data();
  r.n_rows = n * kHv;
  r.d = kDv;
  EXPECT_TRUE(ref ? k::ref::gated_rms_norm(r) : k::gated_rms_norm(r, pool));
  return o;
}

void expect_near(const std::vector<float>& got, const std::vector<float>& want, float tol,
                 const char* what) {
  ASSERT_EQ(got.size(), want.size());
  double worst = 0.0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double e = std::abs(got[i] - want[i]) / (1.0 + std::abs(want[i]));
    worst = std::max(worst, e);
  }
  EXPECT_LT(worst, tol) << what;
}

}  // namespace

TEST(DeltaNet, CpuMatchesReferenceWithSnapshots) {
  const Step s = make_step(11);
  States want = random_states(5), got = want;
  arc::ThreadPool pool(3);
  const auto o_ref = run_layer(s, want, 0, s.n, true, nullptr);
  const auto o_cpu = run_layer(s, got, 0, s.n, false, &pool);
  expect_near(o_cpu, o_ref, 2e-4f, "layer output");
  expect_near(got.conv, want.conv, 1e-6f, "conv states and snapshots");
  expect_near(got.delta, want.delta, 2e-4f, "delta states and snapshots");
  // The snapshot slots hold what the live slot held after their token: sequence 0's last token
  // snapshots into 7, so slot 7 equals slot 2 at the end.
  for (int64_t i = 0; i < kDeltaSlot; ++i)
    ASSERT_EQ(got.delta[7 * kDeltaSlot + i], got.delta[2 * kDeltaSlot + i]);
  for (int64_t i = 0; i < kConvSlot; ++i)
    ASSERT_EQ(got.conv[8 * kConvSlot + i], got.conv[4 * kConvSlot + i]);
  // An untouched slot stays as it was.
  const States init = random_states(5);
  for (int64_t i = 0; i < kDeltaSlot; ++i)
    ASSERT_EQ(got.delta[1 * kDeltaSlot + i], init.delta[1 * kDeltaSlot + i]);
}

TEST(DeltaNet, StatesCarriedAcrossCallsEqualOneCall) {
  const Step s = make_step(21);
  for (bool ref : {false, true}) {
    arc::ThreadPool pool(2);
    States one = random_states(9);
    const auto o_one = run_layer(s, one, 0, s.n, ref, &pool);
    for (int64_t split = 1; split < s.n; ++split) {
      States two = random_states(9);
      auto o_a = run_layer(s, two, 0, split, ref, &pool);
      const auto o_b = run_layer(s, two, split, s.n, ref, &pool);
      o_a.insert(o_a.end(), o_b.begin(), o_b.end());
      // Bit-identical: nothing a token computes depends on the other tokens of its call.
      ASSERT_EQ(o_a, o_one) << "split at " << split << (ref ? " (ref)" : " (cpu)");
      ASSERT_EQ(two.conv, one.conv) << "split at " << split;
      ASSERT_EQ(two.delta, one.delta) << "split at " << split;
    }
  }
}

TEST(DeltaNet, OneAndThreeThreadsBitIdentical) {
  const Step s = make_step(31);
  arc::ThreadPool p1(1), p3(3);
  States a = random_states(3), b = a;
  EXPECT_EQ(run_layer(s, a, 0, s.n, false, &p1), run_layer(s, b, 0, s.n, false, &p3));
  EXPECT_EQ(a.conv, b.conv);
  EXPECT_EQ(a.delta, b.delta);
}

TEST(DeltaNet, StateCopyAndSigmoidMul) {
  arc::ThreadPool pool(3);
  States want = random_states(41), got = want;
  const std::vector<int32_t> src = {6, 2, 8}, dst = {1, 3, 5};
  k::DeltaStateCopyArgs c;
  c.conv_states = got.conv.data();
  c.delta_states = got.delta.data();
  c.src = src.data();
  c.dst = dst.data();
  c.n = 3;
  c.conv_slot_floats = kConvSlot;
  c.delta_slot_floats = kDeltaSlot;
  ASSERT_TRUE(k::delta_state_copy(c, &pool));
  c.conv_states = want.conv.data();
  c.delta_states = want.delta.data();
  ASSERT_TRUE(k::ref::delta_state_copy(c));
  EXPECT_EQ(got.conv, want.conv);
  EXPECT_EQ(got.delta, want.delta);
  for (int64_t i = 0; i < kDeltaSlot; ++i)
    ASSERT_EQ(got.delta[3 * kDeltaSlot + i], got.delta[2 * kDeltaSlot + i]);

  const int64_t rows = 37, d = 24, stride = 2 * d;
  const auto x = random_floats(rows * d, 1), g = random_floats(rows * stride, 2, 3.0f);
  std::vector<float> y_cpu = x, y_ref(rows * d);
  k::SigmoidMulArgs m{x.data(), g.data() + d, stride, y_ref.data(), rows, d};
  ASSERT_TRUE(k::ref::sigmoid_mul(m));
  m.x = y_cpu.data();
  m.y = y_cpu.data();  // in place
  ASSERT_TRUE(k::sigmoid_mul(m, &pool));
  expect_near(y_cpu, y_ref, 1e-6f, "sigmoid_mul");
}

TEST(DeltaNet, RefusesBadArguments) {
  k::GatedDeltaRuleArgs g;  // scale unset, pointers missing
  EXPECT_FALSE(k::gated_delta_rule(g, nullptr));
  k::DeltaConvArgs c;
  EXPECT_FALSE(k::delta_net_conv(c, nullptr));
}
