// glm4moe and minimax-m2: config from metadata (MTP layers, leading dense layers, routing keys),
// tensor validation of the MTP layers, and engine logits against the double-precision reference
// forward (tests/model/reference_forward.cpp, from transformers' definitions), prefill and
// decode, F32 and quantized; 1 and 3 threads bit-identical.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "arc/gguf_summary.h"
#include "arc/model_arch.h"
#include "model/reference_check.h"
#include "model/reference_forward.h"
#include "model/test_util.h"

namespace arc::testing {
namespace {

double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::fabs(x));
  return m;
}

TestModelOptions model_of(const ModelCase& c) {
  TestModelOptions o = tiny_model(c);
  o.n_layer = std::max<int64_t>(o.n_layer, 3);  // GLM: a dense layer, then MoE layers
  o.n_expert_used = std::min<int64_t>(o.n_expert, 3);
  if (std::string(c.type) != "F32") o.n_expert_used = o.n_expert;  // see tiny_model
  return o;
}

Result<ModelConfig> config_of(const TestModelOptions& o) {
  ARC_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, build_test_model(o));
  ARC_ASSIGN_OR_RETURN(gguf::File f, gguf::File::parse(bytes, "cfg"));
  return config_from_gguf(f);
}

TEST(Glm4MoeConfig, ReadsTheConverterKeys) {
  TestModelOptions o = model_of({"", Family::kGlm4Moe, 8, "F32"});
  o.n_nextn = 1;
  o.n_dense_lead = 2;
  auto c = config_of(o);
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->family, Family::kGlm4Moe);
  EXPECT_EQ(c->n_layer, o.n_layer);  // block_count minus the MTP layer
  EXPECT_EQ(c->n_nextn, 1);
  EXPECT_EQ(c->n_dense_lead, 2);
  EXPECT_TRUE(c->dense_layer(1));
  EXPECT_FALSE(c->dense_layer(2));
  EXPECT_EQ(c->ffn, FfnKind::kMoeShared);
  EXPECT_EQ(c->n_ff_shexp, o.n_ff_exp);  // one shared expert of the experts' width
  EXPECT_EQ(c->n_ff, o.n_ff);
  EXPECT_TRUE(c->router_sigmoid);
  EXPECT_TRUE(c->norm_topk);
  EXPECT_FLOAT_EQ(c->expert_weights_scale, 2.5f);
  EXPECT_TRUE(c->qkv_bias);
  EXPECT_FALSE(c->qk_norm);
  EXPECT_EQ(c->rot_dim, o.head_dim / 2);
  // Per layer: dense tensors in the leading layers, experts (and their bias) after.
  int dense = 0, moe = 0, bias = 0, shexp_gate = 0;
  for_each_tensor(*c, [&](const TensorRef& r) {
    dense += r.spec->role == TensorRole::kFfnGate;
    moe += r.spec->role == TensorRole::kFfnGateExps;
    bias += r.spec->role == TensorRole::kFfnExpProbsB;
    shexp_gate += r.spec->role == TensorRole::kFfnShexpGate;
    EXPECT_LT(r.layer, o.n_layer) << r.name;  // MTP layers are not loaded
  });
  EXPECT_EQ(dense, 2);
  EXPECT_EQ(moe, o.n_layer - 2);
  EXPECT_EQ(bias, o.n_layer - 2);
  EXPECT_EQ(shexp_gate, 0);  // GLM's shared expert has no gate
  int mtp = 0;
  for_each_mtp_tensor(*c, [&](const TensorRef& r) {
    EXPECT_EQ(r.layer, o.n_layer) << r.name;
    mtp += r.spec->role == TensorRole::kNextnEhProj;
  });
  EXPECT_EQ(mtp, 1);

  o.qk_norm = true;  // GLM-4.5 355B
  c = config_of(o);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->qk_norm);
  EXPECT_FALSE(c->qk_norm_full);
}

TEST(MiniMaxM2Config, ReadsTheConverterKeys) {
  auto c = config_of(model_of({"", Family::kMiniMaxM2, 8, "F32"}));
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->family, Family::kMiniMaxM2);
  EXPECT_EQ(c->ffn, FfnKind::kMoe);
  EXPECT_TRUE(c->qk_norm_full);
  EXPECT_TRUE(c->router_sigmoid);
  EXPECT_TRUE(c->norm_topk);
  EXPECT_FLOAT_EQ(c->expert_weights_scale, 1.0f);
  EXPECT_EQ(c->n_nextn, 0);
  bool full_q = false;
  for_each_tensor(*c, [&](const TensorRef& r) {
    if (r.spec->role == TensorRole::kAttnQNorm) full_q = r.shape[0] == c->q_dim();
  });
  EXPECT_TRUE(full_q);
}

// Rewrites one metadata key or drops one tensor of a generated file and expects the load to
// fail naming the cause.
struct Broken {
  std::string drop_tensor;
  std::string key;
  gguf::Value value;
};

