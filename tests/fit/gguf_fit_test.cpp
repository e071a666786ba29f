// The fit calculator on GGUF files written with gguf::Writer: exact tensor bytes, active bytes
// with experts read used/total, and the KV layout read from metadata.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "arc/fit.h"
#include "arc/fit_gguf.h"
#include "arc/gguf.h"

namespace arc::fit {
namespace {

using gguf::Value;

// Adds a zero-filled tensor and returns its byte size (computed here from the block layout).
uint64_t add(gguf::Writer& w, const std::string& name, DType type, std::vector<int64_t> shape) {
  int64_t rows = 1;
  for (size_t i = 1; i < shape.size(); ++i) rows *= shape[i];
  const uint64_t bytes = *dtype_row_bytes(type, static_cast<uint64_t>(shape[0])) * rows;
  std::vector<uint8_t> data(bytes, 0);
  EXPECT_TRUE(w.add_tensor(name, type, std::move(shape), data).ok()) << name;
  return bytes;
}

class FitGguf : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("arc_fit_gguf_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
            "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  Result<ModelSpec> write_and_read(const gguf::Writer& w) {
    const std::string path = (dir_ / "m.gguf").string();
    EXPECT_TRUE(w.write(path).ok());
    return model_spec_from_gguf_file(path);
  }

  std::filesystem::path dir_;
};

TEST_F(FitGguf, MoeBytesAndGqaLayout) {
  gguf::Writer w;
  w.set("general.architecture", Value::str("qwen3moe"));
  w.set("general.name", Value::str("tiny-moe"));
  w.set("qwen3moe.block_count", Value::u32(2));
  w.set("qwen3moe.embedding_length", Value::u32(64));
  w.set("qwen3moe.context_length", Value::u32(1000));
  w.set("qwen3moe.attention.head_count", Value::u32(4));
  w.set("qwen3moe.attention.head_count_kv", Value::u32(2));
  w.set("qwen3moe.attention.key_length", Value::u32(16));
  w.set("qwen3moe.attention.value_length", Value::u32(16));
  w.set("qwen3moe.expert_count", Value::u32(4));
  w.set("qwen3moe.expert_used_count", Value::u32(2));
  gguf::Array vocab{gguf::ValueType::kString, {}};
  for (int i = 0; i < 10; ++i)
    vocab.items.push_back(Value::str(std::string(1, static_cast<char>('a' + i))));
  w.set("tokenizer.ggml.tokens", Value::array(vocab));

  const uint64_t embd = add(w, "token_embd.weight", DType::F32, {64, 10});  // 2,560
  const uint64_t out = add(w, "output.weight", DType::F16, {64, 10});       // 1,280
  uint64_t dense = 0, experts = 0;
  for (int l = 0; l < 2; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    dense += add(w, b + "attn_q.weight", DType::Q8_0, {64, 64});  // 64 rows x 68 bytes
    dense += add(w, b + "attn_norm.weight", DType::F32, {64});
    experts += add(w, b + "ffn_up_exps.weight", DType::F16, {64, 8, 4});
    experts += add(w, b + "ffn_down_exps.weight", DType::Q8_0, {32, 64, 4});
  }
  auto s = write_and_read(w);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(s->name, "tiny-moe");
  EXPECT_EQ(embd, 2560u);
  EXPECT_EQ(s->weights_bytes, embd + out + dense + experts);
  // Token embedding: one row of 64 f32; experts: 2 of 4.
  EXPECT_EQ(s->active_bytes_per_token, 64 * 4 + out + dense + experts / 2);
  EXPECT_EQ(s->arch.attention, AttentionKind::kGqa);
  EXPECT_EQ(s->arch.layers, 2);
  EXPECT_EQ(s->arch.vocab, 10);
  EXPECT_EQ(s->arch.max_context, 1000);
  // 2 layers x 2 KV heads x (16 + 16) x 2 bytes
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(s->arch, KvDtype::kF16), 2.0 * 2 * 32 * 2);

