// MoE routing and expert FFNs against kernels/ref, at every dispatch level, with quantized experts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "arc/kernels/cpu_dispatch.h"
#include "arc/kernels/matmul.h"
#include "arc/kernels/moe.h"
#include "arc/kernels/ops.h"
#include "arc/thread_pool.h"
#include "kernels/kernel_test_util.h"

namespace arc::kernels {
namespace {

using testing::random_floats;

TEST(MoeRoute, SoftmaxTopKHandComputed) {
  // Logits ln(1), ln(2), ln(3), ln(4): softmax = 0.1, 0.2, 0.3, 0.4. Top-2: experts 3, 2 with
  // weights 0.4 and 0.3, renormalised to 4/7 and 3/7, then scaled by 2.
  const float logits[4] = {0.0f, std::log(2.0f), std::log(3.0f), std::log(4.0f)};
  int32_t ids[2];
  float w[2];
  RouterArgs a;
  a.logits = logits;
  a.n_tokens = 1;
  a.n_expert = 4;
  a.k = 2;
  a.ids = ids;
  a.weights = w;
  a.weight_scale = 2.0f;
  moe_route(a);
  EXPECT_EQ(ids[0], 3);
  EXPECT_EQ(ids[1], 2);
  EXPECT_NEAR(w[0], 8.0f / 7, 1e-6);
  EXPECT_NEAR(w[1], 6.0f / 7, 1e-6);
  a.normalize = false;
  a.weight_scale = 1.0f;
  moe_route(a);
  EXPECT_NEAR(w[0], 0.4f, 1e-6);
  EXPECT_NEAR(w[1], 0.3f, 1e-6);
}

TEST(MoeRoute, SigmoidBiasSelectsButDoesNotWeigh) {
  // Sigmoid(0) = 0.5, sigmoid(ln 3) = 0.75. The bias lifts expert 0 above expert 1 for selection,
  // but the weight stays the unbiased sigmoid score.
  const float logits[3] = {0.0f, std::log(3.0f), -5.0f};
  const float bias[3] = {0.5f, 0.0f, 0.0f};
  int32_t ids[2];
  float w[2];
  RouterArgs a;
  a.logits = logits;
  a.n_tokens = 1;
  a.n_expert = 3;
  a.k = 2;
  a.scoring = RouterScoring::kSigmoid;
  a.bias = bias;
  a.normalize = false;
  a.ids = ids;
  a.weights = w;
  moe_route(a);
  EXPECT_EQ(ids[0], 0);
  EXPECT_EQ(ids[1], 1);
  EXPECT_NEAR(w[0], 0.5f, 1e-6);
  EXPECT_NEAR(w[1], 0.75f, 1e-6);
  a.normalize = true;
  moe_route(a);
  EXPECT_NEAR(w[0] + w[1], 1.0f, 1e-6);
  EXPECT_NEAR(w[0], 0.4f, 1e-6);
}

TEST(MoeRoute, MatchesReferenceOnRandomLogits) {
  const int64_t n_tok = 13, n_exp = 64, k = 6;
  const auto logits = random_floats(n_tok * n_exp, 21, 2.0f);
  const auto bias = random_floats(n_exp, 22, 0.1f);
  for (RouterScoring s : {RouterScoring::kSoftmax, RouterScoring::kSigmoid}) {
    std::vector<int32_t> ids(n_tok * k), ids_ref(ids.size());
    std::vector<float> w(ids.size()), w_ref(ids.size());
    RouterArgs a;
    a.logits = logits.data();
    a.n_tokens = n_tok;
    a.n_expert = n_exp;
    a.k = k;
    a.scoring = s;
    a.bias = s == RouterScoring::kSigmoid ? bias.data() : nullptr;
    a.weight_scale = 2.5f;
    a.ids = ids.data();
    a.weights = w.data();
    moe_route(a);
    a.ids = ids_ref.data();
    a.weights = w_ref.data();
    ref::moe_route(a);
    EXPECT_EQ(ids, ids_ref);
    for (size_t i = 0; i < w.size(); ++i) EXPECT_NEAR(w[i], w_ref[i], 1e-5);
  }
}

struct Experts {
  std::vector<uint8_t> gate, up, down;
};

Experts make_experts(DType gt, DType dt, int64_t n_exp, int64_t n_embd, int64_t n_ff) {
  Experts e;
  const auto g = random_floats(n_exp * n_ff * n_embd, 31, 0.1f);
  const auto u = random_floats(n_exp * n_ff * n_embd, 32, 0.1f);
  const auto d = random_floats(n_exp * n_embd * n_ff, 33, 0.1f);
  e.gate = testing::quantize_matrix(gt, g, n_exp * n_ff, n_embd, 0).storage;
  e.up = testing::quantize_matrix(gt, u, n_exp * n_ff, n_embd, 0).storage;
  e.down = testing::quantize_matrix(dt, d, n_exp * n_embd, n_ff, 0).storage;
  return e;
}

constexpr int64_t kExperts = 8, kEmbd = 256, kFf = 256;

// Routing of n_tok random tokens over kExperts experts, k per token (router logits from `seed`).
struct Routing {
  std::vector<int32_t> ids;  // [n_tok, k]
  std::vector<float> w;      // [n_tok, k]
};

Routing route_random(int64_t n_tok, int64_t k, uint32_t seed,
                     RouterScoring scoring = RouterScoring::kSoftmax) {
  const auto logits = random_floats(n_tok * kExperts, seed);
  Routing rt{std::vector<int32_t>(n_tok * k), std::vector<float>(n_tok * k)};
  RouterArgs r;
  r.logits = logits.data();
  r.n_tokens = n_tok;
  r.n_expert = kExperts;
  r.k = k;
  r.scoring = scoring;
  r.ids = rt.ids.data();
  r.weights = rt.w.data();
  moe_route(r);
  return rt;
}

// The experts' part of the arguments: shapes, matrices and their types (no tokens yet).
MoeFfnArgs expert_args(const Experts& ex, DType gate_up, DType down, int64_t k) {
  MoeFfnArgs a;
  a.n_embd = kEmbd;
  a.n_ff = kFf;
  a.n_expert = kExperts;
  a.k = k;
  a.gate = ex.gate.data();
  a.up = ex.up.data();
  a.down = ex.down.data();
  a.gate_type = a.up_type = gate_up;
  a.down_type = down;
  return a;
}

// gpt_oss: per-expert biases on all three projections and the clamped SwiGLU, with a limit low
// enough that many values are clamped.
void check_ffn(cpu::IsaLevel level, const Experts& ex, DType gt, DType dt, int64_t n_tok,
               RouterScoring scoring, Parallel* pool, bool gpt_oss = false) {
  SCOPED_TRACE(std::string(cpu::isa_name(level)) + " " + std::string(dtype_name(gt)) + "/" +
               std::string(dtype_name(dt)) + " tokens=" + std::to_string(n_tok) +
               (gpt_oss ? " biases, clamped SwiGLU" : ""));
  const int64_t n_embd = kEmbd, k = 2;
  const auto x = random_floats(n_tok * n_embd, 41);
  const Routing rt = route_random(n_tok, k, 42, scoring);
  const std::vector<int32_t>& ids = rt.ids;
  const std::vector<float>& w = rt.w;

  MoeFfnArgs a = expert_args(ex, gt, dt, k);
  a.x = x.data();
  a.n_tokens = n_tok;
  a.ids = ids.data();
  a.weights = w.data();
  a.accumulate = true;
  const auto gb = random_floats(kExperts * kFf, 44, 1.5f);
  const auto ub = random_floats(kExperts * kFf, 45, 1.5f);
  const auto db = random_floats(kExperts * n_embd, 46, 0.5f);
  if (gpt_oss) {
    a.gate_bias = gb.data();
    a.up_bias = ub.data();
    a.down_bias = db.data();
    a.act = MoeActivation::kSwiGluOai;
    a.limit = 1.0f;
  }
  std::vector<float> y = random_floats(n_tok * n_embd, 43), y_ref = y;
  a.y = y_ref.data();
  ASSERT_TRUE(ref::moe_ffn(a));
  a.y = y.data();
  ASSERT_TRUE(cpu::moe_ffn_at(level, a, pool));
  // SIMD levels quantize activations to 8 bits twice (x, then the SwiGLU output). The SwiGLU
  // output is heavy-tailed (a product of Gaussians), so a Q8_K block's step is large next to its
  // typical value: a few % of the row's RMS per output, up to ~4 sigma over 256 x 11 values, so
  // 15% of the RMS; a wrong expert, weight or scale is off by ~100%. The matmul kernels are
  // checked tightly in matmul_test, and PrefillGroupingEqualsPerTokenDecode below checks the
  // grouping exactly. The scalar level keeps F32 activations: 1e-4 of the RMS.
  const bool quantized = level != cpu::IsaLevel::kScalar && gt != DType::F16;
  const double rel = quantized ? 0.15 : 1e-4;
  for (int64_t t = 0; t < n_tok; ++t) {
    double ss = 0;
    for (int64_t i = 0; i < n_embd; ++i) ss += y_ref[t * n_embd + i] * y_ref[t * n_embd + i];
    const double tol = rel * std::sqrt(ss / n_embd) + 1e-5;
    for (int64_t i = 0; i < n_embd; ++i) {
      ASSERT_NEAR(y[t * n_embd + i], y_ref[t * n_embd + i], tol) << "t=" << t << " i=" << i;
    }
  }
}

TEST(MoeFfn, EveryLevelMatchesReference) {
  ThreadPool pool(2);
  const Experts kq = make_experts(DType::Q4_K, DType::Q6_K, kExperts, kEmbd, kFf);
  const Experts mx = make_experts(DType::MXFP4, DType::Q8_0, kExperts, kEmbd, kFf);
  const Experts fl = make_experts(DType::F16, DType::F32, kExperts, kEmbd, kFf);
  for (cpu::IsaLevel level : cpu::available_isas()) {
    check_ffn(level, kq, DType::Q4_K, DType::Q6_K, 1, RouterScoring::kSoftmax, &pool);
    check_ffn(level, kq, DType::Q4_K, DType::Q6_K, 11, RouterScoring::kSigmoid, &pool);
    check_ffn(level, mx, DType::MXFP4, DType::Q8_0, 5, RouterScoring::kSoftmax, nullptr);
    check_ffn(level, fl, DType::F16, DType::F32, 3, RouterScoring::kSoftmax, &pool);
    check_ffn(level, mx, DType::MXFP4, DType::Q8_0, 1, RouterScoring::kSoftmax, &pool, true);
    check_ffn(level, mx, DType::MXFP4, DType::Q8_0, 6, RouterScoring::kSoftmax, &pool, true);
    check_ffn(level, fl, DType::F16, DType::F32, 4, RouterScoring::kSoftmax, &pool, true);
  }
}

// Grouping tokens by expert (prefill) must give each token exactly what running it alone (decode)
// gives: the kernels compute each token's dot products with the same operations in the same order
// whatever the group, and experts are added in the same order.
TEST(MoeFfn, PrefillGroupingEqualsPerTokenDecode) {
  ThreadPool pool(2);
  const Experts ex = make_experts(DType::Q4_K, DType::Q6_K, kExperts, kEmbd, kFf);
  const int64_t n_tok = 9, k = 3;
  const auto x = random_floats(n_tok * kEmbd, 51);
  const Routing rt = route_random(n_tok, k, 52);
  const std::vector<int32_t>& ids = rt.ids;
  const std::vector<float>& w = rt.w;
  for (cpu::IsaLevel level : cpu::available_isas()) {
    MoeFfnArgs a = expert_args(ex, DType::Q4_K, DType::Q6_K, k);
    std::vector<float> y_all(n_tok * kEmbd), y_one(n_tok * kEmbd);
    a.x = x.data();
    a.n_tokens = n_tok;
    a.ids = ids.data();
    a.weights = w.data();
    a.y = y_all.data();
    ASSERT_TRUE(cpu::moe_ffn_at(level, a, &pool));
    for (int64_t t = 0; t < n_tok; ++t) {
      a.x = x.data() + t * kEmbd;
      a.n_tokens = 1;
      a.ids = ids.data() + t * k;
      a.weights = w.data() + t * k;
      a.y = y_one.data() + t * kEmbd;
      ASSERT_TRUE(cpu::moe_ffn_at(level, a, nullptr));
    }
    EXPECT_EQ(0, std::memcmp(y_all.data(), y_one.data(), y_all.size() * sizeof(float)))
        << cpu::isa_name(level);
  }
}

// The fused expert loops (SwiGLU and the down kernel's activation quantization inside the gate/up
// loop, the latter done by whichever thread finishes a block last) against the unfused path run
// op by op: per token and selected expert, matmul gate and up, ops swiglu, matmul down (which
// quantizes the whole SwiGLU row itself), added in ascending expert id. Bit for bit, at every
// level, for any thread count, for a prefill and for each token decoded alone.
TEST(MoeFfn, FusedLoopsEqualOpByOpComposition) {
  constexpr int64_t n_tok = 5, k = 3;
  struct Case {
    DType gt, dt;
  };
  for (const Case& c : {Case{DType::Q4_K, DType::Q6_K}, Case{DType::MXFP4, DType::Q8_0},
                        Case{DType::Q8_0, DType::Q4_K}}) {
    const Experts ex = make_experts(c.gt, c.dt, kExperts, kEmbd, kFf);
    const auto x = random_floats(n_tok * kEmbd, 61);
    const Routing rt = route_random(n_tok, k, 62);
    const std::vector<int32_t>& ids = rt.ids;
    const std::vector<float>& w = rt.w;
    const size_t g_bytes = *dtype_row_bytes(c.gt, kEmbd) * kFf;
    const size_t d_bytes = *dtype_row_bytes(c.dt, kFf) * kEmbd;
    for (cpu::IsaLevel level : cpu::available_isas()) {
      SCOPED_TRACE(std::string(cpu::isa_name(level)) + " " + std::string(dtype_name(c.gt)) + "/" +
                   std::string(dtype_name(c.dt)));
      std::vector<float> want(n_tok * kEmbd, 0.0f), gate(kFf), up(kFf), out(kEmbd);
      for (int64_t t = 0; t < n_tok; ++t) {
        std::vector<int64_t> order(k);
        for (int64_t j = 0; j < k; ++j) order[j] = j;
        std::sort(order.begin(), order.end(),
                  [&](int64_t p, int64_t q) { return ids[t * k + p] < ids[t * k + q]; });
        for (int64_t j : order) {
          const int32_t e = ids[t * k + j];
          MatmulArgs m;
          m.w_type = c.gt;
          m.n_in = kEmbd;
          m.n_out = kFf;
          m.x = x.data() + t * kEmbd;
          m.w = ex.gate.data() + e * g_bytes;
          m.y = gate.data();
          ASSERT_TRUE(cpu::matmul_at(level, m, nullptr));
          m.w = ex.up.data() + e * g_bytes;
          m.y = up.data();
          ASSERT_TRUE(cpu::matmul_at(level, m, nullptr));
          swiglu(gate.data(), up.data(), gate.data(), kFf);
          m.w_type = c.dt;
          m.n_in = kFf;
          m.n_out = kEmbd;
          m.x = gate.data();
          m.w = ex.down.data() + e * d_bytes;
          m.y = out.data();
          ASSERT_TRUE(cpu::matmul_at(level, m, nullptr));
          for (int64_t i = 0; i < kEmbd; ++i) want[t * kEmbd + i] += w[t * k + j] * out[i];
        }
      }
      for (int threads : {1, 2, 3}) {
        ThreadPool pool(threads);
        MoeFfnArgs a = expert_args(ex, c.gt, c.dt, k);
        a.x = x.data();
        a.n_tokens = n_tok;
        a.ids = ids.data();
        a.weights = w.data();
        std::vector<float> y(n_tok * kEmbd, 1.0f);  // overwritten (accumulate is false)
        a.y = y.data();
        ASSERT_TRUE(cpu::moe_ffn_at(level, a, &pool));
        for (int64_t i = 0; i < n_tok * kEmbd; ++i) {
          ASSERT_EQ(y[i], want[i]) << "threads " << threads << " value " << i;
        }
        // Each token alone (decode: the experts run as per-thread shares).
        for (int64_t t = 0; t < n_tok; ++t) {
          std::vector<float> y1(kEmbd, 1.0f);
          a.x = x.data() + t * kEmbd;
          a.n_tokens = 1;
          a.ids = ids.data() + t * k;
          a.weights = w.data() + t * k;
          a.y = y1.data();
          ASSERT_TRUE(cpu::moe_ffn_at(level, a, &pool));
          for (int64_t i = 0; i < kEmbd; ++i) {
            ASSERT_EQ(y1[i], want[t * kEmbd + i])
                << "decode, threads " << threads << " token " << t << " value " << i;
          }
        }
      }
    }
  }
}

// A decode token's experts run gate/up then down in one loop, where an expert's down rows wait
// for its activations, which other threads may still be computing. Four threads on this
// machine's two cores are descheduled at random, so shares are stolen mid-expert and waits
// happen; every repeat must equal the one-thread result bit for bit (a down row that read an
// unfinished activation would not).
TEST(MoeFfn, DecodeDownRowsWaitForTheirExpertsActivations) {
  constexpr int64_t k = 8;
  const Experts ex = make_experts(DType::Q4_K, DType::Q6_K, kExperts, kEmbd, kFf);
  for (cpu::IsaLevel level : cpu::available_isas()) {
    SCOPED_TRACE(cpu::isa_name(level));
    MoeFfnArgs a = expert_args(ex, DType::Q4_K, DType::Q6_K, k);
    a.n_tokens = 1;
    ThreadPool one(1), four(4);
    for (uint32_t rep = 0; rep < 40; ++rep) {
      const auto x = random_floats(kEmbd, 70 + rep);
      const Routing rt = route_random(1, k, 90 + rep);
      a.x = x.data();
      a.ids = rt.ids.data();
      a.weights = rt.w.data();
      std::vector<float> want(kEmbd), got(kEmbd);
      a.y = want.data();
      ASSERT_TRUE(cpu::moe_ffn_at(level, a, &one));
      a.y = got.data();
      ASSERT_TRUE(cpu::moe_ffn_at(level, a, &four));
      ASSERT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * sizeof(float)))
          << "repeat " << rep;
    }
  }
}

