// The routed experts' split (arc/moe_split.h): the expected-load arithmetic against hand counts,
// the choice on catalog shapes at 2, 3 and 4 ranks with a Q4_K_M file's types, and the expert
// parallel plan's tensor parts (whole experts per rank, the router whole, the shared expert and
// dense FFN still cut by blocks).
//
// The rule: the busiest rank's expert weights read per decode token, in experts. Block split:
// k x the largest rank's share of the expert width. Whole experts: the expected largest number
// of a token's k experts (k distinct, uniform) one rank holds. Whole experts when that is lower
// and its prefill share (the largest rank's experts / all) is no higher; ties keep the block
// split. k = 8 in every shape below; the expected busiest rank under whole experts (exact, the
// multivariate hypergeometric; computed independently for these comments):
//   128 experts: 64 + 64 -> 5.06 of 8; 43 + 43 + 42 -> 4.03; 32 x 4 -> 3.49
//   256 experts: 128 x 2 -> 5.08;      86 + 85 + 85 -> 4.05; 64 x 4 -> 3.51
// An even block split reads exactly k / N (4, 2.67, 2): always better, so only widths whose
// blocks do not divide can go to whole experts.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>

#include "arc/moe_split.h"
#include "arc/shard_plan.h"

namespace arc {
namespace {

TEST(MoeSplit, ExpectedBusiestRankByHand) {
  // 4 experts as 2 + 2, k = 2: both on one rank with probability 2 / C(4, 2) = 1/3 (busiest 2),
  // else 1: 4/3.
  EXPECT_NEAR(expected_busiest_experts(split_experts(4, 2), 2), 4.0 / 3, 1e-12);
  // 1 + 1 + 1 + 1: never more than 1. k = 1: always 1. k = all: the largest share.
  EXPECT_NEAR(expected_busiest_experts(split_experts(4, 4), 2), 1.0, 1e-12);
  EXPECT_NEAR(expected_busiest_experts(split_experts(128, 3), 1), 1.0, 1e-12);
  EXPECT_NEAR(expected_busiest_experts(split_experts(10, 3), 10), 4.0, 1e-12);
  // 2 + 1 + 1 (4 over 3), k = 2: both on rank 0 with probability 1 / 6: 7/6.
  const ExpertSplit s = split_experts(4, 3);
  EXPECT_EQ(s.count(0), 2);
  EXPECT_EQ(s.count(2), 1);
  EXPECT_NEAR(expected_busiest_experts(s, 2), 7.0 / 6, 1e-12);
}

TEST(MoeSplit, ExpectedBusiestRankMatchesSampling) {
  // 160 experts over 3 ranks, k = 8: the exact value against 20000 sampled tokens.
  const ExpertSplit s = split_experts(160, 3);
  std::mt19937 rng(7);
  double sum = 0;
  const int n = 20000;
  for (int t = 0; t < n; ++t) {
    std::set<int64_t> chosen;
    while (chosen.size() < 8) chosen.insert(std::uniform_int_distribution<int64_t>(0, 159)(rng));
    int64_t most = 0;
    for (int r = 0; r < 3; ++r) {
      int64_t c = 0;
      for (int64_t e : chosen) c += e >= s.begin[r] && e < s.begin[r + 1] ? 1 : 0;
      most = std::max(most, c);
    }
    sum += static_cast<double>(most);
  }
  EXPECT_NEAR(expected_busiest_experts(s, 8), sum / n, 0.03);  // ~4 sigma of the mean
}

TEST(MoeSplit, ForcedModesAndRefusals) {
  const Result<WidthSplit> even = split_width(1024, 256, 2);
  Result<MoeSplitChoice> c = choose_moe_split(8, 2, even, 2, MoeSplitMode::kEp);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->ep);
  c = choose_moe_split(8, 2, even, 2, MoeSplitMode::kAuto);
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->ep);  // even blocks: 1 expert's worth per rank vs 1.43 (4 + 4, k = 2)
  EXPECT_FALSE(
      choose_moe_split(3, 2, even, 4, MoeSplitMode::kEp).ok());  // fewer experts than ranks
  const Result<WidthSplit> bad = split_width(1000, 256, 2);      // not whole blocks
  EXPECT_FALSE(choose_moe_split(8, 2, bad, 2, MoeSplitMode::kTp).ok());
  c = choose_moe_split(8, 2, bad, 2, MoeSplitMode::kAuto);  // only whole experts can split it
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->ep);
  EXPECT_TRUE(parse_moe_split("ep").ok());
  EXPECT_FALSE(parse_moe_split("expert").ok());
}

