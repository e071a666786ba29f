// Shard plans of every catalog model whose family this engine runs, at 2, 3 and 4 ranks, with the
// weight types of a Q4_K_M file (256-value blocks where the row allows, else a 32-value type, as
// llama.cpp's quantizer falls back) and, for gpt-oss, MXFP4 experts. Shapes are the published
// configs (../shared/fixtures/model_configs/model_configs.json: num_attention_heads,
// num_key_value_heads, head_dim, intermediate_size, moe_intermediate_size, num_experts, dense
// layers); layer counts are cut to the dense lead + 2, which the split does not depend on.
// Catalog entries not planned here: Qwen3-Next (qwen3next) and DeepSeek-V3/V3.1/Kimi-K2
// (deepseek2, MLA) are families of other branches; the seed-only entries publish no shapes.
//
// What every plan must satisfy, checked from the plan's parts, not from its own arithmetic:
//   every Q head is held exactly once, by a rank whose local KV slot for it is its KV head;
//   every width is covered once, in order, by whole blocks of its down projection's type;
//   every tensor's part has the local config's size, and column parts fall on blocks.
#include <gtest/gtest.h>

#include <map>

#include "arc/shard_plan.h"

namespace arc {
namespace {

struct Shape {
  const char* name;
  Family family;
  int64_t embd, heads, kv_heads, head_dim, ff, ff_exp, ff_shexp, experts, dense_lead, vocab;
  bool qk_norm = false;
};

const Shape kCatalog[] = {
    {"Qwen3-30B-A3B", Family::kQwen3Moe, 2048, 32, 4, 128, 0, 768, 0, 128, 0, 151936},
    {"Qwen3-235B-A22B", Family::kQwen3Moe, 4096, 64, 4, 128, 0, 1536, 0, 128, 0, 151936},
    {"Qwen3-Coder-480B-A35B", Family::kQwen3Moe, 6144, 96, 8, 128, 0, 2560, 0, 160, 0, 151936},
    {"gpt-oss-120b", Family::kGptOss, 2880, 64, 8, 64, 0, 2880, 0, 128, 0, 201088},
    {"gpt-oss-20b", Family::kGptOss, 2880, 64, 8, 64, 0, 2880, 0, 32, 0, 201088},
    {"GLM-4.5", Family::kGlm4Moe, 5120, 96, 8, 128, 12288, 1536, 1536, 160, 3, 151552, true},
    {"GLM-4.5-Air", Family::kGlm4Moe, 4096, 96, 8, 128, 10944, 1408, 1408, 128, 1, 151552},
    {"GLM-4.6", Family::kGlm4Moe, 5120, 96, 8, 128, 12288, 1536, 1536, 160, 3, 151552, true},
    {"Mixtral-8x7B", Family::kLlama, 4096, 32, 8, 128, 0, 14336, 0, 8, 0, 32000},
    {"Mixtral-8x22B", Family::kLlama, 6144, 48, 8, 128, 0, 16384, 0, 8, 0, 32000},
    {"MiniMax-M2", Family::kMiniMaxM2, 3072, 48, 8, 128, 0, 1536, 0, 256, 0, 200064, true},
    {"Qwen3-32B", Family::kQwen3, 5120, 64, 8, 128, 25600, 0, 0, 0, 0, 151936, true},
    {"Llama-3.3-70B", Family::kLlama, 8192, 64, 8, 128, 28672, 0, 0, 0, 0, 128256},
};

ModelConfig config(const Shape& s) {
  ModelConfig c;
  c.family = s.family;
  c.n_layer = s.dense_lead + 2;
  c.n_embd = s.embd;
  c.n_vocab = s.vocab;
  c.n_head = s.heads;
  c.n_kv_head = s.kv_heads;
  c.head_dim = s.head_dim;
  c.rot_dim = s.head_dim;
  c.n_ff = s.ff;
  c.n_ff_exp = s.ff_exp;
  c.n_ff_shexp = s.ff_shexp;
  c.n_expert = s.experts;
  c.n_expert_used = s.experts > 0 ? std::min<int64_t>(8, s.experts) : 0;
  c.n_dense_lead = s.dense_lead;
  c.qk_norm = s.qk_norm;
  c.ffn = s.experts == 0 ? FfnKind::kDense : (s.ff_shexp > 0 ? FfnKind::kMoeShared : FfnKind::kMoe);
  switch (s.family) {
    case Family::kGlm4Moe:
      c.qkv_bias = c.router_sigmoid = true;
      break;
    case Family::kMiniMaxM2:
      c.qk_norm_full = c.router_sigmoid = true;
      break;
    case Family::kGptOss:
      c.qkv_bias = c.attn_sinks = c.attn_out_bias = c.router_bias = c.expert_bias = true;
      c.swiglu_oai = true;
      c.sliding_window = 128;
      c.swa_period = 2;
      break;
    default:
      break;
  }
  return c;
}

DType q4_k_m(const TensorRef& r) {
  if (r.spec->n_dims == 1 || r.spec->role == TensorRole::kFfnRouter) return DType::F32;
  if (r.spec->role == TensorRole::kFfnGateExpsBias || r.spec->role == TensorRole::kFfnUpExpsBias ||
      r.spec->role == TensorRole::kFfnDownExpsBias) {
    return DType::F32;
  }
  return r.shape[0] % 256 == 0 ? DType::Q4_K : DType::Q8_0;
}
// gpt-oss as published: MXFP4 experts (32-value blocks), the rest 8-bit.
DType gpt_oss_types(const TensorRef& r) {
  const TensorRole role = r.spec->role;
  if (role == TensorRole::kFfnGateExps || role == TensorRole::kFfnUpExps ||
      role == TensorRole::kFfnDownExps) {
    return DType::MXFP4;
  }
  const DType t = q4_k_m(r);
  return t == DType::F32 ? t : DType::Q8_0;
}

int64_t block_of(DType t) {
  const DTypeInfo* info = dtype_info(t);
  return info != nullptr ? info->block_elems : 1;
}

// Expands parts into one entry per unit (-1: zero).
std::vector<int64_t> expand(const std::vector<ShardPart>& parts) {
  std::vector<int64_t> out;
  for (const ShardPart& p : parts) {
    for (int64_t i = 0; i < p.count; ++i) out.push_back(p.zero ? -1 : p.begin + i);
  }
  return out;
}

void check_model(const Shape& s, int n) {
  const ModelConfig c = config(s);
  ASSERT_TRUE(c.validate().ok()) << s.name << ": " << c.validate().to_string();
  const TensorTypeFn types =
      s.family == Family::kGptOss ? TensorTypeFn(gpt_oss_types) : TensorTypeFn(q4_k_m);
  const std::string at = std::string(s.name) + " over " + std::to_string(n);
  std::map<int64_t, int> q_seen;
  std::map<std::string, int64_t> width_end;  // next expected begin per width tensor
  bool ep = false;                           // whole experts per rank (arc/moe_split.h)
  for (int r = 0; r < n; ++r) {
    Result<ShardPlan> p = make_shard_plan(c, types, n, r);
    ASSERT_TRUE(p.ok()) << at << ": " << p.status().to_string();
    ep = p->ep();
    const ModelConfig& l = p->local;
    // Heads: every real Q head once, with its own KV head in the slot it is grouped with.
    const std::vector<int64_t> q = expand(p->q_parts), kv = expand(p->kv_parts);
    ASSERT_EQ(static_cast<int64_t>(q.size()), l.n_head) << at;
    ASSERT_EQ(static_cast<int64_t>(kv.size()), l.n_kv_head) << at;
    const int64_t group = l.n_head / l.n_kv_head;
    for (size_t j = 0; j < q.size(); ++j) {
      if (q[j] < 0) continue;
      ++q_seen[q[j]];
      EXPECT_EQ(kv[j / group], q[j] / (s.heads / s.kv_heads))
          << at << " rank " << r << " head " << q[j];
    }
    // Every tensor: its part's size and, for column parts, whole blocks.
    for_each_tensor(c, [&](const TensorRef& ref) {
      const TensorShard t = tensor_shard(*p, ref);
      if (t.whole) return;
      const int64_t b = t.columns && ref.spec->n_dims > 1 ? block_of(types(ref)) : 1;
      std::vector<ShardPart> parts = t.parts;
      if (parts.empty()) parts = {{t.begin, t.count, false}};
      for (const ShardPart& part : parts) {
        EXPECT_EQ(part.begin % b, 0) << at << " " << ref.name;
        EXPECT_EQ(part.count % b, 0) << at << " " << ref.name;
      }
      switch (ref.spec->role) {
        case TensorRole::kAttnQ:
          EXPECT_EQ(t.count, l.q_dim()) << at;
          break;
        case TensorRole::kAttnK:
        case TensorRole::kAttnV:
          EXPECT_EQ(t.count, l.kv_dim()) << at;
          break;
        case TensorRole::kAttnOut:
          EXPECT_TRUE(t.columns);
          EXPECT_EQ(t.count, l.q_dim()) << at;
          break;
        case TensorRole::kFfnDownExps:
          if (ep) {  // whole experts: this rank's slices continue the previous rank's
            EXPECT_TRUE(t.slices) << at;
            if (ref.layer != s.dense_lead) break;
            EXPECT_EQ(t.begin, width_end["experts"]) << at;
            width_end["experts"] = t.begin + t.count;
            EXPECT_EQ(t.count, l.ep_n_expert) << at;
            EXPECT_EQ(l.n_ff_exp, s.ff_exp) << at;  // every expert whole
            break;
          }
          [[fallthrough]];
        case TensorRole::kFfnDown:
        case TensorRole::kFfnDownShexp: {
          // Widths: this rank's range continues the previous rank's (one layer of each).
          EXPECT_TRUE(t.columns);
          ASSERT_TRUE(t.parts.empty()) << at << " " << ref.name;
          const std::string key(ref.spec->name);
          if (ref.layer != (ref.spec->role == TensorRole::kFfnDown ? 0 : s.dense_lead)) break;
          EXPECT_EQ(t.begin, width_end[key]) << at << " " << ref.name;
          width_end[key] = t.begin + t.count;
          const int64_t local = ref.spec->role == TensorRole::kFfnDown       ? l.n_ff
                                : ref.spec->role == TensorRole::kFfnDownExps ? l.n_ff_exp
                                                                             : l.n_ff_shexp;
          EXPECT_EQ(t.count, local) << at;
          break;
        }
        default:
          break;
      }
    });
    if (r == 0) {
      for (const std::string& line : p->describe())
        std::printf("  %s: %s\n", at.c_str(), line.c_str());
    }
  }
  EXPECT_EQ(static_cast<int64_t>(q_seen.size()), s.heads) << at;
  for (const auto& [h, times] : q_seen) EXPECT_EQ(times, 1) << at << " head " << h;
  if (s.ff > 0) {
    EXPECT_EQ(width_end["ffn_down.weight"], s.ff) << at;
  }
  if (s.ff_exp > 0 && ep) {
    EXPECT_EQ(width_end["experts"], s.experts) << at;
  } else if (s.ff_exp > 0) {
    EXPECT_EQ(width_end["ffn_down_exps.weight"], s.ff_exp) << at;
  }
  if (s.ff_shexp > 0) {
    EXPECT_EQ(width_end["ffn_down_shexp.weight"], s.ff_shexp) << at;
  }
}

TEST(ShardPlanCatalog, EveryModelSplitsOverTwoThreeAndFourRanks) {
  for (const Shape& s : kCatalog) {
    for (int n : {2, 3, 4}) check_model(s, n);
  }
}

// The splits the issue names: K-quant expert widths that are not whole blocks per rank get
// uneven whole-block shares; 64 heads over 3 ranks are padded.
TEST(ShardPlanCatalog, UnevenSharesAndPaddingWhereTheyDoNotDivide) {
  const ModelConfig q30 = config(kCatalog[0]);  // 768 = 3 Q4_K blocks
  // The block split asked for (auto takes whole experts here: shard_plan_ep_test.cpp).
  Result<ShardPlan> p = make_shard_plan(q30, q4_k_m, 2, 0, MoeSplitMode::kTp);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->ff_exp.count(0), 512);
  EXPECT_EQ(p->ff_exp.count(1), 256);
  p = make_shard_plan(q30, q4_k_m, 4, 3);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->local.n_ff_exp, 0);  // 3 blocks over 4 ranks: the last holds none
  // Qwen3-235B: 64 Q / 4 KV over 3: padded to 6 KV slots, 2 per rank; the last rank's two are
  // zero heads (32 zero Q heads), the fewest KV heads per rank.
  p = make_shard_plan(config(kCatalog[1]), q4_k_m, 3, 2);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->heads.kv_copies, 1);
  EXPECT_EQ(p->local.n_head, 32);
  EXPECT_EQ(p->local.n_kv_head, 2);
  EXPECT_EQ(p->heads.zero_q_heads(), 32);
  ASSERT_EQ(p->q_parts.size(), 1u);
  EXPECT_TRUE(p->q_parts[0].zero);
  // 48 Q / 8 KV (MiniMax-M2) over 3: 3 KV slots of 6 Q heads per rank, one zero slot.
  p = make_shard_plan(config(kCatalog[10]), q4_k_m, 3, 1);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->local.n_head, 18);
  EXPECT_EQ(p->local.n_kv_head, 3);
  EXPECT_EQ(p->heads.zero_q_heads(), 6);
}

}  // namespace
}  // namespace arc
