// matmul at every dispatch level available here against ref::matmul (dequantize, accumulate in
// double), over odd sizes, token counts, strides and misaligned pointers.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "arc/kernels/cpu_dispatch.h"
#include "arc/kernels/matmul.h"
#include "arc/thread_pool.h"
#include "kernels/kernel_test_util.h"

namespace arc::kernels {
namespace {

using cpu::IsaLevel;
using testing::quantize_matrix;
using testing::random_floats;

bool quantizes_activations(DType t) {
  return t != DType::F32 && t != DType::F16 && t != DType::BF16;
}
int act_block(DType t) {
  return (t == DType::Q4_K || t == DType::Q5_K || t == DType::Q6_K) ? 256 : 32;
}

// Tolerance for y[t, o]: float kernels differ from the double reference only by F32 rounding of
// the sum, bounded by 1e-5 * sum |w x|. Kernels that quantize x to 8 bits (Q8_0 / Q8_K blocks of
// act_block values) add at most sum_i |w_i| * amax(block of x_i) * (1/254 + 2^-11): half a step
// of the activation grid plus the fp16 rounding of the Q8_0 scale.
double tolerance(DType t, const std::vector<float>& w, const float* x, int64_t n_in, int64_t o) {
  double abs_dot = 0, quant = 0;
  const int blk = act_block(t);
  for (int64_t b0 = 0; b0 < n_in; b0 += blk) {
    float amax = 0;
    for (int64_t i = b0; i < std::min<int64_t>(n_in, b0 + blk); ++i)
      amax = std::max(amax, std::fabs(x[i]));
    for (int64_t i = b0; i < std::min<int64_t>(n_in, b0 + blk); ++i) {
      abs_dot += std::fabs(w[o * n_in + i] * x[i]);
      quant += std::fabs(w[o * n_in + i]) * amax * (1.0 / 254 + 1.0 / 2048);
    }
  }
  return 1e-5 * abs_dot + (quantizes_activations(t) ? quant : 0.0) + 1e-6;
}

struct Shape {
  int64_t n_out, n_in, n_tokens;
};

// y [n_tokens, n_out] = x [n_tokens, n_in] . w^T, dense rows.
MatmulArgs product(const testing::QuantMatrix& w, DType t, Shape s, const float* x, float* y) {
  MatmulArgs a;
  a.w = w.data();
  a.w_type = t;
  a.n_out = s.n_out;
  a.n_in = s.n_in;
  a.x = x;
  a.n_tokens = s.n_tokens;
  a.y = y;
  return a;
}

void check_level(IsaLevel level, DType t, Shape s, bool accumulate, Parallel* pool) {
  SCOPED_TRACE(std::string(cpu::isa_name(level)) + " " + std::string(dtype_name(t)) +
               " out=" + std::to_string(s.n_out) + " in=" + std::to_string(s.n_in) +
               " tokens=" + std::to_string(s.n_tokens) + (accumulate ? " acc" : ""));
  const auto wf = random_floats(s.n_out * s.n_in, 11 + s.n_in);
  // Misalign the weights by one byte (two for 16-bit types, four for F32: element alignment).
  const size_t misalign = t == DType::F32 ? 4 : (t == DType::F16 || t == DType::BF16) ? 2 : 1;
  const auto w = quantize_matrix(t, wf, s.n_out, s.n_in, misalign);
  std::vector<float> wd(wf.size());  // the weights the kernel actually sees
  for (int64_t o = 0; o < s.n_out; ++o) {
    dequantize_row(t, w.data() + o * w.row_bytes, &wd[o * s.n_in], s.n_in);
  }
  const int64_t xs = s.n_in + 3, ys = s.n_out + 2;
  auto xbuf = random_floats(1 + s.n_tokens * xs, 5 + s.n_tokens);
  const float* x = xbuf.data() + 1;  // not 32-byte aligned
  std::vector<float> y0 = random_floats(s.n_tokens * ys, 9);
  std::vector<float> y_ref = y0, y = y0;

  MatmulArgs a = product(w, t, s, x, y_ref.data());
  a.x_stride = xs;
  a.y_stride = ys;
  a.accumulate = accumulate;
  ASSERT_TRUE(ref::matmul(a));
  a.y = y.data();
  ASSERT_TRUE(cpu::matmul_at(level, a, pool));
  for (int64_t tok = 0; tok < s.n_tokens; ++tok) {
    for (int64_t o = 0; o < ys; ++o) {
      const float got = y[tok * ys + o], want = y_ref[tok * ys + o];
      if (o >= s.n_out) {
        ASSERT_EQ(got, y0[tok * ys + o]) << "wrote outside n_out";
        continue;
      }
      ASSERT_NEAR(got, want, tolerance(t, wd, x + tok * xs, s.n_in, o))
          << "t=" << tok << " o=" << o;
    }
  }
}

constexpr DType kWeightTypes[] = {DType::F32,  DType::F16,  DType::BF16, DType::Q8_0, DType::Q4_0,
                                  DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::MXFP4};

TEST(Matmul, EveryLevelMatchesReference) {
  ThreadPool pool(2);
  for (IsaLevel level : cpu::available_isas()) {
    for (DType t : kWeightTypes) {
      const bool k_quant = act_block(t) == 256 && quantizes_activations(t);
      const bool float_w = !quantizes_activations(t);
      std::vector<Shape> shapes = {{1, 256, 1},  {7, 512, 1},  {33, 768, 3},
                                   {19, 256, 5}, {5, 1024, 9}, {40, 256, 17}};
      if (!k_quant) shapes.push_back({13, 96, 6});
      if (float_w) shapes.push_back({11, 37, 4});
      for (const Shape& s : shapes) {
        check_level(level, t, s, false, &pool);
        if (::testing::Test::HasFatalFailure()) return;
      }
      check_level(level, t, {9, 256, 2}, true, nullptr);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

// Activations already on the 8-bit grid: kernels that quantize x reproduce it exactly, so the
// result must match the double reference to float rounding (catches scale or sign slips that
// the looser bound above could hide).
TEST(Matmul, ExactOnQuantizedActivations) {
  for (IsaLevel level : cpu::available_isas()) {
    for (DType t : kWeightTypes) {
      SCOPED_TRACE(std::string(cpu::isa_name(level)) + " " + std::string(dtype_name(t)));
      const int64_t n_out = 21, n_in = 512, n_tok = 6;
      const auto wf = random_floats(n_out * n_in, 3);
      const auto w = quantize_matrix(t, wf, n_out, n_in, 0);
      auto x = random_floats(n_tok * n_in, 4);
      const DType at = act_block(t) == 256 ? DType::Q8_K : DType::Q8_0;
      std::vector<uint8_t> q(*dtype_row_bytes(at, n_in));
      for (int64_t tok = 0; tok < n_tok; ++tok) {
        quantize_row(at, &x[tok * n_in], q.data(), n_in);
        dequantize_row(at, q.data(), &x[tok * n_in], n_in);
      }
      std::vector<float> y(n_tok * n_out), y_ref(y.size());
      MatmulArgs a = product(w, t, {n_out, n_in, n_tok}, x.data(), y_ref.data());
      ASSERT_TRUE(ref::matmul(a));
      a.y = y.data();
      ASSERT_TRUE(cpu::matmul_at(level, a, nullptr));
      for (size_t i = 0; i < y.size(); ++i) {
        double abs_dot = 0;
        const int64_t o = i % n_out, tok = i / n_out;
        std::vector<float> wr(n_in);
        dequantize_row(t, w.data() + o * w.row_bytes, wr.data(), n_in);
        for (int64_t k = 0; k < n_in; ++k) abs_dot += std::fabs(wr[k] * x[tok * n_in + k]);
        ASSERT_NEAR(y[i], y_ref[i], 2e-6 * abs_dot + 1e-6) << "i=" << i;
      }
    }
  }
}

// Decode (one token: rows split into per-thread shares) and prefill.
TEST(Matmul, ThreadCountDoesNotChangeResults) {
  ThreadPool p1(1), p2(2), p3(3);
  for (IsaLevel level : cpu::available_isas()) {
    for (DType t : kWeightTypes) {
      for (const int64_t n_tok : {1, 7}) {
        const int64_t n_out = 203, n_in = 512;
        const auto w = quantize_matrix(t, random_floats(n_out * n_in, 1), n_out, n_in, 0);
        const auto x = random_floats(n_tok * n_in, 2);
        std::vector<float> y1(n_tok * n_out), y2(y1.size()), y3(y1.size());
        MatmulArgs a = product(w, t, {n_out, n_in, n_tok}, x.data(), y1.data());
        ASSERT_TRUE(cpu::matmul_at(level, a, &p1));
        a.y = y2.data();
        ASSERT_TRUE(cpu::matmul_at(level, a, &p2));
        a.y = y3.data();
        ASSERT_TRUE(cpu::matmul_at(level, a, &p3));
        EXPECT_EQ(0, std::memcmp(y1.data(), y2.data(), y1.size() * 4))
            << dtype_name(t) << " " << n_tok;
        EXPECT_EQ(0, std::memcmp(y1.data(), y3.data(), y1.size() * 4))
            << dtype_name(t) << " " << n_tok;
      }
    }
  }
}

// A token's result must not depend on which tokens share the call: decode (one token) and
// prefill (tiles of 2-4 tokens, SMMLA pairs at the i8mm level, odd rows and tokens left over)
// give the same bits, as MoE relies on when it groups tokens by expert.
TEST(Matmul, TokenGroupingDoesNotChangeResults) {
  for (IsaLevel level : cpu::available_isas()) {
    for (DType t : kWeightTypes) {
      const int64_t n_out = 35, n_in = 512, n_tok = 7;
      const auto w = quantize_matrix(t, random_floats(n_out * n_in, 6), n_out, n_in, 0);
      const auto x = random_floats(n_tok * n_in, 8);
      std::vector<float> y_all(n_tok * n_out), y_one(y_all.size());
      MatmulArgs a = product(w, t, {n_out, n_in, n_tok}, x.data(), y_all.data());
      ASSERT_TRUE(cpu::matmul_at(level, a, nullptr));
      a.n_tokens = 1;
      for (int64_t tok = 0; tok < n_tok; ++tok) {
        a.x = x.data() + tok * n_in;
        a.y = y_one.data() + tok * n_out;
        ASSERT_TRUE(cpu::matmul_at(level, a, nullptr));
      }
      EXPECT_EQ(0, std::memcmp(y_all.data(), y_one.data(), y_all.size() * sizeof(float)))
          << cpu::isa_name(level) << " " << dtype_name(t);
    }
  }
}

TEST(Matmul, RejectsBadArguments) {
  std::vector<float> w(64), x(64), y(64);
  MatmulArgs a;
  a.w = w.data();
  a.w_type = DType::Q4_K;
  a.n_out = 1;
  a.n_in = 64;  // not a multiple of 256
  a.x = x.data();
  a.y = y.data();
  EXPECT_FALSE(matmul(a, nullptr));
  EXPECT_FALSE(ref::matmul(a));
  a.w_type = DType::IQ2_XXS;
  a.n_in = 256;
  EXPECT_FALSE(matmul(a, nullptr));
}

TEST(Dispatch, LevelsAreConsistent) {
  const auto levels = cpu::available_isas();
  ASSERT_FALSE(levels.empty());
  EXPECT_EQ(levels.front(), IsaLevel::kScalar);
  EXPECT_EQ(levels.back(), cpu::best_isa());
  for (IsaLevel l : levels) EXPECT_TRUE(cpu::isa_available(l));
#if defined(__x86_64__)
  EXPECT_FALSE(cpu::isa_available(IsaLevel::kNeon));
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    EXPECT_TRUE(cpu::isa_available(IsaLevel::kAvx2));
  }
  // The VNNI level needs the AVX-512 level (same OS state check) plus AVX512_VNNI.
  if (cpu::isa_available(IsaLevel::kAvx512Vnni)) {
    EXPECT_TRUE(cpu::isa_available(IsaLevel::kAvx512));
    EXPECT_TRUE(__builtin_cpu_supports("avx512vnni"));
  } else if (cpu::isa_available(IsaLevel::kAvx512) && __builtin_cpu_supports("avx512vnni")) {
    ADD_FAILURE() << "AVX512_VNNI present but the avx512vnni level is not available";
  }
  // The GFNI level needs the VNNI level plus GFNI.
  if (cpu::isa_available(IsaLevel::kAvx512Gfni)) {
    EXPECT_TRUE(cpu::isa_available(IsaLevel::kAvx512Vnni));
    EXPECT_TRUE(__builtin_cpu_supports("gfni"));
  } else if (cpu::isa_available(IsaLevel::kAvx512Vnni) && __builtin_cpu_supports("gfni")) {
    ADD_FAILURE() << "GFNI present but the avx512gfni level is not available";
  }
#elif defined(__aarch64__)
  // Advanced SIMD is mandatory on aarch64: dispatch must offer the NEON kernels, then dotprod,
  // then i8mm (which needs dotprod), in that order (CTest runs this under qemu with -cpu max,
  // neoverse-n1 and cortex-a53 and names the expected best level: Dispatch.PicksExpectedLevel).
  const std::vector<IsaLevel> order = {IsaLevel::kScalar, IsaLevel::kNeon, IsaLevel::kNeonDotprod,
                                       IsaLevel::kNeonI8mm};
  ASSERT_GE(levels.size(), 2u);
  ASSERT_LE(levels.size(), order.size());
  for (size_t i = 0; i < levels.size(); ++i) EXPECT_EQ(levels[i], order[i]);
  EXPECT_FALSE(cpu::isa_available(IsaLevel::kAvx2));
  EXPECT_EQ(cpu::isa_name(IsaLevel::kNeonDotprod), "neon-dotprod");
  EXPECT_EQ(cpu::isa_name(IsaLevel::kNeonI8mm), "neon-i8mm");
#endif
}

// Levels this CPU lacks are refused (matmul_at returns false and writes nothing) rather than run
// into an illegal instruction.
TEST(Dispatch, UnavailableLevelsAreRefused) {
  const float x[32] = {};
  const std::vector<uint8_t> w(*dtype_row_bytes(DType::Q8_0, 32), 0);
  float y[1] = {42.0f};
  MatmulArgs a;
  a.w = w.data();
  a.w_type = DType::Q8_0;
  a.n_out = 1;
  a.n_in = 32;
  a.x = x;
  a.y = y;
  for (IsaLevel l : {IsaLevel::kScalar, IsaLevel::kAvx2, IsaLevel::kAvx512, IsaLevel::kNeon,
                     IsaLevel::kNeonDotprod, IsaLevel::kNeonI8mm}) {
    y[0] = 42.0f;
    const bool ran = cpu::matmul_at(l, a, nullptr);
    EXPECT_EQ(ran, cpu::isa_available(l)) << cpu::isa_name(l);
    EXPECT_EQ(y[0], ran ? 0.0f : 42.0f) << cpu::isa_name(l);  // zero weights give 0
  }
}

// The level dispatch picks on the CPU the test runs on, when the caller knows it: CTest sets
// ARC_TEST_EXPECT_ISA for each qemu -cpu model (the emulated CPU's HWCAP bits are the oracle).
TEST(Dispatch, PicksExpectedLevel) {
  const char* want = std::getenv("ARC_TEST_EXPECT_ISA");
  if (want == nullptr || *want == 0) GTEST_SKIP() << "ARC_TEST_EXPECT_ISA not set";
  EXPECT_EQ(cpu::isa_name(cpu::best_isa()), std::string_view(want));
}

}  // namespace
}  // namespace arc::kernels
