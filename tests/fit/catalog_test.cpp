// Catalog loading: the built-in file validates, figures cite sources, and bad files give errors
// that name the entry and the field.
#include <gtest/gtest.h>

#include <filesystem>

#include "arc/catalog.h"

namespace arc::catalog {
namespace {

const char* kMinimal = R"({"schema_version": 1, "models": [
  {"id": "toy", "name": "Toy", "origin": "config", "total_params_b": 100, "active_params_b": 10,
   "arch": {"layers": 4, "attention": "gqa", "kv_heads": 2, "head_dim": 64},
   "sources": ["hand-made"],
   "builds": [{"name": "q4", "format": "Q4", "bits_per_weight": 4, "params_16bit_b": 2,
               "active_params_16bit_b": 1, "sources": ["hand-made"]}]}]})";

std::string replace(std::string s, const std::string& from, const std::string& to) {
  auto pos = s.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  if (pos != std::string::npos) s.replace(pos, from.size(), to);
  return s;
}

void expect_error(const std::string& text, const std::string& needle) {
  auto c = parse_catalog(text, "test.json");
  ASSERT_FALSE(c.ok()) << "expected an error mentioning " << needle;
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find(needle), std::string::npos) << c.status().message();
}

TEST(FitCatalog, MinimalParsesAndFormulaHolds) {
  auto c = parse_catalog(kMinimal, "test.json");
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  const Model* m = c->find("TOY");
  ASSERT_NE(m, nullptr);
  const Build* b = m->find_build("q4");
  ASSERT_NE(b, nullptr);
  auto s = model_spec(*m, *b);
  ASSERT_TRUE(s.ok());
  // (100 - 2) B x 4 / 8 + 2 B x 2 bytes = 53 GB; active (10 - 1) x 4 / 8 + 1 x 2 = 6.5 GB
  EXPECT_EQ(s->weights_bytes, 53'000'000'000ull);
  EXPECT_EQ(s->active_bytes_per_token, 6'500'000'000ull);
  EXPECT_EQ(s->arch.kv_heads, 2);
  EXPECT_EQ(s->arch.key_length, 64);
}

TEST(FitCatalog, SeedTitlesMapFileNamesToTitles) {
  const std::string with =
      replace(kMinimal, R"("models": [)",
              R"("seeds": {"000_eb1378df18b016b8.txt": "A title"}, "models": [)");
  EXPECT_TRUE(parse_catalog(with, "test.json").ok());
  expect_error(replace(kMinimal, R"("models": [)", R"("seeds": {"000_x.txt": 3}, "models": [)"),
               "test.json.seeds");
  expect_error(replace(kMinimal, R"("models": [)", R"("seeds": ["000_x.txt"], "models": [)"),
               "test.json.seeds");
}

TEST(FitCatalog, PublishedSizeWinsAndGivesEffectiveBits) {
  std::string t = replace(kMinimal, R"("bits_per_weight": 4, )",
                          R"("weights": {"value": 100, "unit": "GiB", "source": "x"}, )");
  auto c = parse_catalog(t, "test.json");
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  auto s = model_spec(c->models[0], c->models[0].builds[0]);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->weights_bytes, 100ull << 30);
  // effective bits = (100 GiB - 4 GB) x 8 / 98 B
  const double bits = ((100.0 * (1ull << 30)) - 4e9) * 8 / 98e9;
  EXPECT_NEAR(static_cast<double>(s->active_bytes_per_token), 9e9 * bits / 8 + 2e9, 2.0);
}

TEST(FitCatalog, BadFilesNameEntryAndField) {
  expect_error("{\"schema_version\": 1, \"models\": [", "not valid JSON");
  expect_error(replace(kMinimal, R"("total_params_b": 100, )", ""),
               "models[0] (toy).total_params_b: missing");
  expect_error(replace(kMinimal, R"("bits_per_weight": 4)", R"("bits_per_weight": -4)"),
               "models[0] (toy).builds[0].bits_per_weight: must be > 0");
  expect_error(replace(kMinimal, R"("active_params_b": 10)", R"("active_params_b": 200)"),
               "active_params_b");
  expect_error(replace(kMinimal, R"("kv_heads": 2, )", ""), "arch.kv_heads: required");
  expect_error(replace(kMinimal, R"("attention": "gqa")", R"("attention": "sparse")"),
               "arch.attention");
  expect_error(replace(kMinimal, R"("origin": "config", )", R"("origin": "config", "colour": 1, )"),
               "models[0] (toy).colour: unknown field");
  expect_error(replace(kMinimal, R"("schema_version": 1)", R"("schema_version": 2)"),
               "schema_version");
  expect_error(replace(kMinimal, R"("layers": 4)", R"("layers": "four")"),
               "arch.layers: must be an integer");
  expect_error(replace(kMinimal, R"("bits_per_weight": 4, )", ""), "bits_per_weight");
  expect_error(replace(kMinimal, R"("sources": ["hand-made"]}]}]})", R"("sources": []}]}]})"),
               "builds[0].sources");
  // Published quality: parsed, and a KL that cannot be is named.
  const std::string with_quality = replace(
      kMinimal, R"("active_params_16bit_b": 1, )",
      R"("active_params_16bit_b": 1, "quality": [{"what": "KL 0.08 vs BF16", "against": "BF16",)"
      R"( "kl": 0.08, "top1_percent": 91.5, "source": "x.txt"}], )");
  auto q = parse_catalog(with_quality, "test.json");
  ASSERT_TRUE(q.ok()) << q.status().to_string();
  ASSERT_EQ(q->models[0].builds[0].quality.size(), 1u);
  EXPECT_DOUBLE_EQ(q->models[0].builds[0].quality[0].kl, 0.08);
  EXPECT_DOUBLE_EQ(q->models[0].builds[0].quality[0].top1_percent, 91.5);
  expect_error(replace(with_quality, R"("kl": 0.08)", R"("kl": -1)"), "builds[0].quality[0].kl");
  expect_error(replace(with_quality, R"("top1_percent": 91.5)", R"("top1_percent": 191.5)"),
               "quality[0].top1_percent");
  std::string two = kMinimal;
  const auto start = two.find("{\"id\"");
  const auto end = two.rfind("]}");
  const std::string entry = two.substr(start, end - start);
  two.insert(end, ", " + entry);
  expect_error(two, "duplicate id 'toy'");
  auto missing = load_catalog("/nonexistent/models.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

TEST(FitCatalog, BuiltInCatalogLoadsAndCitesSources) {
  auto c = load_catalog(ARC_CATALOG_FILE);
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_GE(c->models.size(), 20u);
  for (const char* id :
       {"glm-5.3-flash", "glm-5.3", "deepseek-v4.1-flash", "deepseek-v4.1-flash-1017",
        "qwen3.8-flash-next", "qwen3.6-35b-a3b", "minimax-m2.7", "qwen3-30b-a3b", "qwen3-235b-a22b",
        "gpt-oss-120b", "gpt-oss-20b", "glm-4.5-air", "mixtral-8x7b", "deepseek-v3"}) {
    EXPECT_NE(c->find(id), nullptr) << id;
  }
  for (const Model& m : c->models) {
    for (const Build& b : m.builds) {
      auto s = model_spec(m, b);
      EXPECT_TRUE(s.ok()) << m.id << "/" << b.name << ": " << s.status().to_string();
      if (m.origin != "seed") continue;
      // Every figure taken from a seed names the seed file.
      if (b.weights) {
        EXPECT_NE(b.weights->source.find(".txt"), std::string::npos) << m.id << "/" << b.name;
      }
      for (const Speed& sp : b.speeds) {
        EXPECT_NE(sp.source.find(".txt"), std::string::npos) << m.id << "/" << b.name;
      }
      for (const Quality& q : b.quality) {
        EXPECT_NE(q.source.find(".txt"), std::string::npos) << m.id << "/" << b.name;
      }
    }
  }
}

TEST(FitCatalog, BuiltInPaths) {
  auto cands = builtin_catalog_candidates("/opt/arclight/bin");
  ASSERT_FALSE(cands.empty());
  EXPECT_EQ(cands.front(), "/opt/arclight/share/arclight/catalog/models.json");
  auto found = find_builtin_catalog("/nonexistent/bin");
  ASSERT_TRUE(found.ok()) << found.status().to_string();  // the source tree's copy
  EXPECT_TRUE(std::filesystem::equivalent(*found, ARC_CATALOG_FILE));
}

}  // namespace
}  // namespace arc::catalog

#include "arc/fit_json.h"

namespace arc::catalog {
namespace {

TEST(FitCatalog, JsonListsModelsBuildsAndSources) {
  auto c = load_catalog(ARC_CATALOG_FILE);
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  nlohmann::json j = to_json(*c);
  ASSERT_EQ(j["models"].size(), c->models.size());
  const Model* m = c->find("deepseek-v4.1-flash-1017");
  ASSERT_NE(m, nullptr);
  const size_t i = static_cast<size_t>(m - c->models.data());
  const nlohmann::json& jm = j["models"][i];
  EXPECT_EQ(jm["id"], m->id);
  EXPECT_EQ(jm["builds"].size(), m->builds.size());
  EXPECT_EQ(jm["builds"][0]["weights"]["unit"], m->builds[0].weights->unit);
  EXPECT_DOUBLE_EQ(jm["builds"][0]["weights"]["bytes"].get<double>(),
                   m->builds[0].weights->bytes());
  EXPECT_FALSE(jm["sources"].empty());
  const Model* v3 = c->find("deepseek-v3");
  ASSERT_NE(v3, nullptr);
  EXPECT_EQ(j["models"][static_cast<size_t>(v3 - c->models.data())]["arch"]["attention"], "mla");
}

}  // namespace
}  // namespace arc::catalog

namespace arc::catalog {
namespace {

// Every prefix of a valid catalog, and every single-byte corruption, is an error or a valid
// catalog; never a crash (the app loads catalogs users edit by hand).
TEST(FitCatalog, TruncatedAndCorruptedTextNeverCrashes) {
  const std::string good = kMinimal;
  for (size_t n = 0; n < good.size(); ++n) {
    auto c = parse_catalog(std::string_view(good).substr(0, n), "cut.json");
    EXPECT_FALSE(c.ok()) << n;
  }
  for (size_t i = 0; i < good.size(); ++i) {
    for (char ch : {'0', '-', '"', '}', 'x'}) {
      std::string bad = good;
      bad[i] = ch;
      auto c = parse_catalog(bad, "bad.json");
      if (c.ok()) {
        for (const Model& m : c->models) {
          for (const Build& b : m.builds) (void)model_spec(m, b);
        }
      } else {
        EXPECT_FALSE(c.status().message().empty());
      }
    }
  }
}

}  // namespace
}  // namespace arc::catalog
