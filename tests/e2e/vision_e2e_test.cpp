// End to end with images: arclight-engine serve on a generated qwen3vlmoe model whose tiny
// vision projector lies beside it (paired automatically), images through both APIs.
#include <filesystem>

#include <gtest/gtest.h>

#include "e2e/engine_process.h"
#include "vision/vision_test_util.h"

namespace arc {
namespace {

using nlohmann::json;
using testing::EngineProcess;
using vision::test::base64;
using vision::test::read_image_file;

std::filesystem::path dir() {
  return std::filesystem::temp_directory_path() / "arc_e2e_vision";
}

class VisionE2E : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::filesystem::create_directories(dir());
    const std::string bin = std::string(ARC_BIN_DIR) + "/arclight-engine";
    ASSERT_EQ(testing::run_command({bin, "--log-level", "warn", "make-test-model", "--family",
                                    "qwen3vlmoe", "--out", (dir() / "model.gguf").string(),
                                    "--layers", "3", "--seed", "7", "--mmproj",
                                    (dir() / "mmproj-model-f32.gguf").string()}),
              0);
    engine_ = new EngineProcess();
    ASSERT_TRUE(engine_->start({"--model", (dir() / "model.gguf").string(), "--ctx-size", "512",
                                "--threads", "2", "--max-batch-tokens", "256"}))
        << engine_->error();
  }
  static void TearDownTestSuite() {
    delete engine_;
    engine_ = nullptr;
    std::filesystem::remove_all(dir());
  }
  void SetUp() override {
    if (engine_ == nullptr || engine_->port() == 0) GTEST_SKIP() << "engine did not start";
  }
  static httplib::Client client() {
    httplib::Client c("127.0.0.1", engine_->port());
    c.set_read_timeout(120, 0);
    return c;
  }
  static json openai(const std::string& image_name, const std::string& media) {
    return vision::test::openai_image_request(read_image_file(image_name), media, 8);
  }
  static double metric(const std::string& name) {
    const std::string body = client().Get("/metrics")->body;
    const size_t at = body.find("\n" + name + " ");
    return at == std::string::npos ? -1.0 : std::stod(body.substr(at + name.size() + 2));
  }
  static EngineProcess* engine_;
};
EngineProcess* VisionE2E::engine_ = nullptr;

TEST_F(VisionE2E, ModelsReportVision) {
  auto r = client().Get("/v1/models");
  ASSERT_TRUE(r);
  const json j = json::parse(r->body);
  EXPECT_TRUE(j["data"][0]["meta"]["capabilities"]["vision"].get<bool>()) << r->body;
  const json s = json::parse(client().Get("/engine/status")->body);
  EXPECT_NE(s["model"]["mmproj"].get<std::string>().find("mmproj-model-f32.gguf"),
            std::string::npos);
}

TEST_F(VisionE2E, OpenAiImageIsEncodedOnceAndItsPrefixReused) {
  const double encoded0 = metric("arclight_images_encoded_total");
  auto r1 = client().Post("/v1/chat/completions", openai("rgb8.png", "image/png").dump(),
                          "application/json");
  ASSERT_TRUE(r1);
  ASSERT_EQ(r1->status, 200) << r1->body;
  const json a = json::parse(r1->body);
  // The image stands for its encoder tokens: far more prompt tokens than the text alone.
  EXPECT_GT(a["usage"]["prompt_tokens"].get<int>(), 40) << r1->body;
  EXPECT_EQ(metric("arclight_images_encoded_total"), encoded0 + 1);

  auto r2 = client().Post("/v1/chat/completions", openai("rgb8.png", "image/png").dump(),
                          "application/json");
  ASSERT_TRUE(r2);
  ASSERT_EQ(r2->status, 200) << r2->body;
  const json b = json::parse(r2->body);
  EXPECT_EQ(a["choices"][0]["message"]["content"], b["choices"][0]["message"]["content"]);
  EXPECT_EQ(metric("arclight_images_encoded_total"), encoded0 + 1) << "the repeat is cached";
  EXPECT_GT(b["usage"]["prompt_tokens_details"]["cached_tokens"].get<int>(), 32) << r2->body;

  // Another image in the same place: encoded, and its tokens are not served from the cache.
  auto r3 = client().Post("/v1/chat/completions", openai("quad.jpg", "image/jpeg").dump(),
                          "application/json");
  ASSERT_TRUE(r3);
  ASSERT_EQ(r3->status, 200) << r3->body;
  const json c = json::parse(r3->body);
  EXPECT_EQ(metric("arclight_images_encoded_total"), encoded0 + 2);
  EXPECT_LT(c["usage"]["prompt_tokens_details"]["cached_tokens"].get<int>(), 16) << r3->body;
}

