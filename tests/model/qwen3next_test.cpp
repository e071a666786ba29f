// qwen3next (Qwen3-Next shape: Gated DeltaNet layers with a full-attention layer every
// full_attention_interval layers): the config read from the converter's keys, logits against
// the double-precision reference (transformers' recurrent delta rule), chunked prefill at every
// split, thread counts, and the prefix cache over recurrent-state snapshots: with the cache on
// and off the same greedy tokens and logits, for a shared prefix, a branch, an evicted snapshot
// and sequences batched together.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "arc/kv_cache.h"
#include "model/reference_check.h"
#include "model/test_util.h"

namespace arc::testing {
namespace {

TestModelOptions q3n_model(const char* type, int64_t interval = 2) {
  TestModelOptions o = tiny_model({"", Family::kQwen3Next, 8, type});
  o.n_layer = 4;
  o.full_attn_interval = interval;
  o.head_dim = 16;  // rot_dim 4: a quarter, as Qwen3-Next's 64 of 256
  o.ssm_k_heads = 2;
  o.ssm_v_heads = 4;  // two v heads per k head
  o.ssm_head_dim = std::string(type).find("_K") != std::string::npos ? 32 : 16;
  return o;
}

TEST(Qwen3NextConfig, ReadsTheConverterKeys) {
  auto bytes = build_test_model(q3n_model("F32", 4));
  ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
  auto f = gguf::File::parse(*bytes, "qwen3next");
  ASSERT_TRUE(f.ok());
  auto c = config_from_gguf(*f);
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->family, Family::kQwen3Next);
  EXPECT_TRUE(c->hybrid() && c->attn_out_gate && c->qk_norm && c->norm_topk);
  EXPECT_FALSE(c->router_sigmoid);
  EXPECT_EQ(c->ffn, FfnKind::kMoeShared);
  EXPECT_EQ(c->full_attn_interval, 4);
  EXPECT_EQ(c->rot_dim, 4);
  EXPECT_EQ(c->ssm_k_heads, 2);
  EXPECT_EQ(c->ssm_v_heads, 4);
  EXPECT_EQ(c->ssm_head_k_dim, 16);
  EXPECT_EQ(c->ssm_head_v_dim, 16);
  EXPECT_EQ(c->ssm_conv_kernel, 4);
  for (int64_t l = 0; l < 4; ++l) EXPECT_EQ(c->layer_recurrent(l), l != 3) << l;
  // K/V only in the full-attention layer; the recurrent layers hold a fixed state instead.
  EXPECT_EQ(c->kv_values_per_token(), 2 * 1 * c->n_kv_head * c->head_dim);
  const KvCacheOptions kvo = kv_cache_options(*c, 16, 4, DType::F16);
  EXPECT_EQ(kvo.recurrent_layers, (std::vector<uint8_t>{1, 1, 1, 0}));
  EXPECT_EQ(kvo.state_conv_floats, 3 * (2 * 2 * 16 + 4 * 16));
  EXPECT_EQ(kvo.state_delta_floats, 4 * 16 * 16);
}

TEST(Qwen3NextConfig, Qwen3Next80BStateSizes) {
  // The catalog's figure (resources/catalog/models.json): 2,195,456 bytes per linear layer.
  ModelConfig c;
  c.family = Family::kQwen3Next;
  c.n_layer = 48;
  c.full_attn_interval = 4;
  c.n_kv_head = 2;
  c.head_dim = 256;
  c.ssm_conv_kernel = 4;
  c.ssm_k_heads = 16;
  c.ssm_v_heads = 32;
  c.ssm_head_k_dim = c.ssm_head_v_dim = 128;
  EXPECT_EQ(c.n_recurrent_layers(), 36);
  EXPECT_EQ(4 * (c.ssm_conv_state_floats() + c.ssm_delta_state_floats()), 2195456);
  EXPECT_EQ(c.recurrent_state_bytes(), 36 * 2195456);
  EXPECT_EQ(c.kv_values_per_token() * 2, 12 * 2 * 2 * 256 * 2);  // F16, 12 attention layers
}

TEST(Qwen3NextConfig, RefusesTheFusedLegacyProjection) {
  auto bytes = build_test_model(q3n_model("F32"));
  ASSERT_TRUE(bytes.ok());
  auto f = gguf::File::parse(*bytes, "qwen3next");
  ASSERT_TRUE(f.ok());
  gguf::Writer w;
  for (const auto& [k, v] : f->metadata()) w.set(k, v);
  for (const gguf::TensorInfo& t : f->tensors()) {
    const std::string name = t.name == "blk.0.attn_qkv.weight" ? "blk.0.ssm_in.weight" : t.name;
    ASSERT_TRUE(w.add_tensor(name, t.type, t.shape, f->tensor_data(t)).ok());
  }
  const auto b2 = w.to_bytes();
  auto f2 = gguf::File::parse(b2, "legacy");
  ASSERT_TRUE(f2.ok());
  auto c = config_from_gguf(*f2);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().to_string().find("convert it again"), std::string::npos);
}

