// The MLA models in the fit calculator: the catalog entries of DeepSeek-V3, V3.1, V3.2 and
// Kimi-K2 against their published configs (../shared/fixtures/model_configs/model_configs.json),
// and their latent KV cache per token worked out by hand from the configs' MLA numbers.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "arc/catalog.h"
#include "arc/fit.h"

namespace arc::fit {
namespace {

// "671B (+MTP) ..." -> 671, "1T (...)" -> 1000.
double billions(const nlohmann::json& v) {
  if (!v.is_string()) return v.get<double>();
  const std::string s = v.get<std::string>();
  char* end = nullptr;
  const double x = std::strtod(s.c_str(), &end);
  return end != nullptr && *end == 'T' ? x * 1000.0 : x;
}

TEST(FitDeepSeek2, CatalogEntriesMatchPublishedConfigs) {
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
  };
  const Pair pairs[] = {
      {"deepseek-v3", "deepseek-ai/DeepSeek-V3"},
      {"deepseek-v3.1", "deepseek-ai/DeepSeek-V3.1"},
      {"deepseek-v3.2", "deepseek-ai/DeepSeek-V3.2 (and V3.2-Exp)"},
      {"kimi-k2", "moonshotai/Kimi-K2-Instruct"},
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
    EXPECT_EQ(m->family, (*c)["llama_cpp_arch"].get<std::string>());
    EXPECT_EQ(m->arch.layers, (*c)["num_hidden_layers"].get<int64_t>());  // MTP layer excluded
    EXPECT_EQ(m->arch.hidden, (*c)["hidden_size"].get<int64_t>());
    EXPECT_EQ(m->arch.vocab, (*c)["vocab_size"].get<int64_t>());
    EXPECT_EQ(m->arch.max_context, (*c)["max_position_embeddings"].get<int64_t>());
    EXPECT_EQ(m->arch.attention, AttentionKind::kMla);
    const auto& mla = (*c)["mla"];
    EXPECT_EQ(m->arch.kv_lora_rank, mla["kv_lora_rank"].get<int64_t>());
    EXPECT_EQ(m->arch.rope_dim, mla["qk_rope_head_dim"].get<int64_t>());
    EXPECT_DOUBLE_EQ(m->total_params_b, billions((*c)["total_params"]));
    EXPECT_DOUBLE_EQ(m->active_params_b, billions((*c)["active_params"]));
    // 61 layers x (512 latent + 64 rope key) x 2 bytes: 70,272 bytes per token at F16, the same
    // for all four (Kimi-K2's 64 heads do not change the latent).
    EXPECT_DOUBLE_EQ(kv_bytes_per_token(m->arch, KvDtype::kF16), 61.0 * (512 + 64) * 2);
  }
}

}  // namespace
}  // namespace arc::fit
