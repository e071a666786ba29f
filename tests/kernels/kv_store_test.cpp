// kv_store into an F16 cache against the portable conversion fp32_to_fp16, value by value: the
// vector path (F16C on x86) must write the same bits for ties, subnormals, overflow, infinities
// and NaNs, for rows whose length is not a multiple of the vector width, and skip padding slots.
// And the kHeadBlocks layout against its definition, value by value.
#include <cmath>
#include <cstdint>
#include <cstring>
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

// kHeadBlocks puts value c of the key of (slot, kv head g) at
// ((g * n_blocks + block) * head_dim + c) * block_size + row and its value at
// ((g * n_blocks + block) * block_size + row) * head_dim + c (block = slot / block_size, row =
// slot % block_size), written out here from attention.h's shapes; other slots keep their bytes.
// Without the pool's block count it stores nothing.
TEST(KvStore, HeadBlocksPutEachValueAtItsPlace) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  for (arc::DType t : {arc::DType::F16, arc::DType::F32}) {
    for (int64_t bs : {16, 5}) {
      const int64_t n_kv = 3, d = 8, n_blocks = 4;
      const std::vector<int32_t> slots = {static_cast<int32_t>(bs + 2), -1, 0,
                                          static_cast<int32_t>(3 * bs + bs - 1)};
      const int64_t n_tokens = static_cast<int64_t>(slots.size());
      std::vector<float> kx(n_tokens * n_kv * d), vx(kx.size());
      for (float& x : kx) x = u(rng);
      for (float& x : vx) x = u(rng);
      const size_t n_values = n_blocks * bs * n_kv * d, elem = t == arc::DType::F16 ? 2 : 4;
      std::vector<uint8_t> kc(n_values * elem, 0xCD), vc(n_values * elem, 0xCD);
      k::KvStoreArgs a;
      a.k = kx.data();
      a.v = vx.data();
      a.k_cache = kc.data();
      a.v_cache = vc.data();
      a.kv_type = t;
      a.layout = k::KvLayout::kHeadBlocks;
      a.block_size = bs;
      a.slots = slots.data();
      a.n_tokens = n_tokens;
      a.n_kv_head = n_kv;
      a.head_dim = d;
      k::kv_store(a);  // n_blocks unset
      for (size_t i = 0; i < n_values * elem; ++i) {
        ASSERT_EQ(kc[i], 0xCD) << "k byte " << i << " stored without n_blocks";
        ASSERT_EQ(vc[i], 0xCD) << "v byte " << i << " stored without n_blocks";
      }
      a.n_blocks = n_blocks;
      k::kv_store(a);
      auto stored = [&](const std::vector<uint8_t>& cache, int64_t i) {
        if (t == arc::DType::F32) {
          float f;
          std::memcpy(&f, cache.data() + i * 4, 4);
          return f;
        }
        uint16_t h;
        std::memcpy(&h, cache.data() + i * 2, 2);
        return k::fp16_to_fp32(h);
      };
      auto as_type = [&](float x) {
        return t == arc::DType::F32 ? x : k::fp16_to_fp32(k::fp32_to_fp16(x));
      };
      std::vector<bool> k_written(n_values), v_written(n_values);
      for (int64_t tok = 0; tok < n_tokens; ++tok) {
        if (slots[tok] < 0) continue;
        const int64_t block = slots[tok] / bs, row = slots[tok] % bs;
        for (int64_t g = 0; g < n_kv; ++g) {
          for (int64_t c = 0; c < d; ++c) {
            const int64_t ki = ((g * n_blocks + block) * d + c) * bs + row;
            const int64_t vi = ((g * n_blocks + block) * bs + row) * d + c;
            ASSERT_EQ(stored(kc, ki), as_type(kx[(tok * n_kv + g) * d + c])) << tok << " " << c;
            ASSERT_EQ(stored(vc, vi), as_type(vx[(tok * n_kv + g) * d + c])) << tok << " " << c;
            k_written[ki] = v_written[vi] = true;
          }
        }
      }
      for (size_t i = 0; i < n_values * elem; ++i) {
        if (!k_written[i / elem]) {
          ASSERT_EQ(kc[i], 0xCD) << "k byte " << i;
        }
        if (!v_written[i / elem]) {
          ASSERT_EQ(vc[i], 0xCD) << "v byte " << i;
        }
      }
    }
  }
}

}  // namespace