  Cluster c;
  c.boxes = 2;
  Workload wl;
  wl.context = 100;
  auto r = compute(*s, c, wl);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->per_box.weights, (embd + out + dense + experts + 1) / 2);
  EXPECT_EQ(r->verdict, Verdict::kFits);
  EXPECT_EQ(r->max_context, 1000);
}

TEST_F(FitGguf, DeepSeekMlaFromMetadata) {
  gguf::Writer w;
  w.set("general.architecture", Value::str("deepseek2"));
  w.set("deepseek2.block_count", Value::u32(61));
  w.set("deepseek2.embedding_length", Value::u32(7168));
  w.set("deepseek2.attention.head_count", Value::u32(128));
  w.set("deepseek2.attention.head_count_kv", Value::u32(128));
  w.set("deepseek2.attention.kv_lora_rank", Value::u32(512));
  w.set("deepseek2.rope.dimension_count", Value::u32(64));
  add(w, "output_norm.weight", DType::F32, {64});
  auto s = write_and_read(w);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(s->arch.attention, AttentionKind::kMla);
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(s->arch, KvDtype::kF16), 70272.0);
}

TEST_F(FitGguf, GptOssSlidingAndPerLayerHeads) {
  gguf::Writer w;
  w.set("general.architecture", Value::str("gpt-oss"));
  w.set("gpt-oss.block_count", Value::u32(36));
  w.set("gpt-oss.embedding_length", Value::u32(2880));
  w.set("gpt-oss.attention.head_count", Value::u32(64));
  w.set("gpt-oss.attention.head_count_kv", Value::u32(8));
  w.set("gpt-oss.attention.key_length", Value::u32(64));
  w.set("gpt-oss.attention.value_length", Value::u32(64));
  w.set("gpt-oss.attention.sliding_window", Value::u32(128));
  add(w, "output_norm.weight", DType::F32, {64});
  auto s = write_and_read(w);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(s->arch.sliding_layers, 18);
  // 18 full layers x 10,000 tokens + 18 sliding layers x 128, each 8 x 128 x 2 bytes a token.
  EXPECT_DOUBLE_EQ(kv_bytes_for_tokens(s->arch, 10000, KvDtype::kF16),
                   2048.0 * (18 * 10000 + 18 * 128));
}

TEST_F(FitGguf, Qwen3NextLinearState) {
  gguf::Writer w;
  w.set("general.architecture", Value::str("qwen3next"));
  w.set("qwen3next.block_count", Value::u32(48));
  w.set("qwen3next.embedding_length", Value::u32(2048));
  w.set("qwen3next.attention.head_count", Value::u32(16));
  w.set("qwen3next.attention.head_count_kv", Value::u32(2));
  w.set("qwen3next.attention.key_length", Value::u32(256));
  w.set("qwen3next.attention.value_length", Value::u32(256));
  w.set("qwen3next.full_attention_interval", Value::u32(4));
  w.set("qwen3next.ssm.inner_size", Value::u32(4096));
  w.set("qwen3next.ssm.state_size", Value::u32(128));
  w.set("qwen3next.ssm.group_count", Value::u32(16));
  w.set("qwen3next.ssm.conv_kernel", Value::u32(4));
  add(w, "output_norm.weight", DType::F32, {64});
  auto s = write_and_read(w);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(s->arch.linear_layers, 36);
  // Same figure the catalog's Qwen3-Next entry derives from the HF config.
  EXPECT_EQ(s->arch.linear_state_bytes_per_layer, 2195456u);
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(s->arch, KvDtype::kF16), 12.0 * 2 * 512 * 2);
}

TEST_F(FitGguf, MissingFileIsAnError) {
  auto s = model_spec_from_gguf_file((dir_ / "absent.gguf").string());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("absent.gguf"), std::string::npos) << s.status().message();
}

}  // namespace
}  // namespace arc::fit