Status load_broken(const TestModelOptions& o, const Broken& b) {
  ARC_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, build_test_model(o));
  ARC_ASSIGN_OR_RETURN(gguf::File f, gguf::File::parse(bytes, "src"));
  gguf::Writer w;
  for (const auto& [k, v] : f.metadata()) w.set(k, k == b.key ? b.value : v);
  for (const gguf::TensorInfo& t : f.tensors()) {
    if (t.name == b.drop_tensor) continue;
    auto data = f.tensor_data(t);
    ARC_RETURN_IF_ERROR(
        w.add_tensor(t.name, t.type, t.shape, std::vector<uint8_t>(data.begin(), data.end())));
  }
  std::vector<uint8_t> out = w.to_bytes();
  ARC_ASSIGN_OR_RETURN(gguf::File g, gguf::File::parse(out, "broken"));
  auto be = make_cpu_backend(1);
  return Model::from_file(std::move(g), *be).status();
}

TEST(Glm4MoeConfig, BrokenFilesAreRefusedWithTheCause) {
  const TestModelOptions o = model_of({"", Family::kGlm4Moe, 8, "F32"});
  const std::string mtp = "blk." + std::to_string(o.n_layer) + ".";
  Status s = load_broken(o, {mtp + "nextn.eh_proj.weight", "", {}});
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("nextn.eh_proj"), std::string::npos) << s.to_string();
  EXPECT_NE(s.message().find("multi-token-prediction"), std::string::npos) << s.to_string();
  // Optional MTP tensors may be absent.
  s = load_broken(o, {mtp + "nextn.shared_head_head.weight", "", {}});
  EXPECT_TRUE(s.ok()) << s.to_string();
  s = load_broken(o, {"blk.1.exp_probs_b.bias", "", {}});
  EXPECT_NE(s.message().find("exp_probs_b"), std::string::npos) << s.to_string();
  s = load_broken(o, {"", "glm4moe.nextn_predict_layers", gguf::Value::u32(50)});
  EXPECT_NE(s.message().find("nextn_predict_layers"), std::string::npos) << s.to_string();
  s = load_broken(o, {"", "glm4moe.expert_gating_func", gguf::Value::u32(4)});
  EXPECT_NE(s.message().find("expert_gating_func"), std::string::npos) << s.to_string();
  s = load_broken(o, {"", "glm4moe.leading_dense_block_count", gguf::Value::u32(2)});
  EXPECT_NE(s.message().find("blk.1.ffn_gate.weight"), std::string::npos) << s.to_string();
}

TEST(MiniMaxM2Config, PerHeadNormIsRefused) {
  // A q norm of one head's width where the family has one over all heads.
  TestModelOptions o = model_of({"", Family::kMiniMaxM2, 8, "F32"});
  auto bytes = build_test_model(o);
  ASSERT_TRUE(bytes.ok());
  auto f = gguf::File::parse(*bytes, "src");
  ASSERT_TRUE(f.ok());
  gguf::Writer w;
  for (const auto& [k, v] : f->metadata()) w.set(k, v);
  for (const gguf::TensorInfo& t : f->tensors()) {
    auto data = f->tensor_data(t);
    std::vector<uint8_t> d(data.begin(), data.end());
    std::vector<int64_t> shape = t.shape;
    if (t.name == "blk.0.attn_q_norm.weight") {
      shape = {o.head_dim};
      d.resize(static_cast<size_t>(o.head_dim) * 4);
    }
    ASSERT_TRUE(w.add_tensor(t.name, t.type, shape, d).ok());
  }
  const std::vector<uint8_t> out = w.to_bytes();
  auto g = gguf::File::parse(out, "broken");
  ASSERT_TRUE(g.ok());
  auto be = make_cpu_backend(1);
  Status s = Model::from_file(std::move(*g), *be).status();
  EXPECT_NE(s.message().find("attn_q_norm"), std::string::npos) << s.to_string();
}

// inspect's summary: the routing keys, the MTP layer and its bytes, left out of the bytes a
// token reads.
TEST(Glm4MoeConfig, InspectShowsRoutingAndMtpLayer) {
  TestModelOptions o = model_of({"", Family::kGlm4Moe, 8, "F32"});
  auto bytes = build_test_model(o);
  ASSERT_TRUE(bytes.ok());
  auto f = gguf::File::parse(*bytes, "inspect");
  ASSERT_TRUE(f.ok());
  const gguf::ModelSummary s = gguf::summarize(*f);
  EXPECT_TRUE(s.known_architecture);
  EXPECT_EQ(s.hp.block_count, o.n_layer + 1);
  EXPECT_EQ(s.hp.nextn_predict_layers, 1);
  EXPECT_EQ(s.hp.leading_dense_block_count, o.n_dense_lead);
  EXPECT_EQ(s.hp.expert_shared_count, 1);
  EXPECT_EQ(s.hp.expert_gating_func, 2);
  EXPECT_EQ(s.hp.expert_weights_norm, true);
  EXPECT_EQ(s.hp.rope_dimension_count, o.head_dim / 2);
  ASSERT_TRUE(s.active_bytes_per_token.has_value());
  const uint64_t mtp = s.bytes_by_layer.at(o.n_layer);
  EXPECT_EQ(s.mtp_bytes, mtp);
  // The engine's own count (weights of the forward layers) agrees with inspect's.
  auto be = make_cpu_backend(1);
  auto m = Model::from_file(std::move(*f), *be);
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_EQ((*m)->weight_bytes(), s.tensor_bytes - mtp);
  EXPECT_LT(*s.active_bytes_per_token, s.tensor_bytes - mtp);
}

