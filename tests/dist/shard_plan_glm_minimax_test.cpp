// Shard plans of the published GLM-4.5-Air, GLM-4.6 and MiniMax-M2 shapes (values from
// ../shared/fixtures/model_configs/model_configs.json) at 2 and 4 ranks, with the weight types of
// a Q4_K_M file (llama.cpp falls back to a 32-value block type where a row is not a multiple of
// 256); and the local sizes and tensor ranges of the parts these families add.
#include <gtest/gtest.h>

#include "arc/shard_plan.h"

namespace arc {
namespace {

ModelConfig glm(int64_t layers, int64_t embd, int64_t ff, int64_t ff_exp, int64_t experts,
                int64_t dense_lead, bool qk_norm) {
  ModelConfig c;
  c.family = Family::kGlm4Moe;
  c.ffn = FfnKind::kMoeShared;
  c.n_layer = layers;
  c.n_embd = embd;
  c.n_vocab = 151552;
  c.n_head = 96;
  c.n_kv_head = 8;
  c.head_dim = 128;
  c.rot_dim = 64;
  c.n_ff = ff;
  c.n_ff_exp = ff_exp;
  c.n_ff_shexp = ff_exp;
  c.n_expert = experts;
  c.n_expert_used = 8;
  c.n_dense_lead = dense_lead;
  c.qkv_bias = true;
  c.qk_norm = qk_norm;
  c.router_sigmoid = true;
  c.n_nextn = 1;
  return c;
}

ModelConfig glm45_air() {
  return glm(46, 4096, 10944, 1408, 128, 1, false);
}
ModelConfig glm46() {
  return glm(92, 5120, 12288, 1536, 160, 3, true);
}
ModelConfig minimax_m2() {
  ModelConfig c;
  c.family = Family::kMiniMaxM2;
  c.ffn = FfnKind::kMoe;
  c.n_layer = 62;
  c.n_embd = 3072;
  c.n_vocab = 200064;
  c.n_head = 48;
  c.n_kv_head = 8;
  c.head_dim = 128;
  c.rot_dim = 64;
  c.n_ff_exp = 1536;
  c.n_expert = 256;
  c.n_expert_used = 8;
  c.qk_norm = c.qk_norm_full = true;
  c.router_sigmoid = true;
  return c;
}

// Q4_K where the row length allows it, else Q8_0 (32-value blocks); norms, biases, router F32.
DType q4_k_m(const TensorRef& r) {
  if (r.spec->n_dims == 1 || r.spec->role == TensorRole::kFfnRouter) return DType::F32;
  return r.shape[0] % 256 == 0 ? DType::Q4_K : DType::Q8_0;
}
DType q8_0(const TensorRef& r) {
  return r.spec->n_dims == 1 || r.spec->role == TensorRole::kFfnRouter ? DType::F32 : DType::Q8_0;
}

TEST(ShardPlanGlmMiniMax, TwoRanksSplitAllThree) {
  for (const ModelConfig& c : {glm45_air(), glm46(), minimax_m2()}) {
    for (int r = 0; r < 2; ++r) {
      Result<ShardPlan> p = make_shard_plan(c, q4_k_m, 2, r);
      ASSERT_TRUE(p.ok()) << family_name(c.family) << ": " << p.status().to_string();
      EXPECT_EQ(p->local.n_head, c.n_head / 2);
      EXPECT_EQ(p->local.n_kv_head, 4);
      EXPECT_EQ(p->local.n_ff_exp, c.n_ff_exp / 2);
      EXPECT_EQ(p->local.n_ff_shexp, c.n_ff_shexp / 2);
      EXPECT_EQ(p->local.n_ff, c.n_ff / 2);
      EXPECT_EQ(p->local.n_dense_lead, c.n_dense_lead);
    }
  }
}

// Four ranks: the column splits must fall on quantization blocks. Q4_K experts of 1536 columns
// (6 blocks) go round as whole blocks, 512 or 256 per rank; GLM-4.5-Air's dense layer of 10944
// columns (342 Q8_0 blocks) as 86 or 85 blocks.
TEST(ShardPlanGlmMiniMax, FourRanksSplitOnWholeBlocks) {
  for (const ModelConfig& c : {glm46(), minimax_m2()}) {
    int64_t total = 0;
    for (int r = 0; r < 4; ++r) {
      Result<ShardPlan> p = make_shard_plan(c, q4_k_m, 4, r);
      ASSERT_TRUE(p.ok()) << family_name(c.family) << ": " << p.status().to_string();
      EXPECT_EQ(p->local.n_ff_exp % 256, 0);
      EXPECT_GE(p->local.n_ff_exp, 256);
      EXPECT_LE(p->local.n_ff_exp, 512);
      EXPECT_FALSE(p->ff_exp.even());
      total += p->local.n_ff_exp;
    }
    EXPECT_EQ(total, 1536);
    EXPECT_TRUE(make_shard_plan(c, q8_0, 4, 3).ok()) << family_name(c.family);
  }
  int64_t total = 0;
  for (int r = 0; r < 4; ++r) {
    Result<ShardPlan> p = make_shard_plan(glm45_air(), q8_0, 4, r);
    ASSERT_TRUE(p.ok()) << p.status().to_string();
    EXPECT_EQ(p->local.n_ff % 32, 0);
    EXPECT_GE(p->local.n_ff, 85 * 32);
    EXPECT_LE(p->local.n_ff, 86 * 32);
    total += p->local.n_ff;
  }
  EXPECT_EQ(total, 10944);
}

// The parts glm4moe and minimax-m2 add: MiniMax's q/k norm weights split with their heads
// (k's with the KV heads, also when ranks share one); the expert bias is replicated.
TEST(ShardPlanGlmMiniMax, NormWeightsFollowTheirHeads) {
  const ModelConfig c = minimax_m2();
  for (int n : {2, 4, 16}) {
    for (int r = 0; r < n; ++r) {
      // 16 ranks: 3 q heads each; each of the 8 KV heads shared by two ranks.
      Result<ShardPlan> p = make_shard_plan(c, q8_0, n, r);
      ASSERT_TRUE(p.ok()) << p.status().to_string();
      for_each_tensor(c, [&](const TensorRef& ref) {
        if (ref.layer != 0) return;
        const TensorShard s = tensor_shard(*p, ref);
        switch (ref.spec->role) {
          case TensorRole::kAttnQNorm:
            EXPECT_EQ(s.begin, r * p->local.n_head * c.head_dim);
            EXPECT_EQ(s.count, p->local.n_head * c.head_dim);
            break;
          case TensorRole::kAttnKNorm:
            EXPECT_EQ(s.begin, p->kv_head_begin * c.head_dim) << n << " " << r;
            EXPECT_EQ(s.count, p->local.n_kv_head * c.head_dim);
            break;
          case TensorRole::kFfnExpProbsB:
            EXPECT_TRUE(s.whole);
            break;
          default:
            break;
        }
      });
    }
  }
}

}  // namespace
}  // namespace arc
