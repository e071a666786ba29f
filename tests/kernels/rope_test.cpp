// RoPE against its definition: hand-computed rotations, identities (norm preservation, position 0,
// relative positions, layout permutation) and the scaling hooks. Both the reference and the entry
// point are checked against the same oracles, then against each other.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "arc/kernels/ops.h"

namespace k = arc::kernels;

namespace {

using RopeFn = void (*)(const k::RopeArgs&);
const RopeFn kImpls[] = {&k::ref::rope, &k::rope};
const char* const kImplNames[] = {"ref", "dispatch"};

std::vector<float> random_vec(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// Rotates x: [n_tokens, n_heads, head_dim] in place with positions pos.
std::vector<float> run(RopeFn fn, k::RopeArgs a, std::vector<float> x, std::vector<int32_t> pos) {
  a.x = x.data();
  a.pos = pos.data();
  a.n_tokens = static_cast<int64_t>(pos.size());
  fn(a);
  return x;
}

double dot(const float* a, const float* b, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}

}  // namespace

TEST(Rope, HandComputedInterleaved) {
  for (int impl = 0; impl < 2; ++impl) {
    SCOPED_TRACE(kImplNames[impl]);
    k::RopeArgs a;
    a.n_heads = 1;
    a.head_dim = 4;
    a.layout = k::RopeLayout::kInterleaved;
    // pos 1: pair 0 turns by 1 rad, pair 1 by 10000^(-2/4) = 0.01 rad.
    const auto y = run(kImpls[impl], a, {1, 0, 0, 1}, {1});
    EXPECT_NEAR(y[0], 0.5403023058681398, 1e-6);
    EXPECT_NEAR(y[1], 0.8414709848078965, 1e-6);
    EXPECT_NEAR(y[2], -0.009999833334166664, 1e-6);
    EXPECT_NEAR(y[3], 0.9999500004166653, 1e-6);
    a.layout = k::RopeLayout::kSplitHalf;  // pairs (0, 2) and (1, 3)
    const auto z = run(kImpls[impl], a, {1, 0, 0, 1}, {1});
    EXPECT_NEAR(z[0], 0.5403023058681398, 1e-6);
    EXPECT_NEAR(z[2], 0.8414709848078965, 1e-6);
    EXPECT_NEAR(z[1], -0.009999833334166664, 1e-6);
    EXPECT_NEAR(z[3], 0.9999500004166653, 1e-6);
  }
}

TEST(Rope, PositionZeroIsIdentityAndNormsArePreserved) {
  for (int impl = 0; impl < 2; ++impl) {
    for (auto layout : {k::RopeLayout::kInterleaved, k::RopeLayout::kSplitHalf}) {
      SCOPED_TRACE(kImplNames[impl]);
      k::RopeArgs a;
      a.n_heads = 3;
      a.head_dim = 64;
      a.rot_dim = 48;  // the last 16 dims pass through
      a.layout = layout;
      a.theta_base = 500000.0f;
      const auto x = random_vec(2 * 3 * 64, 5);
      const auto y0 = run(kImpls[impl], a, x, {0, 0});
      for (size_t i = 0; i < x.size(); ++i) ASSERT_NEAR(y0[i], x[i], 1e-7);
      const auto y = run(kImpls[impl], a, x, {7, 123456});
      for (int64_t th = 0; th < 6; ++th) {
        const float* xi = x.data() + th * 64;
        const float* yi = y.data() + th * 64;
        for (int64_t i = 0; i < 24; ++i) {
          const int64_t p = layout == k::RopeLayout::kInterleaved ? 2 * i : i;
          const int64_t q = layout == k::RopeLayout::kInterleaved ? 2 * i + 1 : i + 24;
          const double before = std::hypot(xi[p], xi[q]);
          ASSERT_NEAR(std::hypot(yi[p], yi[q]), before, 1e-6);
        }
        for (int64_t i = 48; i < 64; ++i) ASSERT_EQ(yi[i], xi[i]);
      }
    }
  }
}

TEST(Rope, LayoutsAgreeAfterPermutation) {
  // Interleaved pair (2i, 2i+1) is split-half pair (i, i + d/2).
  const int64_t d = 32, heads = 2;
  const auto x = random_vec(heads * d, 9);
  std::vector<float> xs(x.size());
  for (int64_t h = 0; h < heads; ++h) {
    for (int64_t i = 0; i < d / 2; ++i) {
      xs[h * d + i] = x[h * d + 2 * i];
      xs[h * d + i + d / 2] = x[h * d + 2 * i + 1];
    }
  }
  for (int impl = 0; impl < 2; ++impl) {
    k::RopeArgs a;
    a.n_heads = heads;
    a.head_dim = d;
    a.layout = k::RopeLayout::kInterleaved;
    const auto yi = run(kImpls[impl], a, x, {37});
    a.layout = k::RopeLayout::kSplitHalf;
    const auto ys = run(kImpls[impl], a, xs, {37});
    for (int64_t h = 0; h < heads; ++h) {
      for (int64_t i = 0; i < d / 2; ++i) {
        ASSERT_NEAR(ys[h * d + i], yi[h * d + 2 * i], 1e-6);
        ASSERT_NEAR(ys[h * d + i + d / 2], yi[h * d + 2 * i + 1], 1e-6);
      }
    }
  }
}

TEST(Rope, DotProductDependsOnlyOnRelativePosition) {
  const int64_t d = 128;
  const auto q = random_vec(d, 11);
  const auto kv = random_vec(d, 12);
  for (int impl = 0; impl < 2; ++impl) {
    for (auto layout : {k::RopeLayout::kInterleaved, k::RopeLayout::kSplitHalf}) {
      k::RopeArgs a;
      a.n_heads = 1;
      a.head_dim = d;
      a.layout = layout;
      a.freq_scale = 0.5f;
      const double ref =
          dot(run(kImpls[impl], a, q, {10}).data(), run(kImpls[impl], a, kv, {3}).data(), d);
      for (int shift : {1, 50, 1000}) {
        const double s = dot(run(kImpls[impl], a, q, {10 + shift}).data(),
                             run(kImpls[impl], a, kv, {3 + shift}).data(), d);
        EXPECT_NEAR(s, ref, 2e-4) << shift;
      }
      // And it does change with the distance.
      const double other =
          dot(run(kImpls[impl], a, q, {11}).data(), run(kImpls[impl], a, kv, {3}).data(), d);
      EXPECT_GT(std::fabs(other - ref), 1e-3);
    }
  }
}

// Angle and magnitude of pair i after rotating the unit vector (1, 0) at position pos.
struct Turn {
  double angle, mag;
};
std::vector<Turn> pair_turns(RopeFn fn, const k::RopeArgs& base, int64_t d, int32_t pos) {
  std::vector<float> x(d, 0.0f);
  for (int64_t i = 0; i < d / 2; ++i) x[i] = 1.0f;  // split half: first elements of each pair
  k::RopeArgs a = base;
  a.n_heads = 1;
  a.head_dim = d;
  a.layout = k::RopeLayout::kSplitHalf;
  const auto y = run(fn, a, x, {pos});
  std::vector<Turn> t(d / 2);
  for (int64_t i = 0; i < d / 2; ++i) {
    t[i] = {std::atan2(y[i + d / 2], y[i]), std::hypot(y[i], y[i + d / 2])};
  }
  return t;
}
double wrap(double a) {
  return std::remainder(a, 2 * M_PI);
}

TEST(Rope, LinearScalingAndFreqFactors) {
  const int64_t d = 64;
  std::vector<float> factors(d / 2);
  for (int64_t i = 0; i < d / 2; ++i) factors[i] = 1.0f + static_cast<float>(i % 4);
  for (int impl = 0; impl < 2; ++impl) {
    k::RopeArgs a;
    a.freq_scale = 0.25f;
    const auto scaled = pair_turns(kImpls[impl], a, d, 40);
    a.freq_factors = factors.data();
    const auto divided = pair_turns(kImpls[impl], a, d, 40);
    for (int64_t i = 0; i < d / 2; ++i) {
      const double theta = 40 * std::pow(10000.0, -2.0 * i / d);
      EXPECT_NEAR(wrap(scaled[i].angle - 0.25 * theta), 0.0, 1e-5) << i;
      EXPECT_NEAR(wrap(divided[i].angle - 0.25 * theta / factors[i]), 0.0, 1e-5) << i;
      EXPECT_NEAR(scaled[i].mag, 1.0, 1e-6);
    }
  }
}

TEST(Rope, YarnKeepsHighFrequenciesAndInterpolatesLowOnes) {
  const int64_t d = 128;
  const double scale = 0.25;
  for (int impl = 0; impl < 2; ++impl) {
    k::RopeArgs a;
    a.freq_scale = static_cast<float>(scale);
    a.ext_factor = 1.0f;
    a.n_ctx_orig = 4096;
    a.attn_factor = 1.0f;
    const int32_t pos = 3000;
    const auto t = pair_turns(kImpls[impl], a, d, pos);
    // Pair i completes n_ctx_orig / wavelength_i turns over the original context. Pairs turning
    // more than beta_fast (32) times keep their frequency; fewer than beta_slow (1): scaled.
    const double mag = 1.0 + 0.1 * std::log(1.0 / scale);
    int kept = 0, scaled = 0;
    for (int64_t i = 0; i < d / 2; ++i) {
      const double theta = std::pow(10000.0, -2.0 * i / d);
      const double turns = 4096 * theta / (2 * M_PI);
      EXPECT_NEAR(t[i].mag, mag, 1e-5) << i;
      // One pair of margin each side for the floor/ceil of the ramp ends.
      if (turns > 32 * std::exp(2.0 * std::log(10000.0) / d)) {
        EXPECT_NEAR(wrap(t[i].angle - pos * theta), 0.0, 1e-4) << i;
        ++kept;
      } else if (turns < 1 / std::exp(2.0 * std::log(10000.0) / d)) {
        EXPECT_NEAR(wrap(t[i].angle - scale * pos * theta), 0.0, 1e-4) << i;
        ++scaled;
      }
    }
    EXPECT_GT(kept, 5);
    EXPECT_GT(scaled, 5);
    // attn_factor multiplies the magnitude.
    a.attn_factor = 0.5f;
    const auto half = pair_turns(kImpls[impl], a, d, pos);
    EXPECT_NEAR(half[3].mag, 0.5 * mag, 1e-5);
  }
}

TEST(Rope, DispatchMatchesReference) {
  for (auto layout : {k::RopeLayout::kInterleaved, k::RopeLayout::kSplitHalf}) {
    k::RopeArgs a;
    a.n_heads = 5;
    a.head_dim = 80;
    a.rot_dim = 64;
    a.layout = layout;
    a.theta_base = 1000000.0f;
    a.freq_scale = 0.125f;
    a.ext_factor = 1.0f;
    a.n_ctx_orig = 8192;
    const auto x = random_vec(4 * 5 * 80, 21);
    const std::vector<int32_t> pos = {0, 1, 777, 40000};
    const auto want = run(&k::ref::rope, a, x, pos);
    const auto got = run(&k::rope, a, x, pos);
    for (size_t i = 0; i < x.size(); ++i) ASSERT_NEAR(got[i], want[i], 2e-6) << i;
  }
}

TEST(Rope, BadRotDimLeavesInputAlone) {
  k::RopeArgs a;
  a.n_heads = 1;
  a.head_dim = 8;
  a.rot_dim = 7;  // odd
  const auto x = random_vec(8, 3);
  EXPECT_EQ(run(&k::rope, a, x, {5}), x);
  a.rot_dim = 10;  // larger than head_dim
  EXPECT_EQ(run(&k::ref::rope, a, x, {5}), x);
}
