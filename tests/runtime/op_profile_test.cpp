// The op-timing backend of `bench --profile-ops`: wrapped around the CPU backend it must give the
// logits of the bare backend bit for bit, count each op once per call (a MoE layer runs one
// moe_ffn and one paged_attention per step), and time nothing while disabled.
#include "arc/op_profile.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "model/test_util.h"

namespace arc::testing {
namespace {

std::vector<float> decode_logits(const Model& m, Backend& be) {
  const ModelConfig& c = m.config();
  auto kv = KvCache::create(be, {c.n_layer, c.n_kv_head, c.head_dim, 16, 8, DType::F16});
  EXPECT_TRUE(kv.ok());
  ForwardExecutor exec(m, be, **kv);
  const int32_t seq = (*kv)->add_sequence();
  EXPECT_TRUE((*kv)->reserve(seq, 6).ok());
  std::vector<int32_t> prompt = {1, 40, 41, 42, 43}, pos = {0, 1, 2, 3, 4}, seqs(5, seq);
  EXPECT_TRUE(exec.run({prompt, pos, seqs, {}}).ok());
  const int32_t tok = 44, p = 5;
  auto r = exec.run({std::span(&tok, 1), std::span(&p, 1), std::span(&seq, 1), {}});
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? *r : std::vector<float>{};
}

int64_t calls(const OpProfile& p, const std::string& op) {
  for (const OpTime& t : p.times()) {
    if (t.op == op) return t.calls;
  }
  return 0;
}

TEST(OpProfile, SameLogitsAndOneEntryPerOpCall) {
  ModelCase mc{"qwen3moe-Q4_K_M", Family::kQwen3Moe, 8, "Q4_K_M"};
  auto bytes = build_test_model(tiny_model(mc));
  ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
  auto file = gguf::File::parse(*bytes, "test-model");
  ASSERT_TRUE(file.ok());
  auto cpu = make_cpu_backend(2);
  auto model = Model::from_file(std::move(*file), *cpu);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  const std::vector<float> want = decode_logits(**model, *cpu);

  OpProfile prof;
  auto wrapped = make_profiling_backend(*cpu, &prof);
  const std::vector<float> off = decode_logits(**model, *wrapped);
  EXPECT_TRUE(prof.times().empty()) << "timed while disabled";
  prof.enabled = true;
  const std::vector<float> on = decode_logits(**model, *wrapped);
  ASSERT_EQ(want.size(), on.size());
  EXPECT_EQ(0, std::memcmp(want.data(), off.data(), want.size() * sizeof(float)));
  EXPECT_EQ(0, std::memcmp(want.data(), on.data(), want.size() * sizeof(float)));
  const int64_t layers = (*model)->config().n_layer;
  // Two steps (prefill, one decode): each layer's attention and experts once per step.
  EXPECT_EQ(calls(prof, "moe_ffn"), 2 * layers);
  EXPECT_EQ(calls(prof, "paged_attention"), 2 * layers);
  EXPECT_EQ(calls(prof, "moe_route"), 2 * layers);
  for (const OpTime& t : prof.times()) EXPECT_GE(t.seconds, 0.0) << t.op;
}

}  // namespace
}  // namespace arc::testing
