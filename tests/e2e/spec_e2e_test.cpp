// Speculative decoding end to end: `serve --spec ngram` and `--spec draft:PATH` answer exactly
// what the engine without speculation answers (greedy, with stop strings and max_tokens), and
// report drafts and acceptance in the usage block, /engine/status, /v1/models and /metrics.
// A draft model with another vocabulary is refused at start with the reason. `--spec mtp` on a
// glm4moe file with a nextn layer drafts with it and answers the same; without one it says why.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>

#include "e2e/engine_process.h"

namespace arc {
namespace {

using json = nlohmann::json;
using testing::EngineProcess;

std::string tmp(const std::string& name) {
  return (std::filesystem::temp_directory_path() / name).string();
}
std::string bin() {
  return std::string(ARC_BIN_DIR) + "/arclight-engine";
}

bool make_model(const std::string& out, std::vector<std::string> extra,
                const std::string& family = "qwen3moe") {
  std::vector<std::string> args = {bin(),      "--log-level", "warn",  "make-test-model",
                                   "--family", family,        "--out", out};
  args.insert(args.end(), extra.begin(), extra.end());
  return testing::run_command(args) == 0;
}

struct Answer {
  std::string text;
  std::string finish;
  json usage;
};

Answer complete(EngineProcess& e, const std::string& prompt, int max_tokens,
                const std::string& stop = "") {
  httplib::Client c("127.0.0.1", e.port());
  c.set_read_timeout(60, 0);
  json body = {{"model", "m"},
               {"prompt", prompt},
               {"max_tokens", max_tokens},
               {"temperature", 0},
               {"ignore_eos", true}};
  if (!stop.empty()) body["stop"] = stop;
  auto r = c.Post("/v1/completions", body.dump(), "application/json");
  Answer a;
  if (!r || r->status != 200) {
    ADD_FAILURE() << "request failed: " << (r ? r->body : "no response");
    return a;
  }
  const json j = json::parse(r->body);
  a.text = j["choices"][0]["text"];
  a.finish = j["choices"][0]["finish_reason"];
  a.usage = j["usage"];
  return a;
}

json get(EngineProcess& e, const std::string& path) {
  httplib::Client c("127.0.0.1", e.port());
  auto r = c.Get(path);
  return r ? json::parse(r->body) : json();
}

class SpecE2E : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ASSERT_TRUE(make_model(target(), {"--layers", "2", "--seed", "7"}));
    ASSERT_TRUE(make_model(small(), {"--layers", "1", "--seed", "3"}));
    ASSERT_TRUE(make_model(other_vocab(), {"--layers", "1", "--vocab", "300"}));
    ASSERT_TRUE(make_model(glm(), {"--layers", "3", "--nextn", "1", "--seed", "5"}, "glm4moe"));
  }
  static void TearDownTestSuite() {
    for (const auto& p : {target(), small(), other_vocab(), glm()}) std::filesystem::remove(p);
  }
  static std::string glm() { return tmp("arc_spec_glm_nextn.gguf"); }
  static std::string target() { return tmp("arc_spec_target.gguf"); }
  static std::string small() { return tmp("arc_spec_draft.gguf"); }
  static std::string other_vocab() { return tmp("arc_spec_other_vocab.gguf"); }

  static std::unique_ptr<EngineProcess> start(std::vector<std::string> extra,
                                              const std::string& model = target()) {
    auto e = std::make_unique<EngineProcess>();
    std::vector<std::string> args = {"--model",   model, "--ctx-size", "512",
                                     "--threads", "2",   "--parallel", "8"};
    args.insert(args.end(), extra.begin(), extra.end());
    EXPECT_TRUE(e->start(args)) << e->error();
    return e;
  }
};

// Prompts that repeat (n-gram drafts find matches) and one that does not.
const std::vector<std::string> kPrompts = {"abcabcabcabcabc", "the cat sat on the mat, the cat sat",
                                           "0123456789", "xyzzy"};