TEST_F(VisionE2E, AnthropicImageGivesTheSameAnswer) {
  auto r1 = client().Post("/v1/chat/completions", openai("rgb8.png", "image/png").dump(),
                          "application/json");
  ASSERT_TRUE(r1);
  ASSERT_EQ(r1->status, 200) << r1->body;
  const json a = json::parse(r1->body);
  const json msg =
      vision::test::anthropic_image_request(read_image_file("rgb8.png"), "image/png", 8);
  auto r2 = client().Post("/v1/messages", msg.dump(), "application/json");
  ASSERT_TRUE(r2);
  ASSERT_EQ(r2->status, 200) << r2->body;
  const json b = json::parse(r2->body);
  const std::string text_a = a["choices"][0]["message"]["content"].get<std::string>();
  std::string text_b;
  for (const auto& part : b["content"]) {
    if (part["type"] == "text") text_b += part["text"].get<std::string>();
  }
  EXPECT_EQ(text_a, text_b);
  // The same prompt: the Anthropic request is served from the prefix cache.
  EXPECT_EQ(
      a["usage"]["prompt_tokens"].get<int>(),
      b["usage"]["input_tokens"].get<int>() + b["usage"]["cache_read_input_tokens"].get<int>());
  EXPECT_GT(b["usage"]["cache_read_input_tokens"].get<int>(), 32);

  // count_tokens counts the image as its encoder tokens too.
  json count = msg;
  count.erase("max_tokens");
  count.erase("temperature");
  auto r3 = client().Post("/v1/messages/count_tokens", count.dump(), "application/json");
  ASSERT_TRUE(r3);
  ASSERT_EQ(r3->status, 200) << r3->body;
  EXPECT_EQ(json::parse(r3->body)["input_tokens"].get<int>(),
            a["usage"]["prompt_tokens"].get<int>());
}

TEST_F(VisionE2E, BadImagesAre400s) {
  json req = openai("rgb8.png", "image/png");
  std::vector<uint8_t> truncated = read_image_file("rgb8.png");
  truncated.resize(truncated.size() / 2);
  req["messages"][0]["content"][1]["image_url"]["url"] =
      "data:image/png;base64," + base64(truncated);
  auto r = client().Post("/v1/chat/completions", req.dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400) << r->body;
  // The engine still serves afterwards.
  auto ok = client().Post("/v1/chat/completions", openai("rgb8.png", "image/png").dump(),
                          "application/json");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
}

// `run --image` on the same files: the projector is paired from beside the model.
std::string run_json(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {std::string(ARC_BIN_DIR) + "/arclight-engine",
                                   "--log-level",
                                   "error",
                                   "run",
                                   "-m",
                                   (dir() / "model.gguf").string(),
                                   "-n",
                                   "4",
                                   "--json"};
  argv.insert(argv.end(), args.begin(), args.end());
  int rc = 0;
  return testing::capture(argv, &rc);
}

TEST_F(VisionE2E, RunCommandTakesAnImage) {
  const std::string png = std::string(ARC_TEST_DATA_DIR) + "/vision/rgb8.png";
  const std::string jpg = std::string(ARC_TEST_DATA_DIR) + "/vision/quad.jpg";
  const json a = json::parse(run_json({"--image", png, "--prompt", "hi"}));
  const json a2 = json::parse(run_json({"--image", png, "--prompt", "hi"}));
  const json b = json::parse(run_json({"--image", jpg, "--prompt", "hi"}));
  const json text = json::parse(run_json({"--prompt", "hi"}));
  EXPECT_EQ(a["tokens"], a2["tokens"]);
  EXPECT_GT(a["prompt_tokens"].size(), text["prompt_tokens"].size() + 16);
  // The model reads the image: other pixels, other prompt embeddings, other logits.
  EXPECT_NE(a["steps"], b["steps"]);
  const std::string bad =
      run_json({"--image", std::string(ARC_TEST_DATA_DIR) + "/vision/bomb.png", "--prompt", "hi"});
  EXPECT_NE(bad.find("limit"), std::string::npos) << bad;
}

}  // namespace
}  // namespace arc
