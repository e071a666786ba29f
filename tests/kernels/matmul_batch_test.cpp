// matmul_batch (independent products, each of its own activations, in one loop: MLA's per-head
// k_b / v_b) against separate matmul_at calls, which matmul_test checks against kernels/ref:
// every product must be bitwise what matmul gives it alone, at every level, for per-head strided
// inputs and outputs as the MLA block lays them out, mixed formats, any thread count, decode and
// prefill sizes.
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

struct Heads {
  DType type;
  int64_t n_head, n_in, n_out;
  std::vector<QuantMatrix> w;  // one matrix per head
};

Heads make_heads(DType t, int64_t n_head, int64_t n_in, int64_t n_out, uint32_t seed) {
  Heads h{t, n_head, n_in, n_out, {}};
  for (int64_t i = 0; i < n_head; ++i) {
    h.w.push_back(quantize_matrix(t, random_floats(n_out * n_in, seed + i), n_out, n_in, 3));
  }
  return h;
}

// y[t, h, :] = w[h] x[t, h, :] with x rows [n_tokens, n_head, n_in] (plus `pad` floats per token
// row, as q's rope parts sit between the heads' inputs) and y [n_tokens, n_head, n_out].
void check(cpu::IsaLevel level, const Heads& hs, int64_t n_tok, bool accumulate, int64_t pad,
           Parallel* pool) {
  SCOPED_TRACE(std::string(cpu::isa_name(level)) + " " + std::string(dtype_name(hs.type)) +
               " tokens=" + std::to_string(n_tok) +
               " threads=" + std::to_string(pool ? pool->num_threads() : 1));
  const int64_t x_head = hs.n_in + pad, x_stride = hs.n_head * x_head;
  const auto x = random_floats(n_tok * x_stride, 81);
  std::vector<float> y_batch = random_floats(n_tok * hs.n_head * hs.n_out, 91);  // accumulated
  std::vector<float> y_one = y_batch;
  std::vector<MatmulArgs> args;
  for (int64_t h = 0; h < hs.n_head; ++h) {
    MatmulArgs a;
    a.w = hs.w[h].data();
    a.w_type = hs.type;
    a.n_in = hs.n_in;
    a.n_out = hs.n_out;
    a.x = x.data() + h * x_head;
    a.x_stride = x_stride;
    a.n_tokens = n_tok;
    a.y_stride = hs.n_head * hs.n_out;
    a.accumulate = accumulate;
    a.y = y_one.data() + h * hs.n_out;
    ASSERT_TRUE(cpu::matmul_at(level, a, pool));
    a.y = y_batch.data() + h * hs.n_out;
    args.push_back(a);
  }
  Workspace ws;
  ASSERT_TRUE(cpu::matmul_batch_at(level, args, pool, &ws));
  EXPECT_EQ(0, std::memcmp(y_batch.data(), y_one.data(), y_one.size() * sizeof(float)));
}

TEST(MatmulBatch, EqualsSeparateMatmuls) {
  // k_b-like (Q8_0, 64 -> 96 per head), v_b-like (Q4_K, 256 -> 40: rows not a multiple of the
  // work item), F32 and F16 (F32 activations); 5 heads.
  const std::vector<Heads> cases = {
      make_heads(DType::Q8_0, 5, 64, 96, 10), make_heads(DType::Q4_K, 5, 256, 40, 20),
      make_heads(DType::F32, 5, 24, 33, 30), make_heads(DType::F16, 3, 32, 8, 40)};
  ThreadPool pool2(2), pool3(3);
  for (cpu::IsaLevel level : cpu::available_isas()) {
    for (const Heads& hs : cases) {
      for (int64_t n_tok : {1, 3, 9}) {  // 9: above the fusing limit, separate matmuls
        check(level, hs, n_tok, false, 16, &pool2);
        check(level, hs, n_tok, true, 0, &pool3);
        check(level, hs, n_tok, false, 8, nullptr);
      }
    }
  }
}

TEST(MatmulBatch, RejectsUnsupportedType) {
  const Heads hs = make_heads(DType::Q4_K, 2, 256, 8, 50);
  std::vector<float> x(512), y(16);
  std::vector<MatmulArgs> args(2);
  for (int h = 0; h < 2; ++h) {
    args[h].w = hs.w[h].data();
    args[h].w_type = h == 0 ? DType::Q4_K : DType::Q8_K;  // an activation format
    args[h].n_in = 256;
    args[h].n_out = 8;
    args[h].x = x.data() + h * 256;
    args[h].y = y.data() + h * 8;
  }
  Workspace ws;
  EXPECT_FALSE(matmul_batch(args, nullptr, &ws));
}

}  // namespace
}  // namespace arc::kernels
