// The CUDA block readers (kernels/cuda/quant_blocks.cuh) compiled for the host and checked against
// the CPU reference of each GGUF format: the bit layouts of every format run in every build with
// the CUDA toolkit, GPU or not (label unit). The device build differs only in the intrinsics
// behind byte_perm, vsub4, load_readonly and bits_as_float; the gpu-labelled kernel tests cover
// those.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "arc/kernels/dtype.h"
#include "arc/kernels/quant.h"
#include "cuda/quant_blocks.cuh"

namespace arc::kernels::cuda::detail {
namespace {

// A row of n_in random weights in format t (16-byte aligned, as the tensor loader places rows),
// and its reference dequantization.
struct QuantRow {
  std::vector<uint8_t> storage;
  uint8_t* bytes = nullptr;
  std::vector<float> ref;  // [n_in]
};

QuantRow make_row(DType t, int64_t n_in, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> w(static_cast<size_t>(n_in));
  for (auto& v : w) v = nd(rng);
  QuantRow r;
  const size_t rb = static_cast<size_t>(*dtype_row_bytes(t, static_cast<uint64_t>(n_in)));
  r.storage.assign(rb + 16, 0);
  const auto addr = reinterpret_cast<uintptr_t>(r.storage.data());
  r.bytes = r.storage.data() + (16 - addr % 16) % 16;
  EXPECT_TRUE(quantize_row(t, w.data(), r.bytes, n_in));
  r.ref.resize(static_cast<size_t>(n_in));
  EXPECT_TRUE(dequantize_row(t, r.bytes, r.ref.data(), n_in));
  return r;
}

template <int T>
void check_format(int64_t n_in) {
  const auto t = static_cast<DType>(T);
  const std::string name(dtype_name(t));
  const QuantRow row = make_row(t, n_in, 7 + T);

  // dequant16: the same floats as the reference, bit for bit (same products of the same values).
  for (int64_t c = 0; c < n_in / 16; ++c) {
    float out[16];
    dequant16<T>(row.bytes, c, out);
    for (int i = 0; i < 16; ++i) {
      ASSERT_EQ(out[i], row.ref[16 * c + i])
          << name << " dequant16 chunk " << c << " element " << i;
    }
  }

  // load_unit: 32 int8 values with two scales and an offset rebuild the reference within float
  // rounding, read with and without the 16-byte loads.
  for (bool a16 : {false, true}) {
    for (int64_t u = 0; u < n_in / 32; ++u) {
      Unit q;
      load_unit<T>(row.bytes, u, a16, q);
      for (int i = 0; i < 32; ++i) {
        const int v = static_cast<int8_t>(static_cast<uint32_t>(q.q[i / 4]) >> (8 * (i % 4)));
        const float got = (i < 16 ? q.s_lo : q.s_hi) * static_cast<float>(v) - q.m;
        const float want = row.ref[32 * u + i];
        ASSERT_NEAR(got, want, 1e-6f * (1.0f + std::fabs(want)))
            << name << " load_unit " << u << " element " << i << " a16 " << a16;
      }
    }
  }
}

// Eight blocks of the 32-value formats, three of the 256-value ones (messages name the format).
TEST(CudaQuantBlocksHost, EveryQuantFormat) {
  check_format<kQ8_0>(256);
  check_format<kQ4_0>(256);
  check_format<kMXFP4>(256);
  check_format<kQ4_K>(768);
  check_format<kQ5_K>(768);
  check_format<kQ6_K>(768);
}

// The doubled E2M1 values (OCP Microscaling spec: 0, 0.5, 1, 1.5, 2, 3, 4, 6 and negatives) and
// the E8M0 scale 2^(e - 127), halved to undo the doubling.
TEST(CudaQuantBlocksHost, Mxfp4ValuesAndScales) {
  const float e2m1[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  for (int i = 0; i < 16; ++i) {
    const float want = (i < 8 ? 2.0f : -2.0f) * e2m1[i % 8];
    EXPECT_EQ(mxfp4_value(i), want) << "index " << i;
  }
  for (int e = 0; e <= 255; ++e) {
    EXPECT_EQ(e8m0_half(static_cast<uint8_t>(e)), std::ldexp(1.0f, e - 128)) << "exponent " << e;
  }
}

TEST(CudaQuantBlocksHost, FloatFormats) {
  std::mt19937 rng(3);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (DType t : {DType::F32, DType::F16, DType::BF16}) {
    constexpr int64_t n = 37;
    std::vector<float> w(n), ref(n);
    for (auto& v : w) v = nd(rng);
    std::vector<uint8_t> bytes(static_cast<size_t>(*dtype_row_bytes(t, n)));
    ASSERT_TRUE(quantize_row(t, w.data(), bytes.data(), n));
    ASSERT_TRUE(dequantize_row(t, bytes.data(), ref.data(), n));
    for (int64_t i = 0; i < n; ++i) {
      float got = 0.0f;
      dispatch_format(t, [&](auto k) {
        if constexpr (decltype(k)::value == kF32 || decltype(k)::value == kF16 ||
                      decltype(k)::value == kBF16) {
          got = load_float_elem<decltype(k)::value>(bytes.data(), i);
        }
      });
      EXPECT_EQ(got, ref[i]) << dtype_name(t) << " element " << i;
    }
  }
}

// byte_perm and vsub4 against their definitions, on the selectors and values the readers use.
TEST(CudaQuantBlocksHost, ByteIntrinsicStandIns) {
  EXPECT_EQ(byte_perm(0x03020100u, 0x07060504u, 0x7531u), 0x07050301u);
  EXPECT_EQ(byte_perm(0x03020100u, 0x0C080604u, 0x4567u), 0x0406080Cu);
  EXPECT_EQ(vsub4(0x0F000801u, 0x08080808u), 0x07F800F9u);
  EXPECT_EQ(vsub4(0x3F203F00u, 0x20202020u), 0x1F001FE0u);
}

}  // namespace
}  // namespace arc::kernels::cuda::detail