TEST_F(SpecE2E, NgramAndDraftModelAnswerExactlyAsWithout) {
  auto plain = start({});
  std::vector<Answer> want;
  for (const auto& p : kPrompts) want.push_back(complete(*plain, p, 48));
  // The same prompts with stop strings taken from the answers, and short max_tokens.
  std::vector<std::pair<std::string, std::string>> stops;
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i].text.size() > 12) stops.push_back({kPrompts[i], want[i].text.substr(8, 3)});
  }
  std::vector<Answer> want_stop;
  for (const auto& [p, s] : stops) want_stop.push_back(complete(*plain, p, 48, s));
  plain.reset();

  struct Case {
    std::string spec;
    std::string mode;
  };
  for (const Case& c : {Case{"ngram", "ngram"}, Case{"draft:" + small(), "draft"},
                        Case{"draft:" + target(), "draft"}}) {
    auto e = start({"--spec", c.spec});
    if (e->port() == 0) continue;
    for (size_t i = 0; i < kPrompts.size(); ++i) {
      const Answer a = complete(*e, kPrompts[i], 48);
      EXPECT_EQ(a.text, want[i].text) << c.spec << ", prompt " << i;
      EXPECT_EQ(a.finish, want[i].finish) << c.spec;
      EXPECT_EQ(a.usage["completion_tokens"], want[i].usage["completion_tokens"]) << c.spec;
    }
    for (size_t i = 0; i < stops.size(); ++i) {
      const Answer a = complete(*e, stops[i].first, 48, stops[i].second);
      EXPECT_EQ(a.text, want_stop[i].text) << c.spec << ", stop " << i;
      EXPECT_EQ(a.finish, "stop") << c.spec;
    }
    const json models = get(*e, "/v1/models");
    EXPECT_EQ(models["data"][0]["meta"]["speculative"], c.mode);
    const json st = get(*e, "/engine/status")["speculative"];
    EXPECT_EQ(st["mode"], c.mode);
    EXPECT_GT(st["draft_tokens"].get<int64_t>(), 0) << c.spec;
    EXPECT_GT(st["accepted_tokens"].get<int64_t>(), 0) << c.spec;
    if (c.spec == "draft:" + target()) {
      // The model drafting for itself: nearly every draft is what it then produces.
      EXPECT_GT(st["acceptance_rate"].get<double>(), 0.9) << st.dump();
    }
    // Usage of a request that drafted: the predicted-output fields.
    const Answer a = complete(*e, kPrompts[0], 48);
    ASSERT_TRUE(a.usage.contains("completion_tokens_details")) << a.usage.dump();
    const json& d = a.usage["completion_tokens_details"];
    EXPECT_GT(d["accepted_prediction_tokens"].get<int64_t>() +
                  d["rejected_prediction_tokens"].get<int64_t>(),
              0);
    httplib::Client hc("127.0.0.1", e->port());
    auto m = hc.Get("/metrics");
    ASSERT_TRUE(m);
    EXPECT_NE(m->body.find("arclight_spec_draft_tokens_total"), std::string::npos);
    EXPECT_NE(m->body.find("arclight_spec_accepted_tokens_total"), std::string::npos);
    EXPECT_NE(m->body.find("arclight_spec_acceptance_ratio"), std::string::npos);
  }
}

TEST_F(SpecE2E, MtpDraftsWithTheNextnLayerAndAnswersExactlyAsWithout) {
  auto plain = start({}, glm());
  std::vector<Answer> want;
  for (const auto& p : kPrompts) want.push_back(complete(*plain, p, 32));
  plain.reset();
  auto e = start({"--spec", "mtp"}, glm());
  if (e->port() == 0) return;
  for (size_t i = 0; i < kPrompts.size(); ++i) {
    const Answer a = complete(*e, kPrompts[i], 32);
    EXPECT_EQ(a.text, want[i].text) << "prompt " << i;
    EXPECT_EQ(a.usage["completion_tokens"], want[i].usage["completion_tokens"]);
  }
  // Again: the prompts' blocks now come from both prefix caches (the target's and the block's).
  const Answer again = complete(*e, kPrompts[1], 32);
  EXPECT_EQ(again.text, want[1].text);
  const json st = get(*e, "/engine/status")["speculative"];
  EXPECT_EQ(st["mode"], "mtp") << st.dump();
  EXPECT_EQ(st["requested"], "mtp");
  EXPECT_EQ(st.value("note", ""), "") << st.dump();
  EXPECT_GT(st["draft_tokens"].get<int64_t>(), 0) << st.dump();
  EXPECT_EQ(get(*e, "/v1/models")["data"][0]["meta"]["speculative"], "mtp");
}

TEST_F(SpecE2E, BadSpecsAreRefusedOrExplained) {
  // Another vocabulary: the load is refused, the engine stays up and says why.
  {
    auto e = std::make_unique<EngineProcess>();
    ASSERT_TRUE(e->start(
        {"--model", target(), "--threads", "1", "--spec", "draft:" + other_vocab()}, "error"))
        << e->error();
    const json st = get(*e, "/engine/status");
    EXPECT_NE(st.value("error", "").find("vocabulary"), std::string::npos) << st.dump();
  }
  int rc = 0;
  const std::string bad =
      testing::capture({bin(), "serve", "--port", "0", "--spec", "medusa"}, &rc);
  EXPECT_NE(rc, 0);
  EXPECT_NE(bad.find("unknown --spec"), std::string::npos) << bad;
  // mtp on a model without MTP layers: it serves, without speculation, and says why.
  auto e = start({"--spec", "mtp"});
  if (e->port() == 0) return;
  const json st = get(*e, "/engine/status")["speculative"];
  EXPECT_EQ(st["mode"], "none");
  EXPECT_EQ(st["requested"], "mtp");
  EXPECT_NE(st["note"].get<std::string>().find("multi-token"), std::string::npos) << st.dump();
}

}  // namespace
}  // namespace arc
