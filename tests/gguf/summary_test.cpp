// summarize() and `arclight-engine inspect` on generated models, against hand-computed figures.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "arc/gguf.h"
#include "arc/gguf_summary.h"
#include "gguf_test_util.h"

namespace arc::gguf {
namespace {

using ::testing::HasSubstr;

void add(Writer& w, const std::string& name, DType t, std::vector<int64_t> shape) {
  auto data = testing::pattern_bytes(testing::tensor_bytes(t, shape), 7);
  ASSERT_TRUE(w.add_tensor(name, t, shape, data).ok()) << name;
}

Array strings(std::vector<std::string> v) {
  Array a;
  a.elem_type = ValueType::kString;
  for (auto& s : v) a.items.push_back(Value::str(s));
  return a;
}

// A two-layer qwen3moe model with 4 experts, 2 used. Sizes by hand:
//   token_embd   F32  [8, 10]        = 80 * 4           = 320
//   output_norm  F32  [8]            = 8 * 4            = 32
//   blk.N.attn_q Q8_0 [32, 4]        = 4 rows * 34      = 136   (per layer)
//   blk.N.ffn_gate_exps F16 [8,4,4]  = 128 * 2          = 256   (per layer, experts)
//   blk.N.ffn_up_shexp  F16 [8, 4]   = 32 * 2           = 64    (shared expert: always active)
// total 320 + 32 + 2 * (136 + 256 + 64) = 1264; experts 512; active 752 + 512 * 2/4 = 1008.
Writer moe_model() {
  Writer w;
  w.set("general.architecture", Value::str("qwen3moe"));
  w.set("general.name", Value::str("Tiny MoE"));
  w.set("qwen3moe.block_count", Value::u32(2));
  w.set("qwen3moe.embedding_length", Value::u32(8));
  w.set("qwen3moe.attention.head_count", Value::u32(4));
  w.set("qwen3moe.attention.head_count_kv", Value::u32(2));
  w.set("qwen3moe.expert_count", Value::u32(4));
  w.set("qwen3moe.expert_used_count", Value::u32(2));
  w.set("qwen3moe.expert_feed_forward_length", Value::u32(4));
  w.set("qwen3moe.context_length", Value::u32(4096));
  w.set("qwen3moe.rope.freq_base", Value::f32(1000000.0f));
  w.set("qwen3moe.rope.scaling.type", Value::str("yarn"));
  w.set("qwen3moe.rope.scaling.factor", Value::f32(4.0f));
  w.set("qwen3moe.rope.scaling.original_context_length", Value::u32(1024));
  w.set("tokenizer.ggml.model", Value::str("gpt2"));
  w.set("tokenizer.ggml.pre", Value::str("qwen2"));
  w.set("tokenizer.ggml.tokens", Value::array(strings({"a", "b", "<|im_end|>", "<|endoftext|>"})));
  w.set("tokenizer.ggml.eos_token_id", Value::u32(2));
  w.set("tokenizer.ggml.padding_token_id", Value::u32(3));
  w.set("tokenizer.ggml.bos_token_id", Value::u32(99));  // outside the vocabulary
  w.set("tokenizer.chat_template", Value::str("{{ messages }}"));
  add(w, "token_embd.weight", DType::F32, {8, 10});
  add(w, "output_norm.weight", DType::F32, {8});
  for (int l = 0; l < 2; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    add(w, p + "attn_q.weight", DType::Q8_0, {32, 4});
    add(w, p + "ffn_gate_exps.weight", DType::F16, {8, 4, 4});
    add(w, p + "ffn_up_shexp.weight", DType::F16, {8, 4});
  }
  return w;
}

TEST(GgufSummary, MoeModelFigures) {
  const auto bytes = moe_model().to_bytes();
  auto f = File::parse(bytes, "tiny.gguf");
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  ModelSummary s = summarize(*f);
  EXPECT_EQ(s.architecture, "qwen3moe");
  EXPECT_TRUE(s.known_architecture);
  EXPECT_EQ(s.name, "Tiny MoE");
  EXPECT_EQ(s.hp.block_count, 2);
  EXPECT_EQ(s.hp.embedding_length, 8);
  EXPECT_EQ(s.hp.head_count, 4);
  EXPECT_EQ(s.hp.head_count_kv, 2);
  EXPECT_EQ(s.hp.head_dim, 2);  // derived: 8 / 4
  EXPECT_EQ(s.hp.key_length, std::nullopt);
  EXPECT_EQ(s.hp.expert_count, 4);
  EXPECT_EQ(s.hp.expert_used_count, 2);
  EXPECT_EQ(s.hp.expert_feed_forward_length, 4);
  EXPECT_EQ(s.hp.context_length, 4096);
  EXPECT_EQ(s.hp.rope_freq_base, 1000000.0);
  EXPECT_EQ(s.hp.rope_scaling_type, "yarn");
  EXPECT_EQ(s.hp.rope_scaling_factor, 4.0);
  EXPECT_EQ(s.hp.rope_scaling_original_context_length, 1024);
  EXPECT_EQ(s.tokenizer.model, "gpt2");
  EXPECT_EQ(s.tokenizer.pre, "qwen2");
  EXPECT_EQ(s.tokenizer.vocab_size, 4u);
  ASSERT_TRUE(s.tokenizer.eos.has_value());
  EXPECT_EQ(s.tokenizer.eos->id, 2);
  EXPECT_EQ(s.tokenizer.eos->text, "<|im_end|>");
  EXPECT_EQ(s.tokenizer.pad->text, "<|endoftext|>");
  EXPECT_EQ(s.tokenizer.bos->id, 99);
  EXPECT_EQ(s.tokenizer.bos->text, std::nullopt);
  EXPECT_TRUE(s.tokenizer.has_chat_template);
  EXPECT_EQ(s.n_tensors, 8u);
  EXPECT_EQ(s.tensor_bytes, 1264u);
  EXPECT_EQ(s.bytes_by_type.at("F32"), 352u);
  EXPECT_EQ(s.bytes_by_type.at("Q8_0"), 272u);
  EXPECT_EQ(s.bytes_by_type.at("F16"), 640u);
  EXPECT_EQ(s.bytes_by_layer.size(), 2u);
  EXPECT_EQ(s.bytes_by_layer.at(0), 456u);
  EXPECT_EQ(s.bytes_by_layer.at(1), 456u);
  EXPECT_EQ(s.non_layer_bytes, 352u);
  EXPECT_EQ(s.expert_bytes, 512u);
  EXPECT_EQ(s.active_bytes_per_token, 1008u);
  // Elements by hand: embeddings 80 + norm 8 + per layer (q 128 + experts 128 + shared 32) x 2.
  EXPECT_EQ(s.n_params, 664u);
  // A token uses 2 of the 4 experts: 664 - 256 + 128.
  EXPECT_EQ(s.n_active_params, 536u);

  nlohmann::json j = to_json(s);
  EXPECT_EQ(j["hyperparameters"]["head_dim"], 2);
  EXPECT_EQ(j["bytes_by_layer"][1]["bytes"], 456);
  EXPECT_EQ(j["tokenizer"]["eos"]["text"], "<|im_end|>");
  EXPECT_TRUE(j["hyperparameters"]["key_length"].is_null());
  EXPECT_EQ(j["n_params"], 664);
  EXPECT_EQ(j["n_active_params"], 536);
}

TEST(GgufSummary, UnknownArchitectureIsReported) {
  Writer w;
  w.set("general.architecture", Value::str("foo"));
  w.set("foo.block_count", Value::u32(3));
  w.set("foo.attention.key_length", Value::u32(128));
  w.set("foo.attention.head_count", Value::array([] {
          Array a;  // per-layer head counts
          a.elem_type = ValueType::kInt32;
          a.items = {Value::i32(8), Value::i32(16), Value::i32(12)};
          return a;
        }()));
  add(w, "blk.2.x.weight", DType::F32, {4});
  add(w, "blk.x.weird", DType::F32, {4});  // not a layer tensor
  const auto bytes = w.to_bytes();         // File::parse keeps pointing into these
  auto f = File::parse(bytes);
  ASSERT_TRUE(f.ok());
  ModelSummary s = summarize(*f);
  EXPECT_EQ(s.architecture, "foo");
  EXPECT_FALSE(s.known_architecture);
  EXPECT_EQ(s.hp.block_count, 3);
  EXPECT_EQ(s.hp.head_count, 16);
  EXPECT_EQ(s.hp.head_dim, 128);
  EXPECT_EQ(s.bytes_by_layer.at(2), 16u);
  EXPECT_EQ(s.non_layer_bytes, 16u);
  EXPECT_EQ(s.active_bytes_per_token, std::nullopt);  // not MoE
  EXPECT_EQ(s.tokenizer.vocab_size, 0u);
}

TEST(GgufSummary, InvalidUtf8StillSerializes) {
  Writer w;
  w.set("general.architecture", Value::str("a\xff\xc3"));
  w.set("general.name",
        Value::str("ok \xe4\xb8\x96 \xed\xa0\x80 \xc0\xaf"));  // surrogate, overlong
  const auto bytes = w.to_bytes();  // File::parse keeps pointing into these
  auto f = File::parse(bytes);
  ASSERT_TRUE(f.ok());
  nlohmann::json j = to_json(summarize(*f));
  std::string dumped;
  ASSERT_NO_THROW(dumped = j.dump());
  EXPECT_EQ(j["architecture"], "a\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_EQ(j["name"],
            "ok \xe4\xb8\x96 \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd");
}

std::string run(const std::string& cmd, int& rc) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  rc = pclose(p);
  return out;
}

TEST(InspectCommand, JsonAndTextFromTheBinary) {
  const std::string bin = std::string(ARC_BIN_DIR) + "/arclight-engine";
  ASSERT_TRUE(std::filesystem::exists(bin)) << bin << " was not built";
  auto dir = testing::temp_dir("inspect");
  const std::string path = (dir / "tiny.gguf").string();
  ASSERT_TRUE(moe_model().write(path).ok());

  int rc = -1;
  std::string out = run(bin + " inspect --json '" + path + "'", rc);
  ASSERT_EQ(rc, 0) << out;
  nlohmann::json j = nlohmann::json::parse(out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << out;
  EXPECT_EQ(j["architecture"], "qwen3moe");
  EXPECT_EQ(j["tensor_count"], 8);
  EXPECT_EQ(j["tensor_bytes"], 1264);
  EXPECT_EQ(j["active_bytes_per_token"], 1008);
  EXPECT_EQ(j["hyperparameters"]["expert_count"], 4);
  EXPECT_EQ(j["tokenizer"]["vocab_size"], 4);
  EXPECT_EQ(j["bytes_by_type"]["Q8_0"], 272);

  out = run(bin + " inspect '" + path + "'", rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_THAT(out, HasSubstr("qwen3moe"));
  EXPECT_THAT(out, HasSubstr("2/4"));
  EXPECT_THAT(out, HasSubstr("1008 bytes"));

  std::filesystem::remove(path);
  out = run(bin + " inspect '" + path + "' 2>&1", rc);
  EXPECT_NE(rc, 0);
  EXPECT_THAT(out, HasSubstr("NOT_FOUND"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace arc::gguf
