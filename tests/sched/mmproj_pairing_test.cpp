// Pairing a vision model with its projector: the one made for it (its output fits the model and
// its name is the model's), never a projector that merely sits in the same folder; projectors are
// listed as the vision part of a model, not as models.
#include <unistd.h>
#include <filesystem>

#include <gtest/gtest.h>

#include "arc/engine_service.h"
#include "arc/gguf.h"
#include "arc/model_config.h"
#include "model/test_model.h"
#include "sched/mmproj_pairing.h"
#include "vision/test_mmproj.h"

namespace arc {
namespace {

namespace fs = std::filesystem;

TEST(MmprojPairing, BaseNamesDropPrefixQuantizationAndSplitParts) {
  EXPECT_EQ(mmproj_base_name("mmproj-Qwen3-VL-30B-A3B-Instruct-F16.gguf"),
            "qwen3-vl-30b-a3b-instruct");
  EXPECT_EQ(mmproj_base_name("Qwen3-VL-30B-A3B-Instruct-Q4_K_M.gguf"), "qwen3-vl-30b-a3b-instruct");
  EXPECT_EQ(mmproj_base_name("/m/Qwen3-VL-30B-A3B-Instruct-UD-Q4_K_XL-00001-of-00002.gguf"),
            "qwen3-vl-30b-a3b-instruct");
  EXPECT_EQ(mmproj_base_name("Qwen3-VL-235B-A22B-Thinking-IQ4_XS.gguf"),
            "qwen3-vl-235b-a22b-thinking");
  EXPECT_EQ(mmproj_base_name("mmproj-BF16.gguf"), "");
  EXPECT_EQ(mmproj_base_name("MODEL.GGUF"), "model");
}

class MmprojPairingFolder : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("arc_mmproj_pair_" + std::to_string(getpid()));
    fs::create_directories(dir_);
    TestModelOptions o;
    o.family = Family::kQwen3VlMoe;
    o.n_embd = 64;
    model_ = (dir_ / "Qwen3-VL-Tiny-Q8_0.gguf").string();
    ASSERT_TRUE(write_test_model(o, model_).ok());
    auto f = gguf::File::open(model_);
    ASSERT_TRUE(f.ok());
    auto c = config_from_gguf(*f);
    ASSERT_TRUE(c.ok()) << c.status().to_string();
    cfg_ = *c;
    ASSERT_TRUE(cfg_.mrope());
  }
  void TearDown() override { fs::remove_all(dir_); }
  // A projector whose output is `proj_dim` wide with the model's deepstack layer count.
  std::string projector(const std::string& name, int64_t proj_dim) {
    vision::TestMmprojOptions v;
    v.proj_dim = proj_dim;
    v.deepstack_layers.clear();
    for (int64_t k = 0; k < cfg_.n_deepstack; ++k) v.deepstack_layers.push_back(k);
    const std::string p = (dir_ / name).string();
    EXPECT_TRUE(vision::write_test_mmproj(v, p).ok());
    return p;
  }
  fs::path dir_;
  std::string model_;
  ModelConfig cfg_;
};

TEST_F(MmprojPairingFolder, PicksTheProjectorMadeForTheModel) {
  const std::string other = projector("mmproj-Other-Model-F16.gguf", 64);       // fits, not named
  const std::string narrow = projector("mmproj-Qwen3-VL-Tiny-F16.gguf", 32);    // named, no fit
  const std::string made_for = projector("mmproj-Qwen3-VL-Tiny-F32.gguf", 64);  // both
  EXPECT_EQ(find_paired_mmproj(model_, cfg_), made_for);
  const auto all = mmproj_candidates(model_, cfg_);
  ASSERT_EQ(all.size(), 3u);
  for (const auto& c : all) {
    if (c.path == narrow) {
      EXPECT_FALSE(c.fits);
      EXPECT_NE(c.why_not.find("outputs 32 values"), std::string::npos) << c.why_not;
    }
  }
  // Without it: the projector that fits, whatever its name, rather than the one that does not.
  fs::remove(made_for);
  EXPECT_EQ(find_paired_mmproj(model_, cfg_), other);
  // Only a projector that does not fit: none (the model loads without vision, and says why).
  fs::remove(other);
  EXPECT_EQ(find_paired_mmproj(model_, cfg_), "");
}

TEST_F(MmprojPairingFolder, LocalModelsListProjectorsAsTheVisionPartOfTheirModel) {
  const std::string made_for = projector("mmproj-Qwen3-VL-Tiny-F16.gguf", 64);
  // A projector file without the usual name is recognised by its architecture ("clip").
  const std::string renamed = projector("vision-part.gguf", 32);
  EngineOptions eo;
  eo.threads = 1;
  eo.model_dirs = {dir_.string()};
  EngineService service(eo);
  const auto list = service.local_models();
  int models = 0;
  for (const auto& e : list) {
    const bool is_proj = e.value("mmproj", false);
    if (e["path"] == made_for || e["path"] == renamed) {
      EXPECT_TRUE(is_proj) << e.dump();
      continue;
    }
    EXPECT_FALSE(is_proj) << e.dump();
    ++models;
    if (e["path"] == model_) EXPECT_EQ(e["vision_projector"], made_for) << e.dump();
  }
  EXPECT_EQ(models, 1);
}

}  // namespace
}  // namespace arc