// Ids outside [0, n_expert) are experts another rank holds (expert parallelism): they add
// nothing and no weights are read (null matrices here), on both the kernel and the oracle.
TEST(MoeFfn, SkipsIdsOutsideItsExperts) {
  const int64_t n_embd = 32, n_ff = 32;
  std::vector<float> x(n_embd, 1.0f);
  const int32_t ids[2] = {2, -1};
  const float w[2] = {1.0f, 0.5f};
  MoeFfnArgs a;
  a.x = x.data();
  a.n_tokens = 1;
  a.n_embd = n_embd;
  a.n_ff = n_ff;
  a.n_expert = 2;
  a.k = 2;
  a.ids = ids;
  a.weights = w;
  for (bool accumulate : {false, true}) {
    std::vector<float> y(n_embd, 7.0f), y_ref = y;
    a.accumulate = accumulate;
    a.y = y.data();
    EXPECT_TRUE(moe_ffn(a, nullptr));
    a.y = y_ref.data();
    EXPECT_TRUE(ref::moe_ffn(a));
    const float expect = accumulate ? 7.0f : 0.0f;
    for (int64_t i = 0; i < n_embd; ++i) {
      EXPECT_EQ(y[i], expect);
      EXPECT_EQ(y_ref[i], expect);
    }
  }
}