class GlmMiniMaxVsReference : public ::testing::TestWithParam<ModelCase> {};

TEST_P(GlmMiniMaxVsReference, PrefillAndDecodeMatch) {
  const ModelCase c = GetParam();
  const TestModelOptions o = model_of(c);
  auto e = make_engine(o, 2);
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  auto f = gguf::File::parse(e->bytes, "ref");
  ASSERT_TRUE(f.ok());
  ReferenceModel ref(*f);

  // F32 weights: only float rounding differs. Quantized: the kernels may quantize activations.
  const double tol = std::string(c.type) == "F32" ? 2e-3 : 0.08;
  expect_prefill_and_decode_match(*e, ref, c.name, tol);
}

// Prefill then eight decode steps; every logit of 1 and 3 threads bit for bit.
TEST_P(GlmMiniMaxVsReference, ThreadCountsAgreeBitForBit) {
  const ModelCase c = GetParam();
  const TestModelOptions o = model_of(c);
  std::vector<std::vector<float>> runs;
  for (int threads : {1, 3}) {
    auto e = make_engine(o, threads);
    ASSERT_TRUE(e.ok()) << e.status().to_string();
    std::vector<float> logits;
    std::vector<int32_t> toks = {5, 17, 99, 3, 250, 7, 8};
    const int32_t seq = e->kv->add_sequence();
    ASSERT_TRUE(e->kv->reserve(seq, 32).ok());
    std::vector<int32_t> pos(toks.size()), seqs(toks.size(), seq);
    for (size_t i = 0; i < pos.size(); ++i) pos[i] = static_cast<int32_t>(i);
    auto r = e->exec->run({toks, pos, seqs, {}});
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    for (int step = 0; step < 8; ++step) {
      logits.insert(logits.end(), r->begin(), r->end());
      const int32_t next =
          static_cast<int32_t>(std::max_element(r->begin(), r->end()) - r->begin());
      const int32_t p = static_cast<int32_t>(toks.size());
      toks.push_back(next);
      r = e->exec->run({std::span(&next, 1), std::span(&p, 1), std::span(&seq, 1), {}});
      ASSERT_TRUE(r.ok()) << r.status().to_string();
    }
    runs.push_back(std::move(logits));
  }
  ASSERT_EQ(runs[0].size(), runs[1].size());
  EXPECT_EQ(std::memcmp(runs[0].data(), runs[1].data(), runs[0].size() * sizeof(float)), 0)
      << c.name << ": 1 and 3 threads differ";
}

INSTANTIATE_TEST_SUITE_P(
    Families, GlmMiniMaxVsReference,
    ::testing::Values(ModelCase{"glm4moe_f32", Family::kGlm4Moe, 8, "F32"},
                      ModelCase{"glm4moe_q8", Family::kGlm4Moe, 8, "Q8_0"},
                      ModelCase{"glm4moe_q4km", Family::kGlm4Moe, 8, "Q4_K_M"},
                      ModelCase{"minimax_m2_f32", Family::kMiniMaxM2, 8, "F32"},
                      ModelCase{"minimax_m2_q4km", Family::kMiniMaxM2, 8, "Q4_K_M"}),
    [](const auto& info) { return std::string(info.param.name); });

// GLM-4.5 355B's per-head q/k norms, against the reference.
TEST(Glm4Moe, QkNormVariantMatchesReference) {
  TestModelOptions o = model_of({"glm_qk", Family::kGlm4Moe, 8, "F32"});
  o.qk_norm = true;
  auto e = make_engine(o, 2);
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  auto f = gguf::File::parse(e->bytes, "ref");
  ASSERT_TRUE(f.ok());
  ReferenceModel ref(*f);
  const std::vector<int32_t> toks = {3, 1, 4, 1, 5, 9, 2, 6};
  const auto want = ref.forward(toks);
  const int32_t seq = e->kv->add_sequence();
  ASSERT_TRUE(e->kv->reserve(seq, 8).ok());
  std::vector<int32_t> pos(toks.size()), seqs(toks.size(), seq);
  for (size_t i = 0; i < pos.size(); ++i) pos[i] = static_cast<int32_t>(i);
  auto got = e->exec->run({toks, pos, seqs, {}});
  ASSERT_TRUE(got.ok());
  const double scale = std::max(1.0, max_abs(want.back()));
  for (int64_t v = 0; v < ref.n_vocab(); ++v) {
    ASSERT_NEAR((*got)[v], want.back()[v], 2e-3 * scale) << v;
  }
}

}  // namespace
}  // namespace arc::testing
