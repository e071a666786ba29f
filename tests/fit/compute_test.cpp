// The per-box budget, verdicts, largest context, ceiling and link load on a small synthetic model
// whose numbers are easy to check by hand.
#include <gtest/gtest.h>

#include "arc/fit.h"
#include "arc/fit_json.h"

namespace arc::fit {
namespace {

// 40 GiB of weights, 10 GB active, 10 layers of GQA with 8 KV heads x 128: 40,960 bytes/token f16.
ModelSpec toy() {
  ModelSpec m;
  m.name = "toy";
  m.weights_bytes = 40ull << 30;
  m.active_bytes_per_token = 10'000'000'000ull;
  m.arch.layers = 10;
  m.arch.hidden = 1024;
  m.arch.vocab = 1000;
  m.arch.attention = AttentionKind::kGqa;
  m.arch.kv_heads = 8;
  m.arch.key_length = m.arch.value_length = 128;
  return m;
}

Cluster bare(int boxes) {
  Cluster c;
  c.boxes = boxes;
  c.usable_gib = 100;
  c.reserve_gib = 0;
  c.runtime_gib = 0;
  c.bandwidth_gbs = 200;
  c.link_gbs = 20;
  return c;
}

TEST(FitCompute, BudgetAddsUpPerBox) {
  Workload w;
  w.context = 1 << 20;  // 1M tokens x 40,960 bytes = 40 GiB of KV
  w.ubatch_tokens = 512;
  Cluster c = bare(2);
  c.reserve_gib = 4;
  c.runtime_gib = 2;
  auto r = compute(toy(), c, w);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const BoxBudget& b = r->per_box;
  EXPECT_EQ(b.weights, 20ull << 30);
  EXPECT_EQ(b.kv, 20ull << 30);  // 8 heads split 4 + 4
  EXPECT_EQ(b.workspace, 512ull * 1024 * 4 * 12 + 1000ull * 4 / 2);
  EXPECT_EQ(b.reserve, 4ull << 30);
  EXPECT_EQ(b.runtime, 2ull << 30);
  EXPECT_EQ(b.used, b.weights + b.kv + b.workspace + b.reserve + b.runtime);
  EXPECT_EQ(b.headroom, static_cast<int64_t>(100ull << 30) - static_cast<int64_t>(b.used));
  EXPECT_EQ(r->verdict, Verdict::kFits);
  EXPECT_EQ(r->kv_bytes_total, 40ull << 30);
}

TEST(FitCompute, KvHeadsReplicateWhenFewerThanBoxes) {
  ModelSpec m = toy();
  m.arch.kv_heads = 2;  // 3 boxes: each holds ceil(2/3) = 1 of 2 heads
  Workload w;
  w.context = 1000;
  auto r = compute(m, bare(3), w);
  ASSERT_TRUE(r.ok());
  const double whole = 10.0 * 2 * 2 * 128 * 2 * 1000;
  EXPECT_EQ(r->per_box.kv, static_cast<uint64_t>(whole / 2));
}

TEST(FitCompute, MlaLatentIsReplicated) {
  ModelSpec m = toy();
  m.arch.attention = AttentionKind::kMla;
  m.arch.kv_lora_rank = 512;
  m.arch.rope_dim = 64;
  Workload w;
  w.context = 1000;
  auto r = compute(m, bare(4), w);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->per_box.kv, 10ull * 576 * 2 * 1000);
}

TEST(FitCompute, LargestContextMatchesHandArithmetic) {
  ModelSpec m = toy();
  m.arch.hidden = 0;  // no workspace: free memory is exactly usable - weights
  Workload w;
  w.concurrency = 2;
  auto r = compute(m, bare(1), w);
  ASSERT_TRUE(r.ok());
  // (100 - 40) GiB / (40,960 bytes x 2 sequences)
  const int64_t expect = (60ll << 30) / (40960 * 2);
  EXPECT_EQ(r->max_context, expect);
  EXPECT_FALSE(r->max_context_capped);
  m.arch.max_context = 4096;
  r = compute(m, bare(1), w);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->max_context, 4096);
  EXPECT_TRUE(r->max_context_capped);
}

TEST(FitCompute, VerdictsAndReason) {
  ModelSpec m = toy();
  m.arch.hidden = 0;
  Workload w;
  w.context = 1;
  Cluster c = bare(1);
  c.usable_gib = 39;  // weights alone are 40 GiB
  auto r = compute(m, c, w);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->verdict, Verdict::kDoesNotFit);
  EXPECT_NE(r->reason.find("1.0 GiB"), std::string::npos) << r->reason;
  EXPECT_NE(r->reason.find("weights alone"), std::string::npos) << r->reason;
  EXPECT_EQ(r->max_context, 0);
  c.usable_gib = 42;  // 2 GiB headroom, under the 3 GiB margin
  r = compute(m, c, w);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->verdict, Verdict::kTight);
  c.usable_gib = 44;
  r = compute(m, c, w);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->verdict, Verdict::kFits);
}

TEST(FitCompute, KvTooBigNamesTheLargestContext) {
  ModelSpec m = toy();
  m.arch.hidden = 0;
  Workload w;
  w.context = 10'000'000;
  auto r = compute(m, bare(1), w);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->verdict, Verdict::kDoesNotFit);
  EXPECT_NE(r->reason.find("largest context"), std::string::npos) << r->reason;
}