// The catalog shapes (published configs; layer counts cut to the dense lead + 2).
struct Shape {
  const char* name;
  Family family;
  int64_t embd, heads, kv_heads, ff, ff_exp, ff_shexp, experts, dense_lead;
};

const Shape kQwen30{"Qwen3-30B-A3B", Family::kQwen3Moe, 2048, 32, 4, 0, 768, 0, 128, 0};
const Shape kQwen235{"Qwen3-235B-A22B", Family::kQwen3Moe, 4096, 64, 4, 0, 1536, 0, 128, 0};
const Shape kGlmAir{"GLM-4.5-Air", Family::kGlm4Moe, 4096, 96, 8, 10944, 1408, 1408, 128, 1};
const Shape kMiniMax{"MiniMax-M2", Family::kMiniMaxM2, 3072, 48, 8, 0, 1536, 0, 256, 0};
const Shape kDeepSeekV3{"DeepSeek-V3", Family::kDeepSeek2, 7168, 128, 1, 18432, 2048, 2048, 256, 3};

ModelConfig config(const Shape& s) {
  ModelConfig c;
  c.family = s.family;
  c.n_layer = s.dense_lead + 2;
  c.n_embd = s.embd;
  c.n_vocab = 151936;
  c.n_head = s.heads;
  c.n_kv_head = s.kv_heads;
  c.head_dim = 128;
  c.rot_dim = 128;
  c.n_ff = s.ff;
  c.n_ff_exp = s.ff_exp;
  c.n_ff_shexp = s.ff_shexp;
  c.n_expert = s.experts;
  c.n_expert_used = 8;
  c.n_dense_lead = s.dense_lead;
  c.ffn = s.ff_shexp > 0 ? FfnKind::kMoeShared : FfnKind::kMoe;
  if (s.family == Family::kGlm4Moe) c.qkv_bias = c.router_sigmoid = true;
  if (s.family == Family::kMiniMaxM2) c.qk_norm_full = c.router_sigmoid = true;
  if (s.family == Family::kDeepSeek2) {  // multi-head latent attention
    c.head_dim = 192;
    c.rot_dim = 64;
    c.q_lora_rank = 1536;
    c.kv_lora_rank = 512;
    c.v_head_dim = 128;
    c.router_sigmoid = true;
    c.n_expert_group = 8;
    c.n_expert_group_used = 4;
  }
  return c;
}

// 256-value Q4_K blocks where the row allows, else Q8_0 (32).
DType q4_k_m(const TensorRef& r) {
  if (r.spec->n_dims == 1 || r.spec->role == TensorRole::kFfnRouter) return DType::F32;
  return r.shape[0] % 256 == 0 ? DType::Q4_K : DType::Q8_0;
}

bool planned_ep(const Shape& s, int n) {
  Result<ShardPlan> p = make_shard_plan(config(s), q4_k_m, n, 0);
  EXPECT_TRUE(p.ok()) << s.name << " over " << n << ": " << p.status().to_string();
  if (!p.ok()) return false;
  for (const std::string& line : p->describe()) {
    if (line.rfind("routed experts", 0) == 0)
      std::printf("  %s over %d: %s\n", s.name, n, line.c_str());
  }
  return p->ep();
}