// Expert parallelism: routing with an expert range gives the whole routing's choices, relative
// to the range's first expert, and -1 for the others, with the same weights.
TEST(MoeRoute, ExpertRangeGivesLocalIds) {
  const int64_t n_tok = 9, n_exp = 64, k = 6;
  const auto logits = random_floats(n_tok * n_exp, 61, 2.0f);
  const auto bias = random_floats(n_exp, 62, 0.1f);
  for (RouterScoring s : {RouterScoring::kSoftmax, RouterScoring::kSigmoid}) {
    RouterArgs a;
    a.logits = logits.data();
    a.n_tokens = n_tok;
    a.n_expert = n_exp;
    a.k = k;
    a.scoring = s;
    a.bias = s == RouterScoring::kSigmoid ? bias.data() : nullptr;
    a.n_group = 8;  // group-limited selection still sees every expert
    a.n_group_used = 3;
    std::vector<int32_t> ids(n_tok * k);
    std::vector<float> w(ids.size());
    a.ids = ids.data();
    a.weights = w.data();
    ref::moe_route(a);
    for (auto [begin, count] : {std::pair<int64_t, int64_t>{0, 22}, {22, 21}, {43, 21}}) {
      RouterArgs l = a;
      l.expert_begin = begin;
      l.n_local = count;
      std::vector<int32_t> li(ids.size()), li_ref(ids.size());
      std::vector<float> lw(ids.size()), lw_ref(ids.size());
      l.ids = li.data();
      l.weights = lw.data();
      moe_route(l);
      l.ids = li_ref.data();
      l.weights = lw_ref.data();
      ref::moe_route(l);
      for (size_t i = 0; i < ids.size(); ++i) {
        const int32_t expect = ids[i] >= begin && ids[i] < begin + count ? ids[i] - begin : -1;
        EXPECT_EQ(li_ref[i], expect) << "range " << begin;
        EXPECT_EQ(li[i], expect) << "range " << begin;
        EXPECT_EQ(lw_ref[i], w[i]);
        EXPECT_NEAR(lw[i], w[i], 1e-5);
      }
    }
  }
}

