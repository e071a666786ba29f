// KV bytes per token against values computed by hand from the published configs
// (../shared/fixtures/model_configs/model_configs.json).
#include <gtest/gtest.h>

#include <algorithm>

#include "arc/catalog.h"
#include "arc/fit.h"

namespace arc::fit {
namespace {

Architecture gqa(int64_t layers, int64_t kv_heads, int64_t head_dim) {
  Architecture a;
  a.layers = layers;
  a.attention = AttentionKind::kGqa;
  a.kv_heads = kv_heads;
  a.key_length = a.value_length = head_dim;
  return a;
}

TEST(FitKv, DeepSeekV3MlaIs70272BytesPerTokenAt16Bits) {
  Architecture a;
  a.layers = 61;
  a.attention = AttentionKind::kMla;
  a.kv_lora_rank = 512;
  a.rope_dim = 64;
  // 61 layers x (512 + 64) x 2 bytes
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(a, KvDtype::kF16), 70272.0);
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(a, KvDtype::kFp8), 35136.0);
  EXPECT_DOUBLE_EQ(kv_bytes_for_tokens(a, 1000, KvDtype::kF16), 70272000.0);
}

TEST(FitKv, Qwen3_30B_A3B_Gqa) {
  // 48 layers x 2 (K and V) x 4 KV heads x 128 x 2 bytes = 98,304
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(gqa(48, 4, 128), KvDtype::kF16), 98304.0);
}

TEST(FitKv, Qwen3_235B_Gqa_Q8) {
  // 94 x 2 x 4 x 128 = 96,256 elements; q8_0 stores 32 in 34 bytes -> 102,272 bytes
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(gqa(94, 4, 128), KvDtype::kQ8_0), 102272.0);
}

TEST(FitKv, GptOssSlidingLayersCapAtWindow) {
  Architecture a = gqa(36, 8, 64);  // gpt-oss-120b: half the layers slide over 128 tokens
  a.sliding_window = 128;
  a.sliding_layers = 18;
  const double per_layer = 2.0 * 8 * 64 * 2;  // 2,048 bytes
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(a, KvDtype::kF16), 36 * per_layer);
  // 100 tokens: under the window, every layer holds all of them.
  EXPECT_DOUBLE_EQ(kv_bytes_for_tokens(a, 100, KvDtype::kF16), 36 * per_layer * 100);
  // 10,000 tokens: 18 full layers hold 10,000, 18 sliding layers hold 128.
  EXPECT_DOUBLE_EQ(kv_bytes_for_tokens(a, 10000, KvDtype::kF16),
                   per_layer * (18.0 * 10000 + 18.0 * 128));
}

TEST(FitKv, LinearLayersHoldFixedState) {
  Architecture a = gqa(48, 2, 256);  // Qwen3-Next: 12 full-attention layers, 36 DeltaNet layers
  a.linear_layers = 36;
  a.linear_state_bytes_per_layer = 2195456;
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(a, KvDtype::kF16), 12.0 * 2 * 2 * 256 * 2);
  EXPECT_EQ(recurrent_state_bytes(a), 36u * 2195456u);
}

TEST(FitKv, DifferentKeyAndValueWidths) {
  Architecture a = gqa(10, 4, 0);
  a.key_length = 192;
  a.value_length = 128;
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(a, KvDtype::kF32), 10.0 * 4 * (192 + 128) * 4);
}

TEST(FitKv, UnknownLayoutIsZero) {
  Architecture a;
  a.layers = 45;
  EXPECT_EQ(kv_bytes_per_token(a, KvDtype::kF16), 0.0);
}

TEST(FitKv, DtypeNames) {
  for (auto [name, bytes] : {std::pair{"f16", 2.0},
                             {"bf16", 2.0},
                             {"f32", 4.0},
                             {"fp8", 1.0},
                             {"q8_0", 34.0 / 32},
                             {"q4_0", 18.0 / 32}}) {
    auto t = parse_kv_dtype(name);
    ASSERT_TRUE(t.ok()) << name;
    EXPECT_EQ(kv_dtype_name(*t), name);
    EXPECT_DOUBLE_EQ(kv_dtype_bytes(*t), bytes);
  }
  auto bad = parse_kv_dtype("int3");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("int3"), std::string::npos);
}

// The engine allocates, per box, a state slot for each sequence, prefix-cache snapshots of the
// state (two per sequence, at least 8) and one zero slot (sched/model_loader.cpp): the report
// counts them all.
TEST(FitKv, RecurrentStateCountsPrefixSnapshots) {
  ModelSpec m;
  m.name = "qwen3-next shape";
  m.weights_bytes = 1ull << 30;
  m.active_bytes_per_token = 1ull << 28;
  m.arch = gqa(48, 2, 256);
  m.arch.linear_layers = 36;
  m.arch.linear_state_bytes_per_layer = 2195456;
  Cluster c;
  for (int conc : {1, 4, 16}) {
    Workload w;
    w.context = 4096;
    w.concurrency = conc;
    auto r = compute(m, c, w);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    const uint64_t slots = 1 + conc + std::max(8, 2 * conc);
    EXPECT_EQ(r->per_box.recurrent_state, slots * 36u * 2195456u) << conc;
  }
}

}  // namespace
}  // namespace arc::fit

namespace arc::fit {
namespace {

// The built-in catalog's gpt-oss entries at their full 128K context, against hand arithmetic:
// per layer and token 8 KV heads x (64 + 64) x 2 bytes = 2,048 bytes; the full-attention half of
// the layers holds all 131,072 tokens, the sliding half only its window of 128.
TEST(FitKv, GptOssCatalogEntriesAt128KCountTheWindow) {
  auto cat = catalog::load_catalog(ARC_CATALOG_FILE);
  ASSERT_TRUE(cat.ok()) << cat.status().to_string();
  struct Want {
    const char* id;
    uint64_t per_sequence;
  };
  // 120b: 18 x 131072 x 2048 + 18 x 128 x 2048 = 4,831,838,208 + 4,718,592.
  // 20b:  12 x 131072 x 2048 + 12 x 128 x 2048 = 3,221,225,472 + 3,145,728.
  for (const Want& w : {Want{"gpt-oss-120b", 4836556800ull}, Want{"gpt-oss-20b", 3224371200ull}}) {
    SCOPED_TRACE(w.id);
    const catalog::Model* m = cat->find(w.id);
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(m->arch.max_context, 131072);
    EXPECT_DOUBLE_EQ(kv_bytes_for_tokens(m->arch, 131072, KvDtype::kF16),
                     static_cast<double>(w.per_sequence));
    // Per token of a full context: 2,048 x 36 would be 73,728 for 120b without the window.
    EXPECT_NEAR(kv_bytes_for_tokens(m->arch, 131072, KvDtype::kF16) / 131072.0,
                w.per_sequence / 131072.0, 1e-6);
    // Four sequences at 128K: four times one.
    ASSERT_FALSE(m->builds.empty());
    auto spec = catalog::model_spec(*m, m->builds.front());
    ASSERT_TRUE(spec.ok()) << spec.status().to_string();
    Workload wl;
    wl.context = 131072;
    wl.concurrency = 4;
    Cluster one;
    auto r = compute(*spec, one, wl);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_EQ(r->kv_bytes_total, 4 * w.per_sequence);
  }
}

}  // namespace
}  // namespace arc::fit
