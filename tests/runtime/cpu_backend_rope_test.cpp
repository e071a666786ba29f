// The CPU backend reuses the RoPE angles of the last call when the next rotates the same positions
// the same way (a step's Q and K in every layer). Each call must still rotate exactly as the
// kernel alone does (bit for bit), whatever changed since the last: the positions' values in the
// same buffer, their count, the base, the YaRN fields, the rotated dims, the frequency factors'
// values behind the same pointer.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "arc/backend.h"
#include "arc/kernels/ops.h"

namespace arc {
namespace {

std::vector<float> random_x(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// Rotates a copy of x through the backend and through kernels::rope; both must agree bitwise.
void expect_same_rotation(Backend& be, kernels::RopeArgs a, const std::vector<float>& x,
                          const char* what) {
  SCOPED_TRACE(what);
  std::vector<float> got = x, want = x;
  a.x = got.data();
  be.rope(a);
  ASSERT_TRUE(be.sync().ok());
  a.x = want.data();
  kernels::rope(a);
  EXPECT_NE(0, std::memcmp(x.data(), want.data(), x.size() * sizeof(float))) << "nothing rotated";
  EXPECT_EQ(0, std::memcmp(got.data(), want.data(), x.size() * sizeof(float)));
}

TEST(CpuBackendRope, ReusedAnglesFollowEveryChange) {
  auto be = make_cpu_backend(2, CpuWeights::kInPlace);
  const int64_t d = 32;
  std::vector<int32_t> pos = {3, 7, 11, 4000};
  std::vector<float> ff(d / 2);
  for (size_t i = 0; i < ff.size(); ++i) ff[i] = 1.0f + 0.25f * static_cast<float>(i % 3);
  kernels::RopeArgs a;
  a.n_tokens = static_cast<int64_t>(pos.size());
  a.head_dim = d;
  a.pos = pos.data();
  a.theta_base = 10000.0f;

  a.n_heads = 4;
  const auto q = random_x(pos.size() * 4 * d, 1);
  expect_same_rotation(*be, a, q, "first call");
  a.n_heads = 2;
  const auto k = random_x(pos.size() * 2 * d, 2);
  expect_same_rotation(*be, a, k, "same positions, other tensor");
  pos[1] = 8;
  expect_same_rotation(*be, a, k, "a position changed in the same buffer");
  a.n_tokens = 2;
  expect_same_rotation(*be, a, std::vector<float>(k.begin(), k.begin() + 2 * 2 * d),
                       "fewer tokens");
  a.n_tokens = 4;
  a.theta_base = 1e6f;
  expect_same_rotation(*be, a, k, "base");
  a.freq_scale = 0.25f;
  a.ext_factor = 1.0f;
  a.n_ctx_orig = 4096;
  expect_same_rotation(*be, a, k, "YaRN");
  a.rot_dim = 16;
  expect_same_rotation(*be, a, k, "rotated dims");
  a.rot_dim = 0;
  a.freq_factors = ff.data();
  expect_same_rotation(*be, a, k, "frequency factors");
  ff[2] = 3.0f;
  expect_same_rotation(*be, a, k, "a factor changed behind the same pointer");
  a.layout = kernels::RopeLayout::kInterleaved;
  expect_same_rotation(*be, a, k, "interleaved pairs");
}

}  // namespace
}  // namespace arc
