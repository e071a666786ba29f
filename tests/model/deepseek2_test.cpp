// deepseek2 (DeepSeek-V3 / Kimi-K2 shape, multi-head latent attention): the config read from the
// converter's keys (current and older layouts), clear refusals, logits against the
// double-precision reference (which decompresses keys and values per head; the engine attends
// over the latent cache in the absorbed form), chunked prefill at every split, and thread counts.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>

#include "arc/kv_cache.h"
#include "arc/op_profile.h"
#include "model/blocks.h"
#include "model/reference_check.h"
#include "model/test_util.h"

namespace arc::testing {
namespace {

TestModelOptions ds_model(const char* type, int64_t q_lora = 48) {
  TestModelOptions o = tiny_model({"", Family::kDeepSeek2, 8, type});
  // Layer 0 dense, then MoE; with Q4_K_M layer 2 takes the Q6_K mix. Three layers: YaRN's
  // mscale^2 sharpens the softmax ~1.9x and MLA chains four quantized products per attention,
  // so eight Q4_K_M layers compound the activation quantization past the common tolerance.
  o.n_layer = 3;
  o.n_head = 4;
  o.head_dim = 24;  // 16 no-rope + 8 rope
  o.v_head_dim = 16;
  o.kv_lora_rank = std::string(type).find("_K") != std::string::npos ? 256 : 32;
  o.q_lora_rank = q_lora;
  o.n_dense_lead = 1;
  return o;
}

Result<gguf::File> parse(const std::vector<uint8_t>& b) {
  return gguf::File::parse(b, "deepseek2");
}

// The file with metadata rewritten: `drop` keys removed, `put` keys set.
std::vector<uint8_t> rewrite(const gguf::File& f, const std::vector<std::string>& drop,
                             const std::vector<std::pair<std::string, gguf::Value>>& put,
                             const std::function<bool(const std::string&)>& keep_tensor = {}) {
  gguf::Writer w;
  for (const auto& [k, v] : f.metadata()) {
    if (std::find(drop.begin(), drop.end(), k) == drop.end()) w.set(k, v);
  }
  for (const auto& [k, v] : put) w.set(k, v);
  for (const gguf::TensorInfo& t : f.tensors()) {
    if (keep_tensor && !keep_tensor(t.name)) continue;
    EXPECT_TRUE(w.add_tensor(t.name, t.type, t.shape, f.tensor_data(t)).ok());
  }
  return w.to_bytes();
}

TEST(DeepSeek2Config, ReadsTheConverterKeys) {
  auto bytes = build_test_model(ds_model("F32"));
  ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
  auto f = parse(*bytes);
  ASSERT_TRUE(f.ok());
  auto c = config_from_gguf(*f);
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->family, Family::kDeepSeek2);
  EXPECT_TRUE(c->mla());
  EXPECT_EQ(c->head_dim, 24);
  EXPECT_EQ(c->rot_dim, 8);
  EXPECT_EQ(c->qk_nope_dim(), 16);
  EXPECT_EQ(c->v_head_dim, 16);
  EXPECT_EQ(c->q_lora_rank, 48);
  EXPECT_EQ(c->kv_lora_rank, 32);
  EXPECT_EQ(c->n_kv_head, 1);
  EXPECT_EQ(c->n_dense_lead, 1);
  EXPECT_EQ(c->n_expert_group, 4);
  EXPECT_EQ(c->n_expert_group_used, 2);
  EXPECT_TRUE(c->router_sigmoid && c->norm_topk);
  EXPECT_FLOAT_EQ(c->expert_weights_scale, 2.5f);
  EXPECT_EQ(c->rope_layout, kernels::RopeLayout::kInterleaved);
  // YaRN x40 with yarn_log_multiplier 0.1: scale (1 + 0.1 ln 40)^2 / sqrt(24); the rotation's
  // magnitude stays 1.
  const double m = 1.0 + 0.1 * std::log(40.0);
  EXPECT_NEAR(c->attn_scale, m * m / std::sqrt(24.0), 1e-6);
  EXPECT_NEAR(c->rope_attn_factor * m, 1.0, 1e-6);
  // The latent cache: one row of kv_lora_rank + rot_dim per token and layer.
  EXPECT_EQ(c->kv_values_per_token(), 3 * (32 + 8));
  const KvCacheOptions kvo = kv_cache_options(*c, 16, 4, DType::F16);
  EXPECT_TRUE(kvo.latent);
  EXPECT_EQ(kvo.n_kv_head, 1);
  EXPECT_EQ(kvo.head_dim, 40);
}

TEST(DeepSeek2Config, DeepSeekV3LatentCacheIs70272BytesPerToken) {
  ModelConfig c;
  c.family = Family::kDeepSeek2;
  c.n_layer = 61;
  c.kv_lora_rank = 512;
  c.rot_dim = 64;
  c.head_dim = 192;
  c.n_kv_head = 1;
  EXPECT_EQ(c.kv_values_per_token() * 2, 70272);  // F16
}

TEST(DeepSeek2Config, OlderKeyLayoutReadsTheSame) {
  // Older converters: key_length / value_length are the heads' (192 / 128 in V3), head_count_kv
  // is n_head, no *_mla keys.
  auto bytes = build_test_model(ds_model("F32"));
  ASSERT_TRUE(bytes.ok());
  auto f = parse(*bytes);
  ASSERT_TRUE(f.ok());
  const auto b2 =
      rewrite(*f, {"deepseek2.attention.key_length_mla", "deepseek2.attention.value_length_mla"},
              {{"deepseek2.attention.key_length", gguf::Value::u32(24)},
               {"deepseek2.attention.value_length", gguf::Value::u32(16)},
               {"deepseek2.attention.head_count_kv", gguf::Value::u32(4)}});
  auto f2 = parse(b2);
  ASSERT_TRUE(f2.ok());
  auto c1 = config_from_gguf(*f), c2 = config_from_gguf(*f2);
  ASSERT_TRUE(c1.ok() && c2.ok()) << c2.status().to_string();
  EXPECT_EQ(c2->head_dim, c1->head_dim);
  EXPECT_EQ(c2->v_head_dim, c1->v_head_dim);
  EXPECT_EQ(c2->n_kv_head, 1);
  EXPECT_EQ(c2->attn_scale, c1->attn_scale);
}

TEST(DeepSeek2Config, BrokenFilesAreRefusedWithTheCause) {
  auto bytes = build_test_model(ds_model("F32"));
  ASSERT_TRUE(bytes.ok());
  auto f = parse(*bytes);
  ASSERT_TRUE(f.ok());
  struct Case {
    std::vector<std::string> drop;
    std::vector<std::pair<std::string, gguf::Value>> put;
    const char* want;
  };
  const Case cases[] = {
      {{"deepseek2.attention.kv_lora_rank"}, {}, "deepseek2.attention.kv_lora_rank"},
      {{"deepseek2.expert_gating_func"}, {}, "softmax expert gating"},
      {{}, {{"deepseek2.expert_group_count", gguf::Value::u32(3)}}, "expert_group_count"},
      {{}, {{"deepseek2.rope.dimension_count", gguf::Value::u32(24)}}, "MLA needs"},
  };
  for (const Case& k : cases) {
    const auto b2 = rewrite(*f, k.drop, k.put);
    auto f2 = parse(b2);
    ASSERT_TRUE(f2.ok());
    auto c = config_from_gguf(*f2);
    ASSERT_FALSE(c.ok()) << k.want;
    EXPECT_NE(c.status().message().find(k.want), std::string::npos) << c.status().to_string();
  }
  // The older single attn_kv_b instead of attn_k_b / attn_v_b: told to convert again.
  const auto b3 = rewrite(*f, {}, {}, [](const std::string& n) {
    return n.find("attn_k_b") == std::string::npos && n.find("attn_v_b") == std::string::npos;
  });
  gguf::Writer w;
  auto f3 = parse(b3);
  ASSERT_TRUE(f3.ok());
  for (const auto& [k, v] : f3->metadata()) w.set(k, v);
  for (const gguf::TensorInfo& t : f3->tensors()) {
    ASSERT_TRUE(w.add_tensor(t.name, t.type, t.shape, f3->tensor_data(t)).ok());
  }
  const std::vector<float> kvb(static_cast<size_t>(32 * 4 * 32), 0.0f);
  ASSERT_TRUE(w.add_tensor("blk.0.attn_kv_b.weight", DType::F32, {32, 4 * 32},
                           std::span(reinterpret_cast<const uint8_t*>(kvb.data()),
                                     kvb.size() * sizeof(float)))
                  .ok());
  const auto b4 = w.to_bytes();
  auto f4 = parse(b4);
  ASSERT_TRUE(f4.ok());
  auto c4 = config_from_gguf(*f4);
  ASSERT_FALSE(c4.ok());
  EXPECT_NE(c4.status().message().find("attn_kv_b"), std::string::npos) << c4.status().to_string();
}

struct DsCase {
  const char* name;
  const char* type;
  int64_t q_lora;
  double tol;
};

class DeepSeek2VsReference : public ::testing::TestWithParam<DsCase> {};

TEST_P(DeepSeek2VsReference, PrefillAndDecodeMatch) {
  const DsCase& k = GetParam();
  const TestModelOptions o = ds_model(k.type, k.q_lora);
  auto e = make_engine(o, 2, DType::F32);
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  ReferenceModel ref(e->model->file());
  expect_prefill_and_decode_match(*e, ref, k.name, k.tol);
}

TEST_P(DeepSeek2VsReference, ChunkedPrefillAtEverySplitMatches) {
  const DsCase& k = GetParam();
  auto e = make_engine(ds_model(k.type, k.q_lora), 2, DType::F16, 4);
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  ReferenceModel ref(e->model->file());
  const std::vector<int32_t> prompt = {1, 72, 101, 108, 108, 111, 44, 32, 119};
  // F16 cache: the latent rounded to 11 bits adds ~1e-3 relative error.
  expect_chunked_prefill_matches(*e, ref, prompt, k.name, std::max(k.tol, 5e-3));
}

// F32: float rounding only. Quantized: the kernels quantize activations too (the other families'
// tolerance, forward_test.cpp).
INSTANTIATE_TEST_SUITE_P(Variants, DeepSeek2VsReference,
                         ::testing::Values(DsCase{"f32", "F32", 48, 1e-4},
                                           DsCase{"f32_no_q_lora", "F32", 0, 1e-4},
                                           DsCase{"q8", "Q8_0", 48, 0.08},
                                           DsCase{"q4km", "Q4_K_M", 256, 0.08}),
                         [](const auto& i) { return std::string(i.param.name); });

// Prefill chunks in both MLA forms (mla_block.cpp): a step of two fresh sequences takes the plain
// form (keys and values decompressed per head), a one-token step and a short chunk after a long
// prefix the absorbed one; the profiled backend shows which op ran, and every logit matches the
// double reference (which decompresses, as the plain form does).
TEST(DeepSeek2, PrefillChunksTakeEachMlaFormAndMatch) {
  const TestModelOptions o = ds_model("F32");
  auto bytes = build_test_model(o);
  ASSERT_TRUE(bytes.ok());
  auto f = gguf::File::parse(*bytes, "deepseek2");
  ASSERT_TRUE(f.ok());
  std::unique_ptr<Backend> cpu = make_cpu_backend(2);
  OpProfile profile;
  profile.enabled = true;
  std::unique_ptr<Backend> be = make_profiling_backend(*cpu, &profile);
  auto model = Model::from_file(std::move(*f), *be);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  ASSERT_TRUE((*model)->mla_k_b_t(0).present());
  const ModelConfig& c = (*model)->config();
  auto kv = KvCache::create(*be, kv_cache_options(c, 4, 64, DType::F32));
  ASSERT_TRUE(kv.ok());
  ForwardExecutor exec(**model, *be, **kv);
  ReferenceModel ref((*model)->file());
  const std::vector<int32_t> p1 = {1, 72, 101, 108, 108, 111, 44, 32, 119};
  const std::vector<int32_t> p2 = {1, 87, 111, 114, 108, 100, 33, 10, 50};
  const auto want1 = ref.forward(p1), want2 = ref.forward(p2);
  const int32_t s1 = (*kv)->add_sequence(), s2 = (*kv)->add_sequence();
  ASSERT_TRUE((*kv)->reserve(s1, 9).ok());
  ASSERT_TRUE((*kv)->reserve(s2, 9).ok());
  auto calls = [&](const char* op) {
    for (const OpTime& t : profile.times())
      if (t.op == op) return t.calls;
    return int64_t{0};
  };
  struct Part {
    int32_t seq;
    int64_t begin, end;
  };
  // Each step: its parts, and whether the plain form is expected.
  const std::vector<std::pair<std::vector<Part>, bool>> steps = {
      {{{s1, 0, 6}, {s2, 0, 3}}, true},  // fresh rows: P = T
      {{{s1, 6, 7}}, false},             // one token: T = 1, S = P
      {{{s2, 3, 9}, {s1, 7, 9}}, false}  // 8 tokens over 18 rows: decompressing costs more
  };
  for (const auto& [parts, plain] : steps) {
    std::vector<int32_t> toks, pos, seqs, rows;
    int64_t pairs = 0, n_rows = 0;
    for (const Part& part : parts) {
      const auto& prompt = part.seq == s1 ? p1 : p2;
      for (int64_t i = part.begin; i < part.end; ++i) {
        toks.push_back(prompt[static_cast<size_t>(i)]);
        pos.push_back(static_cast<int32_t>(i));
        seqs.push_back(part.seq);
        rows.push_back(static_cast<int32_t>(rows.size()));
        pairs += i + 1;
      }
      n_rows += part.end;
    }
    EXPECT_EQ(mla_plain_cheaper(c, static_cast<int64_t>(toks.size()), n_rows, pairs), plain);
    const int64_t plain_before = calls("mla_plain_attention"), abs_before = calls("mla_attention");
    auto got = exec.run({toks, pos, seqs, rows});
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    EXPECT_EQ(calls("mla_plain_attention") - plain_before, plain ? c.n_layer : 0);
    EXPECT_EQ(calls("mla_attention") - abs_before, plain ? 0 : c.n_layer);
    const int64_t v = ref.n_vocab();
    for (size_t r = 0; r < toks.size(); ++r) {
      const auto& want = (seqs[r] == s1 ? want1 : want2)[static_cast<size_t>(pos[r])];
      const double scale = std::max(1.0, max_abs_logit(want));
      for (int64_t t = 0; t < v; ++t) {
        ASSERT_NEAR((*got)[r * v + t], want[t], 1e-4 * scale)
            << (plain ? "plain" : "absorbed") << " row " << r << " logit " << t;
      }
    }
  }
}

// The prefix cache over latent blocks: a second request sharing 8 of 9 prompt tokens attaches
// the first's blocks and computes one token; its logits are the first request's at that
// position, and match the reference.
TEST(DeepSeek2, PrefixCacheReusesLatentBlocks) {
  auto e = make_engine(ds_model("F32"), 2, DType::F16, 4);
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  ReferenceModel ref(e->model->file());
  const std::vector<int32_t> a = {1, 72, 101, 108, 108, 111, 44, 32, 119};
  std::vector<int32_t> b(a.begin(), a.begin() + 8);
  b.push_back(33);
  const int64_t v = ref.n_vocab();
  auto run = [&](int32_t seq, const std::vector<int32_t>& toks, int64_t from) {
    std::vector<int32_t> t(toks.begin() + from, toks.end()), pos, seqs, rows;
    for (int64_t i = from; i < static_cast<int64_t>(toks.size()); ++i) {
      pos.push_back(static_cast<int32_t>(i));
      seqs.push_back(seq);
      rows.push_back(static_cast<int32_t>(i - from));
    }
    return e->exec->run({t, pos, seqs, rows});
  };
  const int32_t sa = e->kv->add_sequence();
  ASSERT_TRUE(e->kv->reserve(sa, 9).ok());
  ASSERT_TRUE(run(sa, a, 0).ok());
  e->kv->commit(sa, a, 9);
  e->kv->free_sequence(sa);  // its full blocks stay cached
  const int32_t sb = e->kv->add_sequence();
  const int64_t reused = e->kv->attach_cached_prefix(sb, b);
  EXPECT_EQ(reused, 8);
  ASSERT_TRUE(e->kv->reserve(sb, 9).ok());
  auto got = run(sb, b, reused);
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  ASSERT_EQ(got->size(), static_cast<size_t>((9 - reused) * v));
  const auto want = ref.forward(b).back();
  const double scale = std::max(1.0, max_abs_logit(want));
  for (int64_t t = 0; t < v; ++t) {
    ASSERT_NEAR((*got)[(8 - reused) * v + t], want[t], 5e-3 * scale) << "logit " << t;
  }
}

TEST(DeepSeek2, LogitsDoNotDependOnThreadCount) {
  for (const char* type : {"F32", "Q4_K_M"}) {
    SCOPED_TRACE(type);
    TestModelOptions o = ds_model(type);
    o.n_head = 12;  // more heads than one attention work item holds
    const auto one = prefill_and_greedy_logits(o, 1), three = prefill_and_greedy_logits(o, 3);
    ASSERT_FALSE(one.empty());
    ASSERT_EQ(one.size(), three.size());
    EXPECT_EQ(0, std::memcmp(one.data(), three.data(), one.size() * sizeof(float)));
  }
}

}  // namespace
}  // namespace arc::testing