TEST(FitCompute, CeilingAndLinkLoad) {
  ModelSpec m = toy();
  Workload w;
  w.context = 1;
  auto r = compute(m, bare(2), w);
  ASSERT_TRUE(r.ok());
  // 200 GB/s / (5 GB active share + 1 token of KV on half the heads)
  EXPECT_NEAR(r->decode_ceiling_tok_s, 200e9 / (5e9 + 40960 / 2.0), 1e-6);
  // 10 layers x 2 all-reduces x 1024 x 2 bytes x ring 2 x (2-1)/2
  EXPECT_DOUBLE_EQ(r->link_bytes_per_token, 10.0 * 2 * 1024 * 2);
  EXPECT_NEAR(r->link_utilisation, r->link_bytes_per_token * r->decode_ceiling_tok_s / 20e9, 1e-12);
  ASSERT_EQ(r->by_boxes.size(), 4u);
  EXPECT_EQ(r->by_boxes[0].boxes, 1);
  EXPECT_DOUBLE_EQ(r->by_boxes[1].decode_ceiling_tok_s, r->decode_ceiling_tok_s);
  EXPECT_EQ(compute(m, bare(1), w)->link_bytes_per_token, 0.0);
  // Four boxes: the ring sends 2 x 3/4 of each message.
  EXPECT_DOUBLE_EQ(compute(m, bare(4), w)->link_bytes_per_token, 10.0 * 2 * 1024 * 2 * 1.5);
}

TEST(FitCompute, Seed000LinkArithmetic) {
  // "45 layers times 2 transfers times 8KB (hidden size 4096 at bf16), about 0.7MB per token"
  ModelSpec m = toy();
  m.arch.layers = 45;
  m.arch.hidden = 4096;
  Workload w;
  w.context = 1;
  auto r = compute(m, bare(2), w);
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(r->link_bytes_per_token, 45.0 * 2 * 8192);
  EXPECT_NEAR(r->link_bytes_per_token / 1e6, 0.7, 0.05);
}

TEST(FitCompute, ImpossibleInputsAreClearErrors) {
  Workload w;
  Cluster c = bare(0);
  auto r = compute(toy(), c, w);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("boxes"), std::string::npos);
  w.context = 0;
  r = compute(toy(), bare(1), w);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("context"), std::string::npos);
  w.context = 10;
  w.concurrency = 0;
  r = compute(toy(), bare(1), w);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("concurrency"), std::string::npos);
  w.concurrency = 1;
  c = bare(1);
  c.usable_gib = -3;
  EXPECT_FALSE(compute(toy(), c, w).ok());
  ModelSpec empty = toy();
  empty.weights_bytes = 0;
  EXPECT_FALSE(compute(empty, bare(1), w).ok());
}

TEST(FitCompute, JsonCarriesTheReport) {
  Workload w;
  w.context = 4096;
  auto r = compute(toy(), bare(2), w);
  ASSERT_TRUE(r.ok());
  nlohmann::json j = to_json(*r);
  EXPECT_EQ(j["verdict"], "fits");
  EXPECT_EQ(j["per_box"]["weights"].get<uint64_t>(), r->per_box.weights);
  EXPECT_EQ(j["by_boxes"].size(), 4u);
  EXPECT_EQ(j["workload"]["kv_dtype"], "f16");
  EXPECT_EQ(j["max_context"].get<int64_t>(), r->max_context);

  auto c = cluster_from_json(nlohmann::json{{"boxes", 3}, {"reserve_gib", 8.5}});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->boxes, 3);
  EXPECT_EQ(c->reserve_gib, 8.5);
  EXPECT_EQ(c->usable_gib, 121.6);
  auto bad = cluster_from_json(nlohmann::json{{"boxes", 0}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'boxes'"), std::string::npos);
  auto wl = workload_from_json(nlohmann::json{{"kv_dtype", "q8_0"}, {"context", 100}});
  ASSERT_TRUE(wl.ok());
  EXPECT_EQ(wl->kv_dtype, KvDtype::kQ8_0);
  EXPECT_FALSE(workload_from_json(nlohmann::json{{"context", "long"}}).ok());
}

TEST(FitCompute, TextHasBothTables) {
  Workload w;
  auto r = compute(toy(), bare(2), w);
  ASSERT_TRUE(r.ok());
  const std::string t = format_report_text(*r);
  EXPECT_NE(t.find("headroom"), std::string::npos);
  EXPECT_NE(t.find("boxes  verdict"), std::string::npos);
  EXPECT_NE(t.find("decode ceiling"), std::string::npos);
}

}  // namespace
}  // namespace arc::fit

namespace arc::fit {
namespace {

TEST(FitCompute, UnknownKvLayoutLeavesOnlyTheModelLimit) {
  ModelSpec m = toy();
  m.arch.attention = AttentionKind::kUnknown;
  Workload w;
  auto r = compute(m, bare(1), w);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->kv_known);
  EXPECT_EQ(r->per_box.kv, 0u);
  EXPECT_EQ(r->max_context, -1);
  EXPECT_FALSE(r->warnings.empty());
  m.arch.max_context = 5000;
  r = compute(m, bare(1), w);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->max_context, 5000);
  EXPECT_TRUE(r->max_context_capped);
}

}  // namespace
}  // namespace arc::fit
