// Images with `serve --tp 2` and `run --tp 2` under mpirun, against the same commands on one
// rank (the oracle: the single-rank engine): a generated qwen3vlmoe model with its tiny vision
// projector beside it (paired automatically; only rank 0 loads it), images through
// /v1/chat/completions and /v1/messages, the prefix cache keyed by image content, broken images
// refused as at one rank with the ranks still in step, and unload/load naming the projector.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dist/tp_job.h"
#include "vision/vision_test_util.h"

// In the helpers' namespace: Job, mpirun, wait_state, run_command, ... (dist/tp_job.h).
namespace arc::tptest {
namespace {

using nlohmann::json;
using vision::test::read_image_file;

// With each generated token's top 3 log-probabilities.
json openai_image(const std::vector<uint8_t>& bytes, const std::string& media) {
  json req = vision::test::openai_image_request(bytes, media, 6);
  req["logprobs"] = true;
  req["top_logprobs"] = 3;
  return req;
}

json anthropic_image(const std::vector<uint8_t>& bytes, const std::string& media) {
  return vision::test::anthropic_image_request(bytes, media, 6);
}

// One answer of the image script: status, text, cached prompt tokens, and for OpenAI requests
// each generated token's id-free top log-probabilities.
struct ImageAnswer {
  int status = 0;
  std::string text;
  int64_t cached = -1;
  std::vector<std::vector<double>> top;  // [tokens][3]
  std::string body;
};

ImageAnswer ask(httplib::Client& c, const std::string& route, const json& body) {
  ImageAnswer a;
  auto r = c.Post(route, body.dump(), "application/json");
  if (!r) return a;
  a.status = r->status;
  a.body = r->body;
  if (r->status != 200) return a;
  const json j = json::parse(r->body);
  if (route == "/v1/messages") {
    for (const auto& part : j["content"]) {
      if (part["type"] == "text") a.text += part["text"].get<std::string>();
    }
    a.cached = j["usage"].value("cache_read_input_tokens", int64_t{0});
    return a;
  }
  a.text = j["choices"][0]["message"].value("content", "");
  a.cached =
      j["usage"].value("prompt_tokens_details", json::object()).value("cached_tokens", int64_t{0});
  for (const auto& t : j["choices"][0]["logprobs"]["content"]) {
    std::vector<double> v;
    for (const auto& alt : t["top_logprobs"]) v.push_back(alt["logprob"].get<double>());
    a.top.push_back(v);
  }
  return a;
}

// Both APIs, a repeated image (served from the prefix cache), another image, a broken image (a
// 400), an image after it, text only, then an unload and a load naming the projector (another
// file name, so it is not the automatic pairing), and an image again.
std::vector<ImageAnswer> image_script(int port, const std::string& model,
                                      const std::string& mmproj) {
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(60, 0);
  const auto png = read_image_file("rgb8.png");
  const auto jpg = read_image_file("quad.jpg");
  auto broken = png;
  broken.resize(broken.size() / 2);
  std::vector<ImageAnswer> out;
  out.push_back(ask(c, "/v1/chat/completions", openai_image(png, "image/png")));
  out.push_back(ask(c, "/v1/chat/completions", openai_image(png, "image/png")));
  out.push_back(ask(c, "/v1/messages", anthropic_image(png, "image/png")));
  out.push_back(ask(c, "/v1/chat/completions", openai_image(jpg, "image/jpeg")));
  out.push_back(ask(c, "/v1/chat/completions", openai_image(broken, "image/png")));
  out.push_back(ask(c, "/v1/messages", anthropic_image(broken, "image/png")));
  out.push_back(ask(c, "/v1/chat/completions", openai_image(jpg, "image/jpeg")));
  json text = openai_image(png, "image/png");  // the same request without its image
  text["messages"][0]["content"] = "look: nothing";
  out.push_back(ask(c, "/v1/chat/completions", text));
  ImageAnswer reload;
  auto u = c.Post("/engine/unload", "", "application/json");
  if (!u || u->status != 200 || !wait_state(port, "idle", 10)) reload.body = "unload failed";
  auto l = c.Post("/engine/load", json({{"model", model}, {"mmproj", mmproj}}).dump(),
                  "application/json");
  if (!l || l->status != 202 || !wait_state(port, "ready", 30)) reload.body = "reload failed";
  if (auto st = c.Get("/engine/status")) {
    const json model_info = json::parse(st->body).value("model", json::object());
    if (model_info.value("mmproj", "") != mmproj) reload.body = "no projector after the reload";
  }
  out.push_back(reload.body.empty() ? ask(c, "/v1/chat/completions", openai_image(png, "image/png"))
                                    : reload);
  return out;
}

TEST(TpServeVision, ImagesThroughBothApisAnswerLikeOneRank) {
  const fs::path dir = fs::temp_directory_path() / ("arc_tp_vision_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string model = (dir / "model.gguf").string();
  const std::string paired = (dir / "mmproj-model-f32.gguf").string();
  ASSERT_EQ(run_command({kBin, "--log-level", "warn", "make-test-model", "--family", "qwen3vlmoe",
                         "--out", model, "--layers", "3", "--seed", "7", "--mmproj", paired}),
            0);
  const std::string mmproj = (dir / "projector.gguf").string();  // named in the reload
  fs::copy_file(paired, mmproj);
  std::vector<std::string> args = {"--log-level", "warn",      "serve", "--port",
                                   "0",           "--model",   model,   "--ctx-size",
                                   "512",         "--threads", "1",     "--max-batch-tokens",
                                   "64"};
  std::vector<ImageAnswer> one, two;
  {
    Job j;
    std::vector<std::string> argv = {kBin};
    argv.insert(argv.end(), args.begin(), args.end());
    ASSERT_TRUE(j.start(argv));
    const int port = j.wait_port(30);
    ASSERT_GT(port, 0) << j.stderr_text();
    ASSERT_TRUE(wait_state(port, "ready", 30)) << j.stderr_text();
    one = image_script(port, model, mmproj);
  }
  {
    Job j;
    args.insert(args.end(), {"--tp", "2", "--tp-timeout", "20"});
    args[1] = "info";  // the encoder's load line, once per load and rank that loads it
    ASSERT_TRUE(j.start(mpirun(2, args)));
    const int port = j.wait_port(30);
    ASSERT_GT(port, 0) << j.stderr_text();
    ASSERT_TRUE(wait_state(port, "ready", 30)) << j.stderr_text();
    two = image_script(port, model, mmproj);
    j.stop();
    // Only rank 0 loaded the projector: once at start, once after the reload.
    const std::string err = j.stderr_text();
    int loads = 0;
    for (size_t at = err.find("vision encoder on the"); at != std::string::npos;
         at = err.find("vision encoder on the", at + 1)) {
      ++loads;
    }
    EXPECT_EQ(loads, 2) << err;
  }
  fs::remove_all(dir);
  ASSERT_EQ(one.size(), 9u);
  ASSERT_EQ(two.size(), one.size());
  const std::vector<int> want = {200, 200, 200, 200, 400, 400, 200, 200, 200};
  for (size_t i = 0; i < one.size(); ++i) {
    EXPECT_EQ(one[i].status, want[i]) << "request " << i << ", one rank: " << one[i].body;
    EXPECT_EQ(two[i].status, want[i]) << "request " << i << ", two ranks: " << two[i].body;
    EXPECT_EQ(one[i].text, two[i].text) << "request " << i;
    EXPECT_EQ(one[i].cached, two[i].cached) << "request " << i;
    // The same top log-probabilities (hence the same greedy tokens) within float summation
    // order: the logits of TP=2 and TP=1 differ by ~1e-5 (tp_vision_test).
    ASSERT_EQ(one[i].top.size(), two[i].top.size()) << "request " << i;
    for (size_t t = 0; t < one[i].top.size(); ++t) {
      ASSERT_EQ(one[i].top[t].size(), two[i].top[t].size());
      for (size_t k = 0; k < one[i].top[t].size(); ++k) {
        EXPECT_NEAR(one[i].top[t][k], two[i].top[t][k], 1e-3) << "request " << i << " token " << t;
      }
    }
  }
  // The broken image is refused with the decoder's reason, on both APIs.
  EXPECT_NE(two[4].body.find("image 1"), std::string::npos) << two[4].body;
  EXPECT_NE(two[5].body.find("image"), std::string::npos) << two[5].body;
  // The repeat and the Anthropic request reuse the image's cached K/V; the other image does not.
  EXPECT_GT(two[1].cached, 32);
  EXPECT_GT(two[2].cached, 32);
  EXPECT_LT(two[3].cached, 16);
  // The model reads the images: another image, other log-probabilities.
  ASSERT_FALSE(two[0].top.empty());
  ASSERT_FALSE(two[3].top.empty());
  EXPECT_NE(two[0].top[0], two[3].top[0]);
  ASSERT_FALSE(two[7].top.empty());
  EXPECT_NE(two[0].top[0], two[7].top[0]);
  // After the reload with the named projector: the first answer again, encoded anew.
  EXPECT_EQ(two[8].top, two[0].top);
  EXPECT_EQ(two[8].cached, 0);
}

// `run --image --tp 2`: only rank 0 loads the projector (paired from beside the model) and
// encodes; the same tokens and log-probabilities as one rank. A broken image is an error that
// ends every rank at once.
TEST(TpServeVision, RunWithAnImageMatchesOneRank) {
  const fs::path dir = fs::temp_directory_path() / ("arc_tp_run_vl_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string model = (dir / "model.gguf").string();
  ASSERT_EQ(run_command({kBin, "--log-level", "warn", "make-test-model", "--family", "qwen3vlmoe",
                         "--out", model, "--layers", "3", "--seed", "7", "--mmproj",
                         (dir / "mmproj-model-f32.gguf").string()}),
            0);
  const std::string data = std::string(ARC_TEST_DATA_DIR) + "/vision/";
  auto args = [&](const std::string& image) {
    return std::vector<std::string>{
        "--log-level", "error", "run", "--model", model,        "--image", image,       "--prompt",
        "describe",    "-n",    "6",   "--json",  "--logprobs", "3",       "--threads", "1"};
  };
  int rc1 = 0, rc2 = 0, rc3 = 0;
  std::vector<std::string> one_argv = {kBin};
  for (const auto& a : args(data + "busy.png")) one_argv.push_back(a);
  auto two_args = args(data + "busy.png");
  two_args.insert(two_args.end(), {"--tp", "2", "--tp-timeout", "20"});
  const std::string one = capture(one_argv, &rc1);
  const std::string two = capture(mpirun(2, two_args), &rc2);
  auto bad_args = args(data + "bomb.png");
  bad_args.insert(bad_args.end(), {"--tp", "2", "--tp-timeout", "20"});
  const auto t0 = Clock::now();
  const std::string bad = capture(mpirun(2, bad_args), &rc3);
  const double bad_s = since(t0);
  fs::remove_all(dir);
  ASSERT_EQ(rc1, 0) << one;
  ASSERT_EQ(rc2, 0) << two;
  const json a = json::parse(one.substr(one.find('{')));
  const json b = json::parse(two.substr(two.find('{')));
  EXPECT_EQ(a["prompt_tokens"], b["prompt_tokens"]);
  EXPECT_GT(a["prompt_tokens"].size(), 40u);  // the image's tokens
  EXPECT_EQ(a["tokens"], b["tokens"]);
  ASSERT_EQ(a["steps"].size(), b["steps"].size());
  for (size_t i = 0; i < a["steps"].size(); ++i) {
    const json& x = a["steps"][i]["top_logprobs"];
    const json& y = b["steps"][i]["top_logprobs"];
    ASSERT_EQ(x.size(), y.size());
    for (size_t k = 0; k < x.size(); ++k) {
      EXPECT_EQ(x[k]["id"], y[k]["id"]);
      EXPECT_NEAR(x[k]["logprob"].get<double>(), y[k]["logprob"].get<double>(), 1e-3);
    }
  }
  EXPECT_NE(rc3, 0);
  EXPECT_NE(bad.find("the limit is 16384 pixels per side"), std::string::npos) << bad;
  EXPECT_LT(bad_s, 15.0) << "the workers waited for a prompt that never came";
}

}  // namespace
}  // namespace arc::tptest