TEST(MoeSplit, CatalogChoices) {
  // Qwen3-30B-A3B, 768 = 3 Q4_K blocks. 2 ranks: 2 + 1 blocks, the busiest reads 2/3 of 8 =
  // 5.33 experts vs 5.06 whole (and prefill 50% vs 67%): whole experts. 3 ranks: 1 + 1 + 1, even:
  // blocks. 4 ranks: 1 + 1 + 1 + 0, the busiest 1/3 of 8 = 2.67 vs 3.49 whole: blocks.
  EXPECT_TRUE(planned_ep(kQwen30, 2));
  EXPECT_FALSE(planned_ep(kQwen30, 3));
  EXPECT_FALSE(planned_ep(kQwen30, 4));
  // Qwen3-235B-A22B, 1536 = 6 Q4_K blocks: even over 2 and 3; over 4 2 + 2 + 1 + 1, 2.67 vs
  // 3.49: blocks everywhere.
  for (int n : {2, 3, 4}) EXPECT_FALSE(planned_ep(kQwen235, n)) << n;
  // GLM-4.5-Air, 1408 = 44 Q8_0 blocks: even over 2 and 4; over 3 15 + 15 + 14, 8 x 15/44 =
  // 2.73 vs 4.03: blocks everywhere (the shared expert and the dense layer are cut by blocks
  // regardless).
  for (int n : {2, 3, 4}) EXPECT_FALSE(planned_ep(kGlmAir, n)) << n;
  // MiniMax-M2, 256 experts of 1536 = 6 blocks: as Qwen3-235B (over 4: 2.67 vs 3.51): blocks.
  for (int n : {2, 3, 4}) EXPECT_FALSE(planned_ep(kMiniMax, n)) << n;
  // DeepSeek-V3, 256 experts of 2048 = 8 Q4_K blocks: even over 2 and 4; over 3 3 + 3 + 2, the
  // busiest 3/8 of 8 = 3.0 vs 4.05: blocks everywhere.
  for (int n : {2, 3, 4}) EXPECT_FALSE(planned_ep(kDeepSeekV3, n)) << n;
}

// Whole experts asked for on GLM-4.5-Air over 3 ranks: every rank's expert tensors are slices of
// whole experts (43 + 43 + 42, in order), the router and the routing bias whole, the shared
// expert and the leading dense layer still cut by blocks, and the local config keeps the full
// expert width and expert count with the rank's range.
TEST(MoeSplit, ExpertParallelPlanParts) {
  const ModelConfig c = config(kGlmAir);
  int64_t next = 0;
  for (int r = 0; r < 3; ++r) {
    Result<ShardPlan> p = make_shard_plan(c, q4_k_m, 3, r, MoeSplitMode::kEp);
    ASSERT_TRUE(p.ok()) << p.status().to_string();
    ASSERT_TRUE(p->ep());
    EXPECT_EQ(p->local.n_ff_exp, 1408);
    EXPECT_EQ(p->local.n_expert, 128);
    EXPECT_EQ(p->local.ep_expert_begin, next);
    EXPECT_EQ(p->local.ep_n_expert, r < 2 ? 43 : 42);
    EXPECT_LT(p->local.n_ff_shexp, 1408);  // cut by blocks
    EXPECT_LT(p->local.n_ff, 10944);
    for_each_tensor(c, [&](const TensorRef& ref) {
      const TensorShard t = tensor_shard(*p, ref);
      switch (ref.spec->role) {
        case TensorRole::kFfnGateExps:
        case TensorRole::kFfnUpExps:
        case TensorRole::kFfnDownExps:
          EXPECT_TRUE(t.slices) << ref.name;
          EXPECT_FALSE(t.gathered()) << ref.name;
          EXPECT_EQ(t.begin, next) << ref.name;
          EXPECT_EQ(t.count, p->local.ep_n_expert) << ref.name;
          break;
        case TensorRole::kFfnRouter:
        case TensorRole::kFfnExpProbsB:
          EXPECT_TRUE(t.whole) << ref.name;
          break;
        case TensorRole::kFfnDownShexp:
          EXPECT_TRUE(t.columns) << ref.name;
          EXPECT_EQ(t.count, p->local.n_ff_shexp);
          break;
        default:
          break;
      }
    });
    next += p->local.ep_n_expert;
  }
  EXPECT_EQ(next, 128);
}

}  // namespace
}  // namespace arc
