// Shard plan without MPI: local sizes, tensor ranges, refusals, and the rewrite of a real
// (generated) model checked against the bytes of its file.
#include "arc/shard_plan.h"

#include <gtest/gtest.h>

#include <cstring>

#include "model/test_util.h"

namespace arc {
namespace {

DType f32_type(const TensorRef&) {
  return DType::F32;
}

ModelConfig big_config() {  // shaped like a 64-head MoE model
  ModelConfig c;
  c.family = Family::kQwen3Moe;
  c.ffn = FfnKind::kMoe;
  c.n_layer = 1;
  c.n_embd = 4096;
  c.n_vocab = 151936;
  c.n_head = 64;
  c.n_kv_head = 4;
  c.head_dim = 128;
  c.n_expert = 128;
  c.n_expert_used = 8;
  c.n_ff_exp = 1536;
  c.rot_dim = 128;
  c.qk_norm = true;
  return c;
}

TEST(ShardPlan, LocalSizesAndKvGroups) {
  ModelConfig c = big_config();
  for (int r = 0; r < 8; ++r) {
    Result<ShardPlan> p = make_shard_plan(c, f32_type, 8, r);
    ASSERT_TRUE(p.ok()) << p.status().to_string();
    EXPECT_EQ(p->local.n_head, 8);
    EXPECT_EQ(p->local.n_kv_head, 1);    // 4 KV heads over 8 ranks: each shared by two ranks
    EXPECT_EQ(p->kv_head_begin, r / 2);  // q heads [8r, 8r+8) use kv head (8r)/16
    EXPECT_EQ(p->local.n_ff_exp, 192);
    EXPECT_EQ(p->vocab_begin[r + 1] - p->vocab_begin[r], r < 0 ? 0 : p->vocab_count());
  }
  // Three ranks: 4 KV heads padded to 6 slots, 2 per rank with 16 Q heads each; the last rank's
  // are zero heads.
  for (int r = 0; r < 3; ++r) {
    Result<ShardPlan> p = make_shard_plan(c, f32_type, 3, r);
    ASSERT_TRUE(p.ok()) << p.status().to_string();
    EXPECT_EQ(p->local.n_head, 32);
    EXPECT_EQ(p->local.n_kv_head, 2);
    EXPECT_EQ(p->kv_head_begin, r < 2 ? 2 * r : 0);
    ASSERT_EQ(p->q_parts.size(), 1u);
    EXPECT_EQ(p->q_parts[0].zero, r == 2);
  }
}

// A split no cut can give whole blocks: 4 heads of 64 values with a Q4_K output projection
// (256-value blocks) leave every rank 128 or 64 columns at 2, 3 or 4 ranks.
TEST(ShardPlan, ImpossibleSplitRefusedWithWorkableCounts) {
  ModelConfig c = big_config();
  c.n_head = c.n_kv_head = 4;
  c.head_dim = c.rot_dim = 64;
  auto q4k = [](const TensorRef&) { return DType::Q4_K; };
  Result<ShardPlan> p = make_shard_plan(c, q4k, 2, 0);
  ASSERT_FALSE(p.ok());
  const std::string msg = p.status().to_string();
  EXPECT_NE(msg.find("256-value blocks of the output projection"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Rank counts that split: 1"), std::string::npos) << msg;
  EXPECT_TRUE(make_shard_plan(c, f32_type, 2, 0).ok());  // F32 has no blocks
}

TEST(ShardPlan, VocabRangesCoverEveryRowOnce) {
  ModelConfig c = big_config();
  c.n_vocab = 1001;  // uneven
  int64_t next = 0;
  for (int r = 0; r < 4; ++r) {
    Result<ShardPlan> p = make_shard_plan(c, f32_type, 4, r);
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->vocab_begin[r], next);
    next += p->vocab_count();
  }
  EXPECT_EQ(next, 1001);
}

TEST(ShardPlan, QuantizationBlocksGoRoundUnevenly) {
  ModelConfig c = big_config();
  // 384 per rank on 2 ranks would cut Q4_K's 256-value blocks: the 3 blocks go 2 + 1, and over
  // 4 ranks 1 + 1 + 1 + 0 (the last rank holds none of the experts' width).
  c.n_ff_exp = 768;
  auto q4k = [](const TensorRef&) { return DType::Q4_K; };
  for (int n : {2, 3, 4}) {
    int64_t next = 0;
    for (int r = 0; r < n; ++r) {
      // The block split asked for (auto may take whole experts: shard_plan_ep_test.cpp).
      Result<ShardPlan> p = make_shard_plan(c, q4k, n, r, MoeSplitMode::kTp);
      ASSERT_TRUE(p.ok()) << p.status().to_string();
      EXPECT_EQ(p->ff_exp_begin, next);
      EXPECT_EQ(p->local.n_ff_exp, r < 3 ? (n == 2 && r == 0 ? 512 : 256) : 0) << n << " " << r;
      next += p->local.n_ff_exp;
    }
    EXPECT_EQ(next, 768);
  }
  Result<ShardPlan> p = make_shard_plan(c, q4k, 2, 0, MoeSplitMode::kTp);
  const std::vector<std::string> lines = p->describe();
  ASSERT_EQ(lines.size(), 3u);  // heads, the routed experts' choice, the expert width
  EXPECT_EQ(lines[1].rfind("routed experts: block split", 0), 0u) << lines[1];
  EXPECT_NE(lines[1].find("--moe-split tp"), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find("512 + 256 (uneven whole blocks, largest rank 67%)"), std::string::npos)
      << lines[2];
}

TEST(ShardPlan, TensorRanges) {
  ModelConfig c = big_config();
  ShardPlan p = *make_shard_plan(c, f32_type, 2, 1);
  int checked = 0;
  for_each_tensor(c, [&](const TensorRef& ref) {
    if (ref.layer > 0) return;
    TensorShard s = tensor_shard(p, ref);
    const std::string n = ref.name;
    if (n == "blk.0.attn_q.weight") {
      EXPECT_FALSE(s.columns);
      EXPECT_EQ(s.begin, 32 * 128);
      EXPECT_EQ(s.count, 32 * 128);
      ++checked;
    } else if (n == "blk.0.attn_k.weight") {
      EXPECT_EQ(s.begin, 2 * 128);
      EXPECT_EQ(s.count, 2 * 128);
      ++checked;
    } else if (n == "blk.0.attn_output.weight") {
      EXPECT_TRUE(s.columns);
      EXPECT_EQ(s.begin, 4096);
      ++checked;
    } else if (n == "blk.0.ffn_down_exps.weight") {
      EXPECT_TRUE(s.columns);
      EXPECT_EQ(s.begin, 768);
      EXPECT_EQ(s.count, 768);
      ++checked;
    } else if (n == "blk.0.ffn_gate_inp.weight" || n == "token_embd.weight") {
      EXPECT_TRUE(s.whole);
      ++checked;
    }
  });
  EXPECT_EQ(checked, 6);
}

// gpt-oss-120b's shape with MXFP4 experts: sinks split by head, expert biases by column like
// their experts' rows, the biases of summed outputs whole (rank 0 adds them).
TEST(ShardPlan, GptOss) {
  ModelConfig c;
  c.family = Family::kGptOss;
  c.ffn = FfnKind::kMoe;
  c.n_layer = 1;
  c.n_embd = 2880;
  c.n_vocab = 201088;
  c.n_head = 64;
  c.n_kv_head = 8;
  c.head_dim = 64;
  c.rot_dim = 64;
  c.n_expert = 128;
  c.n_expert_used = 4;
  c.n_ff_exp = 2880;
  c.qkv_bias = true;
  auto types = [](const TensorRef& ref) {
    const TensorRole r = ref.spec->role;
    return r == TensorRole::kFfnGateExps || r == TensorRole::kFfnUpExps ||
                   r == TensorRole::kFfnDownExps
               ? DType::MXFP4
               : DType::F32;
  };
  ShardPlan p = *make_shard_plan(c, types, 2, 1);
  EXPECT_EQ(p.local.n_head, 32);
  EXPECT_EQ(p.local.n_kv_head, 4);
  EXPECT_EQ(p.local.n_ff_exp, 1440);
  int checked = 0;
  for_each_tensor(c, [&](const TensorRef& ref) {
    TensorShard s = tensor_shard(p, ref);
    const std::string n = ref.name;
    if (n == "blk.0.attn_sinks.weight") {
      EXPECT_EQ(s.begin, 32);
      EXPECT_EQ(s.count, 32);
      ++checked;
    } else if (n == "blk.0.ffn_gate_exps.bias" || n == "blk.0.ffn_up_exps.bias") {
      EXPECT_TRUE(s.columns);  // [n_expert rows of n_ff_exp]: each expert's own range
      EXPECT_EQ(s.begin, 1440);
      EXPECT_EQ(s.count, 1440);
      ++checked;
    } else if (n == "blk.0.attn_v.bias") {
      EXPECT_EQ(s.begin, 4 * 64);
      EXPECT_EQ(s.count, 4 * 64);
      ++checked;
    } else if (n == "blk.0.attn_output.bias" || n == "blk.0.ffn_down_exps.bias" ||
               n == "blk.0.ffn_gate_inp.bias") {
      EXPECT_TRUE(s.whole);
      ++checked;
    }
  });
  EXPECT_EQ(checked, 7);
  // Four ranks: 720 columns of ffn_down_exps per rank would cut 32-value MXFP4 blocks; the
  // width goes round in whole blocks instead (90 blocks: 22, 23, 22, 23), the same ranges for
  // every tensor of the expert width.
  int64_t next = 0;
  for (int r = 0; r < 4; ++r) {
    Result<ShardPlan> q = make_shard_plan(c, types, 4, r);
    ASSERT_TRUE(q.ok()) << q.status().to_string();
    EXPECT_EQ(q->ff_exp_begin, next);
    EXPECT_EQ(q->local.n_ff_exp % 32, 0);
    EXPECT_GE(q->local.n_ff_exp, 22 * 32);
    EXPECT_LE(q->local.n_ff_exp, 23 * 32);
    for_each_tensor(c, [&](const TensorRef& ref) {
      const std::string n = ref.name;
      if (n != "blk.0.ffn_down_exps.weight" && n != "blk.0.ffn_up_exps.weight" &&
          n != "blk.0.ffn_up_exps.bias")
        return;
      const TensorShard s = tensor_shard(*q, ref);
      EXPECT_EQ(s.begin, q->ff_exp_begin) << n;
      EXPECT_EQ(s.count, q->local.n_ff_exp) << n;
    });
    next += q->local.n_ff_exp;
  }
  EXPECT_EQ(next, 2880);
  // Eight ranks: 90 blocks as 11 or 12.
  EXPECT_EQ(make_shard_plan(c, types, 8, 3)->local.n_ff_exp % 32, 0);
  // Three ranks: 8 KV heads padded to 9 slots (3 per rank, 24 Q heads), 90 blocks as 30 each.
  Result<ShardPlan> three = make_shard_plan(c, types, 3, 2);
  ASSERT_TRUE(three.ok()) << three.status().to_string();
  EXPECT_EQ(three->local.n_head, 24);
  EXPECT_EQ(three->local.n_kv_head, 3);
  EXPECT_EQ(three->local.n_ff_exp, 960);
  for_each_tensor(c, [&](const TensorRef& ref) {
    if (ref.name != "blk.0.attn_sinks.weight") return;
    const TensorShard s = tensor_shard(*three, ref);  // heads 48..63, then 8 zero heads
    ASSERT_EQ(s.parts.size(), 2u);
    EXPECT_EQ(s.parts[0].begin, 48);
    EXPECT_EQ(s.parts[0].count, 16);
    EXPECT_TRUE(s.parts[1].zero);
    EXPECT_EQ(s.parts[1].count, 8);
  });
}

// The rewrite against the file: every split weight of rank r equals the corresponding rows or
// columns of the whole tensor, read independently here from the GGUF image.
TEST(ShardPlan, ShardedWeightsMatchTheFile) {
  TestModelOptions o;
  o.family = Family::kQwen2Moe;
  o.type = "Q8_0";
  o.n_ff_exp = 64;
  o.n_ff_shexp = 64;
  for (int rank = 0; rank < 2; ++rank) {
    Result<testing::Engine> e = testing::make_engine(o);
    ASSERT_TRUE(e.ok()) << e.status().to_string();
    Model& m = *e->model;
    const uint64_t whole = m.weight_bytes();
    Result<ShardPlan> plan = make_shard_plan(m, 2, rank);
    ASSERT_TRUE(plan.ok()) << plan.status().to_string();
    Result<uint64_t> bytes = shard_model(m, *e->backend, *plan);
    ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
    uint64_t replicated = 0, split = 0;
    const gguf::File& f = m.file();
    for_each_tensor(plan->full, [&](const TensorRef& ref) {
      const gguf::TensorInfo* t = f.find_tensor(ref.name);
      (ref.spec->split == Split::kReplicated ? replicated : split) += t->n_bytes;
      const Weight& w = m.layer(ref.layer < 0 ? 0 : ref.layer, ref.spec->role);
      const Weight& wg = ref.layer < 0 ? m.global(ref.spec->role) : w;
      const auto* file_data = f.tensor_data(*t).data();
      const uint64_t frow = *dtype_row_bytes(t->type, t->shape[0]);
      const int64_t n_rows = t->shape.size() > 1 ? t->shape[1] : 1;
      const int64_t n_exp = t->shape.size() > 2 ? t->shape[2] : 1;
      TensorShard s = tensor_shard(*plan, ref);
      if (s.whole || t->shape.size() == 1) return;
      const auto* got = static_cast<const uint8_t*>(wg.data);
      const DTypeInfo* info = dtype_info(t->type);
      for (int64_t x = 0; x < n_exp; ++x) {
        if (!s.columns) {
          ASSERT_EQ(std::memcmp(got + x * wg.slice_bytes, file_data + (x * n_rows + s.begin) * frow,
                                s.count * frow),
                    0)
              << ref.name;
        } else {
          const size_t off = s.begin / info->block_elems * info->block_bytes;
          for (int64_t r = 0; r < n_rows; ++r) {
            ASSERT_EQ(std::memcmp(got + (x * n_rows + r) * wg.row_bytes,
                                  file_data + (x * n_rows + r) * frow + off, wg.row_bytes),
                      0)
                << ref.name << " row " << r;
          }
        }
      }
    });
    // Tied embeddings: the output head is this rank's share of token_embd's rows (259 rows:
    // 129 on rank 0, 130 on rank 1).
    const gguf::TensorInfo* emb = f.find_tensor("token_embd.weight");
    const uint64_t emb_row = emb->n_bytes / static_cast<uint64_t>(emb->shape[1]);
    EXPECT_EQ(plan->vocab_count(), rank == 0 ? 129 : 130);
    EXPECT_EQ(whole, replicated + split);
    EXPECT_EQ(*bytes, replicated + split / 2 + emb_row * plan->vocab_count()) << "rank " << rank;
    EXPECT_EQ(m.config().n_head, 2);
    EXPECT_EQ(m.config().n_kv_head, 1);
    EXPECT_EQ(m.output().shape[1], plan->vocab_count());
  }
}

}  // namespace
}  // namespace arc
