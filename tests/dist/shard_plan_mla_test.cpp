// Shard plans of the deepseek2 (multi-head latent attention) catalog shapes at 2, 3 and 4 ranks,
// with a Q4_K_M file's types (256-value blocks where the row allows, else Q8_0). Shapes from the
// published configs (../shared/fixtures/model_configs/model_configs.json: DeepSeek-V3 and Kimi-K2:
// hidden 7168, q_lora_rank 1536, kv_lora_rank 512, qk_nope_head_dim 128, qk_rope_head_dim 64,
// v_head_dim 128, moe_intermediate_size 2048, one shared expert; DeepSeek-V3 128 heads, 256
// experts, 3 dense layers of 18432; Kimi-K2 64 heads, 384 experts, 1 dense layer).
//
// What every plan must satisfy, checked from the parts it hands out: every head held exactly
// once (q_b rows, k_b and v_b slices and attn_output columns all the same heads, in order), the
// latent projection and its norm whole, one latent KV head per rank, attn_output's columns whole
// blocks, and the split described as such.
#include <gtest/gtest.h>

#include <map>

#include "arc/shard_plan.h"

namespace arc {
namespace {

struct MlaShape {
  const char* name;
  int64_t heads, experts, dense_lead, vocab;
};

const MlaShape kShapes[] = {
    {"DeepSeek-V3", 128, 256, 3, 129280},
    {"Kimi-K2", 64, 384, 1, 163840},
};

ModelConfig config(const MlaShape& s) {
  ModelConfig c;
  c.family = Family::kDeepSeek2;
  c.ffn = FfnKind::kMoeShared;
  c.n_layer = s.dense_lead + 2;
  c.n_embd = 7168;
  c.n_vocab = s.vocab;
  c.n_head = s.heads;
  c.n_kv_head = 1;
  c.head_dim = 192;
  c.rot_dim = 64;
  c.q_lora_rank = 1536;
  c.kv_lora_rank = 512;
  c.v_head_dim = 128;
  c.n_ff = 18432;
  c.n_ff_exp = 2048;
  c.n_ff_shexp = 2048;
  c.n_expert = s.experts;
  c.n_expert_used = 8;
  c.n_dense_lead = s.dense_lead;
  c.router_sigmoid = true;
  return c;
}

DType q4_k_m(const TensorRef& r) {
  if (r.spec->n_dims == 1 || r.spec->role == TensorRole::kFfnRouter) return DType::F32;
  return r.shape[0] % 256 == 0 ? DType::Q4_K : DType::Q8_0;
}

// The heads a part list covers, one entry per head (-1: zero head).
std::vector<int64_t> heads_of(const TensorShard& s, int64_t per_head) {
  std::vector<int64_t> out;
  std::vector<ShardPart> parts = s.parts;
  if (parts.empty()) parts = {{s.begin, s.count, false}};
  for (const ShardPart& p : parts) {
    EXPECT_EQ(p.count % per_head, 0);
    EXPECT_EQ(p.begin % per_head, 0);
    for (int64_t i = 0; i < p.count / per_head; ++i) {
      out.push_back(p.zero ? -1 : p.begin / per_head + i);
    }
  }
  return out;
}

void check(const MlaShape& shape, int n) {
  const ModelConfig c = config(shape);
  ASSERT_TRUE(c.validate().ok()) << c.validate().to_string();
  const std::string at = std::string(shape.name) + " over " + std::to_string(n);
  std::map<int64_t, int> seen;
  for (int r = 0; r < n; ++r) {
    Result<ShardPlan> p = make_shard_plan(c, q4_k_m, n, r);
    ASSERT_TRUE(p.ok()) << at << ": " << p.status().to_string();
    const ModelConfig& l = p->local;
    EXPECT_EQ(l.n_kv_head, 1) << at;
    EXPECT_EQ(l.kv_lora_rank, c.kv_lora_rank) << at;
    EXPECT_EQ(l.n_head * n, p->heads.n_head + p->heads.zero_q_heads()) << at;
    EXPECT_EQ((l.n_head * c.v_head_dim) % 256, 0) << at << ": attn_output columns not whole";
    std::vector<int64_t> want;
    for_each_tensor(c, [&](const TensorRef& ref) {
      if (ref.layer != 0) return;
      const TensorShard s = tensor_shard(*p, ref);
      switch (ref.spec->role) {
        case TensorRole::kAttnQB:
          want = heads_of(s, c.head_dim);
          EXPECT_FALSE(s.columns) << at;
          break;
        case TensorRole::kAttnKB:
        case TensorRole::kAttnVB:
          EXPECT_TRUE(s.slices) << at << " " << ref.name;
          EXPECT_EQ(heads_of(s, 1), want) << at << " " << ref.name;
          break;
        case TensorRole::kAttnOut:
          EXPECT_TRUE(s.columns) << at;
          EXPECT_EQ(heads_of(s, c.v_head_dim), want) << at;
          break;
        case TensorRole::kAttnKvAMqa:
        case TensorRole::kAttnKvANorm:
        case TensorRole::kAttnQA:
        case TensorRole::kAttnQANorm:
          EXPECT_TRUE(s.whole) << at << " " << ref.name;
          break;
        default:
          break;
      }
    });
    ASSERT_EQ(static_cast<int64_t>(want.size()), l.n_head) << at;
    for (int64_t h : want) {
      if (h >= 0) ++seen[h];
    }
    if (r == 0) {
      const std::vector<std::string> d = p->describe();
      ASSERT_FALSE(d.empty());
      EXPECT_NE(d[0].find("latent KV cache whole on every rank"), std::string::npos) << d[0];
    }
  }
  ASSERT_EQ(static_cast<int64_t>(seen.size()), c.n_head) << at;
  for (const auto& [h, count] : seen) EXPECT_EQ(count, 1) << at << ": head " << h;
}

TEST(ShardPlanMla, CatalogShapesSplitOverTwoThreeAndFourRanks) {
  for (const MlaShape& s : kShapes) {
    for (int n : {2, 3, 4}) check(s, n);
  }
}

// 128 heads over 3: 43 each would leave attn_output (Q4_K) 5504 columns per rank, not whole
// 256-value blocks; 44 (5632 = 22 blocks) are, 4 of them zero heads on the last rank. 64 over 3:
// 22 per rank (2816 = 11 blocks), 2 zero.
TEST(ShardPlanMla, PaddedToWholeOutputBlocks) {
  Result<ShardPlan> p = make_shard_plan(config(kShapes[0]), q4_k_m, 3, 2);
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  EXPECT_EQ(p->local.n_head, 44);
  EXPECT_EQ(p->heads.zero_q_heads(), 4);
  ASSERT_EQ(p->q_parts.size(), 2u);
  EXPECT_EQ(p->q_parts[0].begin, 88);
  EXPECT_EQ(p->q_parts[0].count, 40);
  EXPECT_TRUE(p->q_parts[1].zero);
  p = make_shard_plan(config(kShapes[1]), q4_k_m, 3, 1);
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  EXPECT_EQ(p->local.n_head, 22);
  EXPECT_EQ(p->heads.zero_q_heads(), 2);
  EXPECT_EQ(p->describe()[0],
            "heads 64 over 3 ranks: 22 per rank (2 zero heads padded); latent KV cache whole on "
            "every rank");
}

}  // namespace
}  // namespace arc
