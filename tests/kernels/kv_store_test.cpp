// kv_store into an F16 cache against the portable conversion fp32_to_fp16, value by value: the
// vector path (F16C on x86) must write the same bits for ties, subnormals, overflow, infinities
// and NaNs, for rows whose length is not a multiple of the vector width, and skip padding slots.
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "arc/kernels/attention.h"
#include "arc/kernels/fp16.h"

namespace k = arc::kernels;

namespace {

TEST(KvStore, F16RowsEqualPortableConversion) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  // Values that stress the rounding: exact halfway points between halves (ties to even both
  // ways), the subnormal range, the overflow threshold 65520, infinities and a NaN.
  const std::vector<float> special = {0.0f,
                                      -0.0f,
                                      1.0f + 1.0f / 2048.0f,  // tie, rounds down to even
                                      1.0f + 3.0f / 2048.0f,  // tie, rounds up to even
                                      std::ldexp(1.0f, -24),
                                      std::ldexp(1.0f, -25),
                                      std::ldexp(3.0f, -26),
                                      -std::ldexp(1.5f, -20),
                                      65504.0f,
                                      65519.0f,
                                      65520.0f,
                                      -1e9f,
                                      std::numeric_limits<float>::infinity(),
                                      std::numeric_limits<float>::quiet_NaN()};
  for (int64_t n_kv_head : {1, 3, 4}) {
    for (int64_t head_dim : {5, 8, 64}) {
      const int64_t n = n_kv_head * head_dim;  // values per token
      const std::vector<int32_t> slots = {2, -1, 0, 5};
      const int64_t n_tokens = static_cast<int64_t>(slots.size());
      std::vector<float> kx(n_tokens * n), vx(n_tokens * n);
      for (int64_t i = 0; i < n_tokens * n; ++i) {
        kx[i] = i < static_cast<int64_t>(special.size()) ? special[i] : u(rng);
        vx[i] = u(rng) * 1e-4f;
      }
      const uint16_t fill = 0xABCD;  // what an untouched slot keeps
      std::vector<uint16_t> kc(6 * n, fill), vc(6 * n, fill);
      k::KvStoreArgs a;
      a.k = kx.data();
      a.v = vx.data();
      a.k_cache = kc.data();
      a.v_cache = vc.data();
      a.kv_type = arc::DType::F16;
      a.slots = slots.data();
      a.n_tokens = n_tokens;
      a.n_kv_head = n_kv_head;
      a.head_dim = head_dim;
      k::kv_store(a);
      std::vector<uint16_t> k_want(6 * n, fill), v_want(6 * n, fill);
      for (int64_t t = 0; t < n_tokens; ++t) {
        if (slots[t] < 0) continue;
        for (int64_t i = 0; i < n; ++i) {
          k_want[slots[t] * n + i] = k::fp32_to_fp16(kx[t * n + i]);
          v_want[slots[t] * n + i] = k::fp32_to_fp16(vx[t * n + i]);
        }
      }
      for (int64_t i = 0; i < 6 * n; ++i) {
        ASSERT_EQ(kc[i], k_want[i])
            << "k value " << i << " heads " << n_kv_head << " dim " << head_dim;
        ASSERT_EQ(vc[i], v_want[i]) << "v value " << i;
      }
    }
  }
}

}  // namespace
