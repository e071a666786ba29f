// glm4moe and minimax-m2 in the fit calculator: the catalog entries against the published
// configs (../shared/fixtures/model_configs/model_configs.json), KV bytes per token from them,
// and a GGUF as llama.cpp's converter writes GLM (block_count counting the MTP layer): KV and
// weights of the MTP layer left out, experts read used/total.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "arc/catalog.h"
#include "arc/fit.h"
#include "arc/fit_gguf.h"
#include "arc/gguf.h"

namespace arc::fit {
namespace {

// "106B" -> 106.
double billions(const nlohmann::json& v) {
  return v.is_string() ? std::strtod(v.get<std::string>().c_str(), nullptr) : v.get<double>();
}

TEST(FitGlmMiniMax, CatalogEntriesMatchPublishedConfigs) {
  const std::string path =
      std::string(ARC_SHARED_FIXTURES_DIR) + "/model_configs/model_configs.json";
  std::ifstream in(path);
  if (!in) GTEST_SKIP() << "no fixture " << path;
  const nlohmann::json fixture = nlohmann::json::parse(in);
  auto cat = catalog::load_catalog(ARC_CATALOG_FILE);
  ASSERT_TRUE(cat.ok()) << cat.status().to_string();
  struct Pair {
    const char* catalog_id;
    const char* config_id;
    const char* family;
    double kv_f16;  // bytes per token: layers x 2 (K, V) x kv_heads x head_dim x 2, by hand
  };
  const Pair pairs[] = {
      {"glm-4.5-air", "zai-org/GLM-4.5-Air", "glm4moe", 46.0 * 2 * 8 * 128 * 2},  // 188,416
      {"glm-4.5", "zai-org/GLM-4.5", "glm4moe", 92.0 * 2 * 8 * 128 * 2},          // 376,832
      {"glm-4.6", "zai-org/GLM-4.6", "glm4moe", 92.0 * 2 * 8 * 128 * 2},
      {"minimax-m2", "MiniMaxAI/MiniMax-M2", "minimax-m2", 62.0 * 2 * 8 * 128 * 2},  // 253,952
  };
  for (const Pair& p : pairs) {
    const catalog::Model* m = cat->find(p.catalog_id);
    ASSERT_NE(m, nullptr) << p.catalog_id;
    const nlohmann::json* c = nullptr;
    for (const auto& x : fixture["models"]) {
      if (x.value("id", "") == p.config_id) c = &x;
    }
    ASSERT_NE(c, nullptr) << p.config_id;
    SCOPED_TRACE(p.catalog_id);
    EXPECT_EQ(m->family, p.family);
    EXPECT_EQ((*c)["llama_cpp_arch"].get<std::string>(), p.family);
    EXPECT_EQ(m->arch.layers, (*c)["num_hidden_layers"].get<int64_t>());  // MTP layers excluded
    EXPECT_EQ(m->arch.hidden, (*c)["hidden_size"].get<int64_t>());
    EXPECT_EQ(m->arch.vocab, (*c)["vocab_size"].get<int64_t>());
    EXPECT_EQ(m->arch.max_context, (*c)["max_position_embeddings"].get<int64_t>());
    EXPECT_EQ(m->arch.attention, AttentionKind::kGqa);
    EXPECT_EQ(m->arch.kv_heads, (*c)["num_key_value_heads"].get<int64_t>());
    EXPECT_EQ(m->arch.key_length, (*c)["head_dim"].get<int64_t>());
    EXPECT_EQ(m->arch.value_length, (*c)["head_dim"].get<int64_t>());
    EXPECT_DOUBLE_EQ(m->total_params_b, billions((*c)["total_params"]));
    EXPECT_DOUBLE_EQ(m->active_params_b, billions((*c)["active_params"]));
    EXPECT_DOUBLE_EQ(kv_bytes_per_token(m->arch, KvDtype::kF16), p.kv_f16);
  }
}

class FitGlmGguf : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("arc_fit_glm_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
            "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

// A GLM-shaped file: 3 forward layers (the first dense) and 1 MTP layer; F32 tensors of
// hand-countable sizes.
TEST_F(FitGlmGguf, MtpLayerHoldsNoKvAndIsNotLoaded) {
  const int64_t embd = 32, vocab = 100, ff = 64, ff_exp = 16, n_exp = 8, used = 2, kv = 2, hd = 8,
                heads = 4;
  gguf::Writer w;
  w.set("general.architecture", gguf::Value::str("glm4moe"));
  auto u32 = [](int64_t x) { return gguf::Value::u32(static_cast<uint32_t>(x)); };
  w.set("glm4moe.block_count", u32(4));
  w.set("glm4moe.nextn_predict_layers", u32(1));
  w.set("glm4moe.embedding_length", u32(embd));
  w.set("glm4moe.attention.head_count", u32(heads));
  w.set("glm4moe.attention.head_count_kv", u32(kv));
  w.set("glm4moe.attention.key_length", u32(hd));
  w.set("glm4moe.attention.value_length", u32(hd));
  w.set("glm4moe.expert_count", u32(n_exp));
  w.set("glm4moe.expert_used_count", u32(used));
  uint64_t bytes = 0, active = 0;
  auto add = [&](const std::string& name, std::vector<int64_t> shape, int64_t layer) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    const uint64_t b = static_cast<uint64_t>(n) * 4;
    ASSERT_TRUE(w.add_tensor(name, DType::F32, shape, std::vector<uint8_t>(b, 0)).ok());
    if (layer >= 3) return;  // the MTP layer: neither loaded nor read
    bytes += b;
    active += name.find("_exps") != std::string::npos ? b * used / n_exp : b;
  };
  add("token_embd.weight", {embd, vocab}, -1);
  add("output.weight", {embd, vocab}, -1);
  for (int64_t l = 0; l < 4; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    add(p + "attn_q.weight", {embd, heads * hd}, l);
    add(p + "attn_k.weight", {embd, kv * hd}, l);
    if (l == 0) {
      add(p + "ffn_up.weight", {embd, ff}, l);
    } else {
      add(p + "ffn_up_exps.weight", {embd, ff_exp, n_exp}, l);
    }
  }
  add("blk.3.nextn.eh_proj.weight", {2 * embd, embd}, 3);
  // Untied output: one embedding row per token instead of the whole table.
  active -= static_cast<uint64_t>(embd * vocab * 4) - static_cast<uint64_t>(embd * 4);
  const std::string path = (dir_ / "glm.gguf").string();
  ASSERT_TRUE(w.write(path).ok());
  auto s = model_spec_from_gguf_file(path);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(s->arch.layers, 3);
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(s->arch, KvDtype::kF16), 3.0 * 2 * kv * hd * 2);
  EXPECT_EQ(s->weights_bytes, bytes);
  EXPECT_EQ(s->active_bytes_per_token, active);
  bool noted = false;
  for (const std::string& n : s->notes) noted |= n.find("multi-token-prediction") != n.npos;
  EXPECT_TRUE(noted);
}

}  // namespace
}  // namespace arc::fit
