// gpt-oss specifics: the config read from the file (what `inspect` prints), and logits that do
// not depend on the thread count (prefill and decode past the sliding window, MXFP4 experts).
// Logits against the double-precision reference are in forward_test.cpp (ForwardVsReference).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "model/test_util.h"

namespace arc::testing {
namespace {

TEST(GptOss, ConfigFromFile) {
  TestModelOptions o = tiny_model({"", Family::kGptOss, 8, "F32"});
  o.n_layer = 3;
  auto bytes = build_test_model(o);
  ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
  auto f = gguf::File::parse(*bytes, "gpt-oss");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->architecture(), "gpt-oss");
  auto c = config_from_gguf(*f);
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->family, Family::kGptOss);
  EXPECT_EQ(c->sliding_window, 4);
  EXPECT_EQ(c->swa_period, 2);
  EXPECT_TRUE(c->layer_is_swa(0));  // the even layers slide
  EXPECT_FALSE(c->layer_is_swa(1));
  EXPECT_TRUE(c->layer_is_swa(2));
  EXPECT_TRUE(c->attn_sinks && c->attn_out_bias && c->qkv_bias && c->router_bias);
  EXPECT_TRUE(c->expert_bias && c->swiglu_oai && c->norm_topk);
  EXPECT_FALSE(c->tied_embeddings);
  EXPECT_FLOAT_EQ(c->rope_freq_scale, 1.0f / 32.0f);
  EXPECT_EQ(c->rope_ext_factor, 1.0f);
  EXPECT_EQ(c->rope_n_ctx_orig, 4096);
  EXPECT_EQ(c->rope_theta, 150000.0f);
  EXPECT_FLOAT_EQ(c->swiglu_alpha, 1.702f);
  EXPECT_EQ(c->swiglu_limit, 7.0f);
}

TEST(GptOss, MissingSlidingWindowIsAClearError) {
  auto bytes = build_test_model(tiny_model({"", Family::kGptOss, 8, "F32"}));
  ASSERT_TRUE(bytes.ok());
  auto f = gguf::File::parse(*bytes, "gpt-oss");
  ASSERT_TRUE(f.ok());
  // Rewrite the file without the key.
  gguf::Writer w;
  for (const auto& [k, v] : f->metadata()) {
    if (k != "gpt-oss.attention.sliding_window") w.set(k, v);
  }
  for (const gguf::TensorInfo& t : f->tensors()) {
    auto d = f->tensor_data(t);
    ASSERT_TRUE(w.add_tensor(t.name, t.type, t.shape, d).ok());
  }
  const std::vector<uint8_t> b2 = w.to_bytes();
  auto f2 = gguf::File::parse(b2, "gpt-oss");
  ASSERT_TRUE(f2.ok());
  auto c = config_from_gguf(*f2);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("gpt-oss.attention.sliding_window"), std::string::npos)
      << c.status().to_string();
}

// Prefill of 9 tokens, then 8 decode steps (past the window of 4), on 1 and 3 threads.
TEST(GptOss, LogitsDoNotDependOnThreadCount) {
  for (const char* type : {"Q8_0", "MXFP4", "F32"}) {
    SCOPED_TRACE(type);
    const TestModelOptions o = tiny_model({"", Family::kGptOss, 8, type});
    const auto one = prefill_and_greedy_logits(o, 1), three = prefill_and_greedy_logits(o, 3);
    ASSERT_FALSE(one.empty());
    ASSERT_EQ(one.size(), three.size());
    EXPECT_EQ(0, std::memcmp(one.data(), three.data(), one.size() * sizeof(float)));
  }
}

}  // namespace
}  // namespace arc::testing
