// MoE routing and expert FFN against ref::moe_route / ref::moe_ffn.
// Routing: ids exact (random logits have no ties), weights 1e-5 absolute (F32 vs double).
// FFN: max |y - ref| <= 2e-2 * max |ref| (int8 activations on the decode path and F16 tensor-core
// inputs on the prefill path, each through three chained products); a wrong layout or expert
// mapping gives errors of order max |ref|.
#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <utility>

#include "arc/kernels/moe.h"
#include "arc/kernels/quant.h"
#include "cuda_test_util.h"

namespace arc::kernels::cuda::test {
namespace {

TEST_F(CudaTest, MoeRouteMatchesRef) {
  const int64_t n_tokens = 19;
  for (int64_t n_expert : {8, 60, 128, 257}) {
    for (RouterScoring scoring : {RouterScoring::kSoftmax, RouterScoring::kSigmoid}) {
      for (bool normalize : {true, false}) {
        const int64_t k = std::min<int64_t>(8, n_expert);
        const auto logits =
            random_floats(static_cast<size_t>(n_tokens * n_expert), 31, -4.0f, 4.0f);
        const auto bias = random_floats(static_cast<size_t>(n_expert), 32, -0.5f, 0.5f);
        RouterArgs a;
        a.logits = logits.data();
        a.n_tokens = n_tokens;
        a.n_expert = n_expert;
        a.k = k;
        a.scoring = scoring;
        a.bias = scoring == RouterScoring::kSigmoid ? bias.data() : nullptr;
        a.normalize = normalize;
        a.weight_scale = 2.5f;
        std::vector<int32_t> ids(static_cast<size_t>(n_tokens * k));
        std::vector<float> w(ids.size());
        a.ids = ids.data();
        a.weights = w.data();
        ref::moe_route(a);
        Dev<float> dl(logits), db(bias), dw(w.size());
        Dev<int32_t> di(ids.size());
        RouterArgs g = a;
        g.logits = dl.get();
        g.bias = a.bias ? db.get() : nullptr;
        g.ids = di.get();
        g.weights = dw.get();
        ASSERT_TRUE(moe_route(ctx_, g));
        sync();
        EXPECT_EQ(di.download(), ids) << "n_expert " << n_expert;
        EXPECT_LE(max_abs_diff(dw.download(), w), 1e-5) << "n_expert " << n_expert;
      }
    }
  }
}

// Expert parallelism: ids relative to the rank's first expert, -1 for the others' (the oracle's
// own range handling is checked against the whole routing in tests/kernels/moe_test.cpp).
TEST_F(CudaTest, MoeRouteExpertRangeMatchesRef) {
  const int64_t n_tokens = 19, n_expert = 128, k = 8;
  const auto logits = random_floats(static_cast<size_t>(n_tokens * n_expert), 33, -4.0f, 4.0f);
  const auto bias = random_floats(static_cast<size_t>(n_expert), 34, -0.5f, 0.5f);
  for (RouterScoring scoring : {RouterScoring::kSoftmax, RouterScoring::kSigmoid}) {
    for (auto [begin, count] : {std::pair<int64_t, int64_t>{0, 43}, {86, 42}}) {
      RouterArgs a;
      a.logits = logits.data();
      a.n_tokens = n_tokens;
      a.n_expert = n_expert;
      a.k = k;
      a.scoring = scoring;
      a.bias = scoring == RouterScoring::kSigmoid ? bias.data() : nullptr;
      a.n_group = 8;
      a.n_group_used = 4;
      a.expert_begin = begin;
      a.n_local = count;
      std::vector<int32_t> ids(static_cast<size_t>(n_tokens * k));
      std::vector<float> w(ids.size());
      a.ids = ids.data();
      a.weights = w.data();
      ref::moe_route(a);
      EXPECT_NE(std::count(ids.begin(), ids.end(), -1), 0);  // some experts are elsewhere
      Dev<float> dl(logits), db(bias), dw(w.size());
      Dev<int32_t> di(ids.size());
      RouterArgs g = a;
      g.logits = dl.get();
      g.bias = a.bias ? db.get() : nullptr;
      g.ids = di.get();
      g.weights = dw.get();
      ASSERT_TRUE(moe_route(ctx_, g));
      sync();
      EXPECT_EQ(di.download(), ids) << "range " << begin;
      EXPECT_LE(max_abs_diff(dw.download(), w), 1e-5);
    }
  }
}

struct FfnCase {
  DType gate, up, down;
  int64_t n_embd, n_ff;
};

class MoeFfnCuda : public CudaTest,
                   public ::testing::WithParamInterface<std::tuple<int, int64_t>> {};

std::vector<FfnCase> ffn_cases() {
  return {{DType::Q4_K, DType::Q4_K, DType::Q6_K, 512, 256},
          {DType::Q8_0, DType::Q8_0, DType::Q8_0, 96, 160},
          {DType::MXFP4, DType::MXFP4, DType::Q5_K, 256, 256},
          {DType::F16, DType::BF16, DType::F32, 72, 40},
          {DType::Q4_0, DType::Q4_0, DType::F16, 128, 96}};
}

std::vector<uint8_t> quantized_experts(DType t, int64_t n_expert, int64_t rows, int64_t cols,
                                       uint32_t seed) {
  const size_t rb = *dtype_row_bytes(t, static_cast<uint64_t>(cols));
  const auto f = random_floats(static_cast<size_t>(n_expert * rows * cols), seed, -0.5f, 0.5f);
  std::vector<uint8_t> out(rb * rows * n_expert);
  for (int64_t r = 0; r < n_expert * rows; ++r)
    EXPECT_TRUE(quantize_row(t, f.data() + r * cols, out.data() + r * rb, cols));
  return out;
}

TEST_P(MoeFfnCuda, MatchesRef) {
  const auto [case_index, n_tokens] = GetParam();
  const FfnCase c = ffn_cases()[static_cast<size_t>(case_index)];
  const int64_t n_expert = 16, k = 4;
  const auto gate = quantized_experts(c.gate, n_expert, c.n_ff, c.n_embd, 41);
  const auto up = quantized_experts(c.up, n_expert, c.n_ff, c.n_embd, 42);
  const auto down = quantized_experts(c.down, n_expert, c.n_embd, c.n_ff, 43);
  const auto x = random_floats(static_cast<size_t>(n_tokens * c.n_embd), 44, -2.0f, 2.0f);
  // Distinct experts per token; expert 3 takes many tokens (several 64-row tiles at prefill).
  std::vector<int32_t> ids(static_cast<size_t>(n_tokens * k));
  std::mt19937 rng(45);
  for (int64_t t = 0; t < n_tokens; ++t) {
    std::vector<int32_t> e(static_cast<size_t>(n_expert));
    std::iota(e.begin(), e.end(), 0);
    std::shuffle(e.begin(), e.end(), rng);
    if (std::find(e.begin(), e.begin() + k, 3) == e.begin() + k) e[0] = 3;
    std::copy(e.begin(), e.begin() + k, ids.begin() + t * k);
  }
  const auto weights = random_floats(ids.size(), 46, 0.0f, 1.0f);
  // gpt-oss: biases on every projection and the clamped SwiGLU (a low limit: many values
  // clamped), on the MXFP4 and Q8_0 cases, decode and prefill.
  const auto gate_b = random_floats(static_cast<size_t>(n_expert * c.n_ff), 48, -1.5f, 1.5f);
  const auto up_b = random_floats(static_cast<size_t>(n_expert * c.n_ff), 49, -1.5f, 1.5f);
  const auto down_b = random_floats(static_cast<size_t>(n_expert * c.n_embd), 50, -0.5f, 0.5f);
  const bool oai_case = c.gate == DType::MXFP4 || c.gate == DType::Q8_0;
  // Expert parallelism: the same pairs with every third id -1 (an expert another rank holds),
  // which must add nothing; decode and prefill.
  std::vector<int32_t> ep_ids = ids;
  for (size_t i = 0; i < ep_ids.size(); i += 3) ep_ids[i] = -1;
  for (int mode = 0; mode < (oai_case ? 4 : 3); ++mode) {
    const bool accumulate = mode >= 1, oai = mode == 3, ep = mode == 2;
    const auto y0 = random_floats(static_cast<size_t>(n_tokens * c.n_embd), 47);
    std::vector<float> ref = y0;
    MoeFfnArgs a;
    a.x = x.data();
    a.n_tokens = n_tokens;
    a.n_embd = c.n_embd;
    a.n_ff = c.n_ff;
    a.n_expert = n_expert;
    a.k = k;
    a.ids = ep ? ep_ids.data() : ids.data();
    a.weights = weights.data();
    a.gate = gate.data();
    a.up = up.data();
    a.down = down.data();
    a.gate_type = c.gate;
    a.up_type = c.up;
    a.down_type = c.down;
    a.y = ref.data();
    a.accumulate = accumulate;
    if (oai) {
      a.gate_bias = gate_b.data();
      a.up_bias = up_b.data();
      a.down_bias = down_b.data();
      a.act = MoeActivation::kSwiGluOai;
      a.limit = 1.0f;
    }
    ASSERT_TRUE(ref::moe_ffn(a));
    Dev<float> dx(x), dwt(weights), dy(y0), dgb(gate_b), dub(up_b), ddb(down_b);
    Dev<int32_t> di(ep ? ep_ids : ids);
    Dev<uint8_t> dg(gate), du(up), dd(down);
    MoeFfnArgs g = a;
    g.x = dx.get();
    g.ids = di.get();
    g.weights = dwt.get();
    g.gate = dg.get();
    g.up = du.get();
    g.down = dd.get();
    g.y = dy.get();
    if (oai) {
      g.gate_bias = dgb.get();
      g.up_bias = dub.get();
      g.down_bias = ddb.get();
    }
    ASSERT_TRUE(moe_ffn(ctx_, g));
    sync();
    EXPECT_LE(max_abs_diff(dy.download(), ref), 2e-2 * max_abs(ref))
        << dtype_name(c.gate) << "/" << dtype_name(c.down) << " tokens " << n_tokens
        << (oai ? " biases, clamped SwiGLU" : "") << (ep ? " other ranks' experts" : "");
  }
}

INSTANTIATE_TEST_SUITE_P(
    Formats, MoeFfnCuda,
    ::testing::Combine(::testing::Range(0, static_cast<int>(ffn_cases().size())),
                       ::testing::Values<int64_t>(1, 5, 8, 41, 150)),
    [](const auto& info) {
      const FfnCase c = ffn_cases()[static_cast<size_t>(std::get<0>(info.param))];
      return std::string(dtype_name(c.gate)) + "_" + std::string(dtype_name(c.down)) + "_t" +
             std::to_string(std::get<1>(info.param));
    });

}  // namespace
}  // namespace arc::kernels::cuda::test