struct Q3nCase {
  const char* name;
  const char* type;
  int64_t interval;
  double tol;
};

class Qwen3NextVsReference : public ::testing::TestWithParam<Q3nCase> {};

TEST_P(Qwen3NextVsReference, PrefillAndDecodeMatch) {
  const Q3nCase& k = GetParam();
  auto e = make_engine(q3n_model(k.type, k.interval), 2, DType::F32);
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  ReferenceModel ref(e->model->file());
  expect_prefill_and_decode_match(*e, ref, k.name, k.tol);
}

TEST_P(Qwen3NextVsReference, ChunkedPrefillAtEverySplitMatches) {
  const Q3nCase& k = GetParam();
  auto e = make_engine(q3n_model(k.type, k.interval), 2, DType::F16, 4);
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  ReferenceModel ref(e->model->file());
  const std::vector<int32_t> prompt = {1, 72, 101, 108, 108, 111, 44, 32, 119};
  expect_chunked_prefill_matches(*e, ref, prompt, k.name, std::max(k.tol, 5e-3));  // F16 cache
}

// Quantized: the CPU quantizes activations (Q8_0 / Q8_K) where the reference does not; Q8_0 rows
// differ by up to 0.07 of their scale, Q4_K_M rows by up to 0.083.
INSTANTIATE_TEST_SUITE_P(Variants, Qwen3NextVsReference,
                         ::testing::Values(Q3nCase{"f32", "F32", 2, 1e-4},
                                           Q3nCase{"f32_interval4", "F32", 4, 1e-4},
                                           Q3nCase{"q8", "Q8_0", 2, 0.08},
                                           Q3nCase{"q4km", "Q4_K_M", 2, 0.1}),
                         [](const auto& i) { return std::string(i.param.name); });

// A step that breaks a sequence's run or skips positions is refused (the recurrent state
// cannot go back).
TEST(Qwen3Next, RefusesStepsThatDoNotContinueTheState) {
  auto e = make_engine(q3n_model("F32"), 1, DType::F32, 4);
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  const int32_t seq = e->kv->add_sequence();
  ASSERT_TRUE(e->kv->reserve(seq, 8).ok());
  const std::vector<int32_t> toks = {5, 6}, pos = {1, 2}, seqs = {seq, seq};
  auto r = e->exec->run({toks, pos, seqs, {}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().to_string().find("continuing its state"), std::string::npos);
}

TEST(Qwen3Next, LogitsDoNotDependOnThreadCount) {
  for (const char* type : {"F32", "Q4_K_M"}) {
    SCOPED_TRACE(type);
    const TestModelOptions o = q3n_model(type);
    const auto one = prefill_and_greedy_logits(o, 1), three = prefill_and_greedy_logits(o, 3);
    ASSERT_FALSE(one.empty());
    ASSERT_EQ(one.size(), three.size());
    EXPECT_EQ(0, std::memcmp(one.data(), three.data(), one.size() * sizeof(float)));
  }
}

}  // namespace
}  // namespace arc::testing
