// Q4_K_R16, Q6_K_R16, Q8_0_R16 and MXFP4_R16 (arc/kernels/repack.h): the rearrangement is lossless,
// and the interleaved kernels match ref::matmul on the row-major weights, whatever the thread
// count, token grouping or row range, and inside the fused MoE loops.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "../../kernels/cpu/matmul_kernels.h"  // internal to arc_kernels: the rows kernels
#include "arc/kernels/cpu_dispatch.h"
#include "arc/kernels/matmul.h"
#include "arc/kernels/moe.h"
#include "arc/kernels/repack.h"
#include "arc/thread_pool.h"
#include "kernels/kernel_test_util.h"

namespace arc::kernels {
namespace {

using cpu::IsaLevel;
using testing::quantize_matrix;
using testing::random_floats;

// The file types with an interleaved layout, and that layout.
constexpr std::pair<DType, DType> kLayouts[] = {{DType::Q4_K, DType::Q4_K_R16},
                                                {DType::Q6_K, DType::Q6_K_R16},
                                                {DType::Q8_0, DType::Q8_0_R16},
                                                {DType::MXFP4, DType::MXFP4_R16}};

// Row-major [n_out, n_in] in `t` and the same matrix interleaved as `r16`.
struct Pair {
  std::vector<uint8_t> rows, r16;
};
Pair make_pair(DType t, DType r16, int64_t n_out, int64_t n_in, uint32_t seed) {
  const auto q = quantize_matrix(t, random_floats(n_out * n_in, seed), n_out, n_in, 0);
  Pair p;
  p.rows.assign(q.data(), q.data() + q.row_bytes * n_out);
  p.r16 = p.rows;
  EXPECT_TRUE(repack_rows(t, r16, p.r16.data(), n_out, n_in));
  return p;
}

// The levels with the interleaved kernels (AVX-512 VNNI and above); none on other CPUs.
std::vector<IsaLevel> r16_levels() {
  std::vector<IsaLevel> out;
  for (IsaLevel l : cpu::available_isas()) {
    bool all = true;
    for (const auto& [t, r16] : kLayouts) all = all && cpu::rows_kernel_at(l, r16).fn != nullptr;
    if (all) out.push_back(l);
  }
  return out;
}
// The activation blocks the kernel for file type t quantizes to.
DType act_type(DType t) {
  return t == DType::Q8_0 || t == DType::MXFP4 ? DType::Q8_0 : DType::Q8_K;
}
constexpr const char* kNoKernel = "no interleaved kernels on this CPU (need AVX-512 VNNI)";

MatmulArgs product(const void* w, DType t, int64_t n_out, int64_t n_in, const float* x,
                   int64_t n_tok, float* y) {
  MatmulArgs a;
  a.w = w;
  a.w_type = t;
  a.n_out = n_out;
  a.n_in = n_in;
  a.x = x;
  a.n_tokens = n_tok;
  a.y = y;
  return a;
}

TEST(Repack, RoundTripsAndRefusesWhatItCannotRearrange) {
  const int64_t n_out = 48, n_in = 768;
  for (const auto& [t, r16] : kLayouts) {
    SCOPED_TRACE(dtype_name(r16));
    Pair p = make_pair(t, r16, n_out, n_in, 1);
    EXPECT_NE(p.rows, p.r16);  // rearranged, not copied
    std::vector<uint8_t> back = p.r16;
    ASSERT_TRUE(repack_rows(r16, t, back.data(), n_out, n_in));
    EXPECT_EQ(p.rows, back);
    // Group 1 holds rows 16..31 only: the first row's d sits at the group's first bytes (d
    // leads the Q4_K and Q8_0 blocks and ends the 210-byte Q6_K block; MXFP4's 1-byte e leads).
    const size_t row = *dtype_row_bytes(t, n_in), d_at = t == DType::Q6_K ? 208 : 0;
    const size_t d_len = t == DType::MXFP4 ? 1 : 2;
    EXPECT_EQ(0, std::memcmp(p.r16.data() + 16 * row, p.rows.data() + 16 * row + d_at, d_len));
    EXPECT_FALSE(repack_rows(t, r16, back.data(), 40, n_in));  // 40 % 16
    EXPECT_FALSE(repack_rows(t, r16, back.data(), 16, 100));
    EXPECT_FALSE(repacked_type(t, 40, 256).has_value());
    EXPECT_TRUE(dtype_is_internal(r16));
    EXPECT_EQ(row_major_type(r16), t);
    EXPECT_FALSE(dtype_from_name(dtype_name(r16)).has_value());  // never a file's type
    // Only CPUs with the kernels rearrange.
    EXPECT_EQ(repacked_type(t, 64, 256) == r16, !r16_levels().empty());
  }
  std::vector<uint8_t> buf(16 * 144);
  EXPECT_FALSE(repack_rows(DType::Q8_0, DType::Q4_K_R16, buf.data(), 16, 256));
  EXPECT_FALSE(repack_rows(DType::Q4_K, DType::Q4_K, buf.data(), 16, 256));
  EXPECT_FALSE(repacked_type(DType::Q5_K, 64, 256).has_value());
}

// Activations on the activation grid (Q8_K / Q8_0): the kernels' integer sums are exact, so they
// must match the double reference to float rounding (a wrong scale, min or nibble moves results
// far more).
TEST(Repack, R16KernelMatchesReference) {
  const auto levels = r16_levels();
  if (levels.empty()) GTEST_SKIP() << kNoKernel;
  ThreadPool pool(2);
  struct Shape {
    int64_t n_out, n_in, n_tok;
    bool accumulate;
  };
  for (IsaLevel level : levels) {
    for (const auto& [ft, r16] : kLayouts) {
      for (const Shape s :
           {Shape{16, 256, 1, false}, Shape{48, 1024, 1, false}, Shape{64, 768, 5, false},
            Shape{32, 512, 2, true}, Shape{48, 512, 13, true}}) {
        SCOPED_TRACE(std::string(cpu::isa_name(level)) + " " + std::string(dtype_name(r16)) +
                     " out=" + std::to_string(s.n_out) + " in=" + std::to_string(s.n_in) +
                     " tokens=" + std::to_string(s.n_tok));
        const Pair p = make_pair(ft, r16, s.n_out, s.n_in, 7 + static_cast<uint32_t>(s.n_in));
        auto x = random_floats(s.n_tok * s.n_in, 3);
        std::vector<uint8_t> q(*dtype_row_bytes(act_type(ft), s.n_in));
        for (int64_t t = 0; t < s.n_tok; ++t) {
          quantize_row(act_type(ft), &x[t * s.n_in], q.data(), s.n_in);
          dequantize_row(act_type(ft), q.data(), &x[t * s.n_in], s.n_in);
        }
        const auto y0 = random_floats(s.n_tok * s.n_out, 5);
        std::vector<float> y_ref = y0, y = y0;
        MatmulArgs a = product(p.rows.data(), ft, s.n_out, s.n_in, x.data(), s.n_tok, y_ref.data());
        a.accumulate = s.accumulate;
        ASSERT_TRUE(ref::matmul(a));
        a.w = p.r16.data();
        a.w_type = r16;
        a.y = y.data();
        ASSERT_TRUE(cpu::matmul_at(level, a, &pool));
        std::vector<float> wr(s.n_in);
        for (int64_t i = 0; i < s.n_tok * s.n_out; ++i) {
          const int64_t o = i % s.n_out, t = i / s.n_out;
          dequantize_row(ft, p.rows.data() + o * *dtype_row_bytes(ft, s.n_in), wr.data(), s.n_in);
          double abs_dot = 0;
          for (int64_t k = 0; k < s.n_in; ++k) abs_dot += std::fabs(wr[k] * x[t * s.n_in + k]);
          ASSERT_NEAR(y[i], y_ref[i], 2e-6 * abs_dot + 1e-5) << "t=" << t << " o=" << o;
        }
        // The reference on the interleaved matrix (it rearranges a copy back) agrees too.
        std::vector<float> y_ref16 = y0;
        a.y = y_ref16.data();
        ASSERT_TRUE(ref::matmul(a));
        EXPECT_EQ(y_ref, y_ref16);
      }
    }
  }
}

// The same bits for any thread count, any token grouping (a token alone or in a prefill: 15
// tokens run as tiles of 8, 4, 2 and 1 where a kernel has them), and any row range (ranges
// starting or ending inside a group write only their rows).
TEST(Repack, R16ResultsDoNotDependOnSplits) {
  const auto levels = r16_levels();
  if (levels.empty()) GTEST_SKIP() << kNoKernel;
  ThreadPool p1(1), p3(3);
  const int64_t n_out = 208, n_in = 512, n_tok = 15;
  const auto x = random_floats(n_tok * n_in, 12);
  for (IsaLevel level : levels) {
    for (const auto& [ft, r16] : kLayouts) {
      SCOPED_TRACE(std::string(cpu::isa_name(level)) + " " + std::string(dtype_name(r16)));
      const Pair p = make_pair(ft, r16, n_out, n_in, 11);
      std::vector<float> all(n_tok * n_out), threads3(all.size()), one(all.size());
      MatmulArgs a = product(p.r16.data(), r16, n_out, n_in, x.data(), n_tok, all.data());
      ASSERT_TRUE(cpu::matmul_at(level, a, &p1));
      a.y = threads3.data();
      ASSERT_TRUE(cpu::matmul_at(level, a, &p3));
      EXPECT_EQ(all, threads3);
      a.n_tokens = 1;
      for (int64_t t = 0; t < n_tok; ++t) {
        a.x = x.data() + t * n_in;
        a.y = one.data() + t * n_out;
        ASSERT_TRUE(cpu::matmul_at(level, a, &p3));  // decode: per-thread shares
      }
      EXPECT_EQ(all, one);

      // Row ranges through the kernel itself, on quantized activations.
      const cpu::RowsKernel k = cpu::rows_kernel_at(level, r16);
      ASSERT_EQ(k.act, act_type(ft) == DType::Q8_0 ? cpu::ActFormat::kQ8_0 : cpu::ActFormat::kQ8_K);
      std::vector<uint8_t> xq(*dtype_row_bytes(act_type(ft), n_in) * n_tok);
      for (int64_t t = 0; t < n_tok; ++t) {
        quantize_row(act_type(ft), x.data() + t * n_in, xq.data() + t * xq.size() / n_tok, n_in);
      }
      cpu::RowsArgs r;
      r.w = p.r16.data();
      r.w_row_bytes = *dtype_row_bytes(ft, n_in);
      r.n_in = n_in;
      r.xa = xq.data();
      r.xa_stride = xq.size() / n_tok;
      r.n_tokens = n_tok;
      r.y_stride = n_out;
      for (const auto& [o0, o1] :
           {std::pair<int64_t, int64_t>{5, 37}, {16, 17}, {200, 208}, {0, 3}}) {
        std::vector<float> y(all.size(), -7.0f);
        r.y = y.data();
        k.fn(r, o0, o1);
        for (int64_t t = 0; t < n_tok; ++t) {
          for (int64_t o = 0; o < n_out; ++o) {
            const float want = o >= o0 && o < o1 ? all[t * n_out + o] : -7.0f;
            ASSERT_EQ(y[t * n_out + o], want)
                << "range " << o0 << ".." << o1 << " t=" << t << " o=" << o;
          }
        }
      }
    }
  }
}

// MXFP4's E8M0 scales over a wide range (products stay finite), the subnormal 2^-128 and 2^-127 (e
// = 0, 1) included: the interleaved kernel unpacks 16 of them at once and must give what the
// reference gives.
TEST(Repack, Mxfp4R16TakesEveryScale) {
  const auto levels = r16_levels();
  if (levels.empty()) GTEST_SKIP() << kNoKernel;
  const int64_t n_out = 32, n_in = 256, nb = n_in / 32;
  Pair p = make_pair(DType::MXFP4, DType::MXFP4_R16, n_out, n_in, 21);
  const uint8_t es[] = {0, 1, 2, 3, 100, 127, 128, 140, 150, 160, 170};
  for (int64_t o = 0; o < n_out; ++o) {
    for (int64_t b = 0; b < nb; ++b)
      p.rows[static_cast<size_t>((o * nb + b) * 17)] = es[(o + b) % 11];
  }
  p.r16 = p.rows;
  ASSERT_TRUE(repack_rows(DType::MXFP4, DType::MXFP4_R16, p.r16.data(), n_out, n_in));
  auto x = random_floats(n_in, 4);
  std::vector<uint8_t> q(*dtype_row_bytes(DType::Q8_0, n_in));
  quantize_row(DType::Q8_0, x.data(), q.data(), n_in);
  dequantize_row(DType::Q8_0, q.data(), x.data(), n_in);
  std::vector<float> y_ref(n_out), y(n_out);
  MatmulArgs a = product(p.rows.data(), DType::MXFP4, n_out, n_in, x.data(), 1, y_ref.data());
  ASSERT_TRUE(ref::matmul(a));
  ThreadPool pool(1);
  for (IsaLevel level : levels) {
    a.w = p.r16.data();
    a.w_type = DType::MXFP4_R16;
    a.y = y.data();
    ASSERT_TRUE(cpu::matmul_at(level, a, &pool));
    for (int64_t o = 0; o < n_out; ++o) {
      ASSERT_NEAR(y[o], y_ref[o], 1e-5 * std::fabs(y_ref[o]) + 1e-30f)
          << cpu::isa_name(level) << " row " << o;
    }
  }
}

// Stacked experts rearranged as one matrix (each expert's rows a multiple of 16) give what the
// row-major experts give, in the fused MoE loops, for decode and prefill.
TEST(Repack, MoeWithR16ExpertsMatchesRowMajor) {
  const auto levels = r16_levels();
  if (levels.empty()) GTEST_SKIP() << kNoKernel;
  ThreadPool pool(2);
  const int64_t n_embd = 512, n_ff = 256, n_expert = 6, k = 2;
  for (const auto& [ft, r16] : kLayouts) {
    const Pair gate = make_pair(ft, r16, n_expert * n_ff, n_embd, 21);
    const Pair up = make_pair(ft, r16, n_expert * n_ff, n_embd, 22);
    const Pair down = make_pair(ft, r16, n_expert * n_embd, n_ff, 23);
    for (IsaLevel level : levels) {
      for (const int64_t n_tok : {1, 4}) {
        SCOPED_TRACE(std::string(cpu::isa_name(level)) + " " + std::string(dtype_name(r16)) +
                     " tokens=" + std::to_string(n_tok));
        const auto x = random_floats(n_tok * n_embd, 24);
        std::vector<int32_t> ids(n_tok * k);
        std::vector<float> wts(n_tok * k);
        for (int64_t i = 0; i < n_tok * k; ++i) {
          ids[i] = static_cast<int32_t>((i * 5 + i / k) % n_expert);
          wts[i] = 0.25f + 0.125f * static_cast<float>(i % 3);
        }
        for (int64_t t = 0; t < n_tok; ++t) {
          if (ids[t * k] == ids[t * k + 1]) ids[t * k + 1] = (ids[t * k + 1] + 1) % n_expert;
        }
        MoeFfnArgs a;
        a.x = x.data();
        a.n_tokens = n_tok;
        a.n_embd = n_embd;
        a.n_ff = n_ff;
        a.n_expert = n_expert;
        a.k = k;
        a.ids = ids.data();
        a.weights = wts.data();
        a.gate = gate.rows.data();
        a.up = up.rows.data();
        a.down = down.rows.data();
        a.gate_type = a.up_type = a.down_type = ft;
        std::vector<float> y_rows(n_tok * n_embd), y_r16(y_rows.size());
        a.y = y_rows.data();
        ASSERT_TRUE(cpu::moe_ffn_at(level, a, &pool));
        a.gate = gate.r16.data();
        a.up = up.r16.data();
        a.down = down.r16.data();
        a.gate_type = a.up_type = a.down_type = r16;
        a.y = y_r16.data();
        ASSERT_TRUE(cpu::moe_ffn_at(level, a, &pool));
        // Both quantize the same x; the SwiGLU outputs, rounded differently in the last bits,
        // can land on the other side of an 8-bit step when quantized for the down projection:
        // 1% of a token's RMS (a wrong nibble, scale or expert is off by ~100%).
        for (int64_t t = 0; t < n_tok; ++t) {
          double ss = 0;
          for (int64_t i = 0; i < n_embd; ++i)
            ss += y_rows[t * n_embd + i] * y_rows[t * n_embd + i];
          const double tol = 0.01 * std::sqrt(ss / n_embd);
          for (int64_t i = 0; i < n_embd; ++i) {
            ASSERT_NEAR(y_r16[t * n_embd + i], y_rows[t * n_embd + i], tol)
                << "t=" << t << " i=" << i;
          }
        }
        // A token's result is the same bits alone (decode) as inside the prefill group.
        if (n_tok > 1) {
          std::vector<float> y_one(n_embd);
          const MoeFfnArgs all = a;
          for (int64_t t = 0; t < n_tok; ++t) {
            a.x = all.x + t * n_embd;
            a.n_tokens = 1;
            a.ids = all.ids + t * k;
            a.weights = all.weights + t * k;
            a.y = y_one.data();
            ASSERT_TRUE(cpu::moe_ffn_at(level, a, &pool));
            EXPECT_EQ(0,
                      std::memcmp(y_one.data(), y_r16.data() + t * n_embd, n_embd * sizeof(float)))
                << "t=" << t;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace arc::kernels
