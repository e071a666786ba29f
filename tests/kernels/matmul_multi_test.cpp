// matmul_multi (Q, K, V of one activation in one loop) against separate matmul_at calls, which
// matmul_test checks against kernels/ref: every product must be bitwise what matmul gives it
// alone, at every level, for mixed weight formats, any thread count and decode or prefill sizes.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "arc/kernels/cpu_dispatch.h"
#include "arc/kernels/matmul.h"
#include "arc/thread_pool.h"
#include "kernels/kernel_test_util.h"

namespace arc::kernels {
namespace {

using testing::quantize_matrix;
using testing::QuantMatrix;
using testing::random_floats;

constexpr int64_t kIn = 512;

struct Product {
  DType type;
  int64_t n_out;
  QuantMatrix w;
};

std::vector<Product> make_products(const std::vector<std::pair<DType, int64_t>>& spec) {
  std::vector<Product> p;
  uint32_t seed = 70;
  for (const auto& [t, n_out] : spec) {
    p.push_back({t, n_out, quantize_matrix(t, random_floats(n_out * kIn, seed++), n_out, kIn, 3)});
  }
  return p;
}

void check(cpu::IsaLevel level, const std::vector<Product>& ps, int64_t n_tok, bool accumulate,
           Parallel* pool) {
  SCOPED_TRACE(std::string(cpu::isa_name(level)) + " tokens=" + std::to_string(n_tok) +
               " threads=" + std::to_string(pool ? pool->num_threads() : 1));
  const auto x = random_floats(n_tok * kIn, 80);
  std::vector<std::vector<float>> y_multi, y_one;
  std::vector<MatmulArgs> args;
  for (size_t m = 0; m < ps.size(); ++m) {
    y_multi.push_back(random_floats(n_tok * ps[m].n_out, 90 + m));  // accumulate onto this
    y_one.push_back(y_multi.back());
    MatmulArgs a;
    a.w = ps[m].w.data();
    a.w_type = ps[m].type;
    a.n_out = ps[m].n_out;
    a.n_in = kIn;
    a.x = x.data();
    a.n_tokens = n_tok;
    a.accumulate = accumulate;
    a.y = y_one[m].data();
    ASSERT_TRUE(cpu::matmul_at(level, a, pool));
    a.y = y_multi[m].data();
    args.push_back(a);
  }
  Workspace ws;
  ASSERT_TRUE(cpu::matmul_multi_at(level, args, pool, &ws));
  for (size_t m = 0; m < ps.size(); ++m) {
    EXPECT_EQ(0, std::memcmp(y_multi[m].data(), y_one[m].data(), y_one[m].size() * sizeof(float)))
        << "product " << m << " (" << dtype_name(ps[m].type) << ")";
  }
}

TEST(MatmulMulti, EqualsSeparateMatmuls) {
  // Q8_K activations (Q4_K, Q6_K), Q8_0 activations (Q8_0) and F32 activations (F32, F16) mixed;
  // row counts not multiples of the work-item size.
  const auto ps =
      make_products({{DType::Q4_K, 100}, {DType::Q6_K, 33}, {DType::Q8_0, 64}, {DType::F16, 7}});
  const auto f32 = make_products({{DType::F32, 50}, {DType::Q4_K, 1}});
  ThreadPool pool2(2), pool3(3);
  for (cpu::IsaLevel level : cpu::available_isas()) {
    for (int64_t n_tok : {1, 3, 9}) {  // 9: above the fusing limit, runs as separate matmuls
      check(level, ps, n_tok, false, &pool2);
      check(level, ps, n_tok, true, &pool3);
      check(level, f32, n_tok, false, nullptr);
    }
  }
}

TEST(MatmulMulti, RejectsUnsupportedType) {
  const auto ps = make_products({{DType::Q4_K, 8}});
  std::vector<float> x(kIn), y(8);
  MatmulArgs a;
  a.w = ps[0].w.data();
  a.w_type = DType::Q8_K;  // an activation format, not a weight format
  a.n_out = 8;
  a.n_in = kIn;
  a.x = x.data();
  a.y = y.data();
  Workspace ws;
  const MatmulArgs args[1] = {a};
  EXPECT_FALSE(matmul_multi(args, nullptr, &ws));
}

}  // namespace
}  // namespace arc::kernels