// Expert parallelism: each range of whole experts run alone (its matrices and biases from its
// first expert, local ids from the router) and the partial outputs summed equal all experts in
// one call, at every level, decode and prefill; the oracle likewise. Only the order of the
// final additions differs (each expert's output is computed exactly as in the whole call).
TEST(MoeFfn, ExpertRangesSumToAllExperts) {
  ThreadPool pool(2);
  const Experts ex = make_experts(DType::Q4_K, DType::Q6_K, kExperts, kEmbd, kFf);
  const auto gb = random_floats(kExperts * kFf, 71, 1.5f);
  const auto ub = random_floats(kExperts * kFf, 72, 1.5f);
  const auto db = random_floats(kExperts * kEmbd, 73, 0.5f);
  const size_t gate_e = *dtype_row_bytes(DType::Q4_K, kEmbd) * kFf;  // bytes per expert
  const size_t down_e = *dtype_row_bytes(DType::Q6_K, kFf) * kEmbd;
  const int64_t k = 3;
  for (int64_t n_tok : {1, 2, 11}) {
    const auto x = random_floats(n_tok * kEmbd, 74);
    const auto logits = random_floats(n_tok * kExperts, 75);
    RouterArgs r;
    r.logits = logits.data();
    r.n_tokens = n_tok;
    r.n_expert = kExperts;
    r.k = k;
    std::vector<int32_t> ids(n_tok * k);
    std::vector<float> w(ids.size());
    r.ids = ids.data();
    r.weights = w.data();
    moe_route(r);
    for (bool biases : {false, true}) {
      MoeFfnArgs a = expert_args(ex, DType::Q4_K, DType::Q6_K, k);
      a.x = x.data();
      a.n_tokens = n_tok;
      a.ids = ids.data();
      a.weights = w.data();
      if (biases) {
        a.gate_bias = gb.data();
        a.up_bias = ub.data();
        a.down_bias = db.data();
        a.act = MoeActivation::kSwiGluOai;
      }
      // Ranges 3 + 3 + 2 (one of a decode token's 3 experts may be in none of a range's).
      const int64_t begins[] = {0, 3, 6, kExperts};
      for (int level_i = -1; level_i < static_cast<int>(cpu::available_isas().size()); ++level_i) {
        const bool oracle = level_i < 0;
        const cpu::IsaLevel level =
            oracle ? cpu::IsaLevel::kScalar : cpu::available_isas()[level_i];
        auto run = [&](const MoeFfnArgs& m) {
          return oracle ? ref::moe_ffn(m) : cpu::moe_ffn_at(level, m, &pool);
        };
        std::vector<float> whole(n_tok * kEmbd), parts(n_tok * kEmbd, 0.0f);
        a.y = whole.data();
        ASSERT_TRUE(run(a));
        for (int p = 0; p < 3; ++p) {
          const int64_t b = begins[p], n = begins[p + 1] - begins[p];
          RouterArgs lr = r;
          lr.expert_begin = b;
          lr.n_local = n;
          std::vector<int32_t> lids(ids.size());
          std::vector<float> lw(ids.size());
          lr.ids = lids.data();
          lr.weights = lw.data();
          moe_route(lr);
          MoeFfnArgs m = a;
          m.n_expert = n;
          m.ids = lids.data();
          m.weights = lw.data();
          m.gate = ex.gate.data() + b * gate_e;
          m.up = ex.up.data() + b * gate_e;
          m.down = ex.down.data() + b * down_e;
          if (biases) {
            m.gate_bias = gb.data() + b * kFf;
            m.up_bias = ub.data() + b * kFf;
            m.down_bias = db.data() + b * kEmbd;
          }
          m.y = parts.data();
          m.accumulate = true;
          ASSERT_TRUE(run(m));
        }
        double ss = 0;
        for (float v : whole) ss += static_cast<double>(v) * v;
        const double tol = 1e-5 * std::sqrt(ss / static_cast<double>(whole.size())) + 1e-6;
        for (size_t i = 0; i < whole.size(); ++i) {
          ASSERT_NEAR(parts[i], whole[i], tol)
              << (oracle ? "ref" : cpu::isa_name(level)) << " tokens " << n_tok << " i " << i;
        }
      }
    }
  }
}

}  // namespace
}  // namespace arc::kernels
