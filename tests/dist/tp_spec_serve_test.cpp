// Speculative verification under `serve --tp 2` (mpirun, two ranks on this machine): greedy
// completions with the n-gram drafter on two ranks are token for token those of one rank without
// speculation (the oracle), with several requests batched, and the drafts really ran (the
// status's counters; prompts that repeat themselves, so the drafter finds matches). The same
// for the mtp drafter on glm4moe and deepseek2 files with a nextn layer: rank 0 runs the block
// whole (model_mtp.cpp) from the split target's hidden states.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "dist/tp_job.h"

namespace arc::tptest {
namespace {

using nlohmann::json;

std::string model_path() {
  return (fs::temp_directory_path() / ("arc_tp_spec_" + std::to_string(getpid()) + ".gguf"))
      .string();
}

std::vector<std::string> serve_args(std::vector<std::string> extra) {
  std::vector<std::string> a = {kBin,
                                "--log-level",
                                "warn",
                                "serve",
                                "--port",
                                "0",
                                "--model",
                                model_path(),
                                "--ctx-size",
                                "256",
                                "--threads",
                                "1",
                                "--max-batch-tokens",
                                "64",
                                "--parallel",
                                "4"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

struct Answers {
  std::vector<std::string> texts;
  json speculative;
  std::string error;
};

// Three completions at once, then one alone; each prompt repeats a phrase.
Answers script(int port) {
  Answers out;
  const std::vector<std::string> prompts = {
      "one two three four one two three four one two three four one two",
      "the cat sat on the mat the cat sat on the mat the cat sat",
      "a b c d e f a b c d e f a b c d e f a b c", "red green blue red green blue red green"};
  out.texts.resize(prompts.size());
  auto complete = [&](size_t i) {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(60, 0);
    const json body = {{"model", "test"},
                       {"prompt", prompts[i]},
                       {"temperature", 0},
                       {"max_tokens", 24},
                       {"ignore_eos", true}};
    auto r = c.Post("/v1/completions", body.dump(), "application/json");
    if (r && r->status == 200) {
      out.texts[i] = json::parse(r->body)["choices"][0].value("text", "");
    } else {
      out.error = "completion failed: " + (r ? std::to_string(r->status) + " " + r->body : "none");
    }
  };
  std::vector<std::thread> threads;
  for (size_t i = 0; i < 3; ++i) threads.emplace_back(complete, i);
  for (auto& t : threads) t.join();
  complete(3);
  httplib::Client c("127.0.0.1", port);
  if (auto st = c.Get("/engine/status")) {
    out.speculative = json::parse(st->body).value("speculative", json::object());
  }
  return out;
}

// The model at model_path() served by one rank without speculation, then by two ranks with
// `--spec spec`: the same texts for the same script, and drafts were made.
Answers compare_one_and_two_ranks(const std::string& spec) {
  Answers one, two;
  {
    Job j;
    EXPECT_TRUE(j.start(serve_args({})));
    const int port = j.wait_port(30);
    if (port <= 0 || !wait_state(port, "ready", 30)) {
      ADD_FAILURE() << "one rank did not start: " << j.stderr_text();
      return two;
    }
    one = script(port);
  }
  EXPECT_TRUE(one.error.empty()) << one.error;
  {
    Job j;
    auto a = serve_args({"--tp", "2", "--tp-timeout", "20", "--spec", spec});
    EXPECT_TRUE(j.start(mpirun(2, std::vector<std::string>(a.begin() + 1, a.end()))));
    const int port = j.wait_port(30);
    if (port <= 0 || !wait_state(port, "ready", 30)) {
      ADD_FAILURE() << "two ranks did not start: " << j.stderr_text();
      return two;
    }
    two = script(port);
    j.stop();
    EXPECT_TRUE(two.error.empty()) << two.error << "\n" << j.stderr_text();
  }
  fs::remove(model_path());
  EXPECT_EQ(one.texts.size(), two.texts.size());
  for (size_t i = 0; i < one.texts.size() && i < two.texts.size(); ++i) {
    EXPECT_FALSE(one.texts[i].empty()) << "request " << i;
    EXPECT_EQ(one.texts[i], two.texts[i]) << "request " << i;
  }
  EXPECT_EQ(two.speculative.value("mode", ""), spec) << two.speculative;
  EXPECT_GT(two.speculative.value("draft_tokens", 0), 0) << two.speculative;
  return two;
}

TEST(TpSpeculative, TwoRanksVerifyingNgramDraftsAnswerLikeOneRankWithoutSpeculation) {
  ASSERT_EQ(run_command({kBin, "--log-level", "warn", "make-test-model", "--family", "qwen3moe",
                         "--out", model_path(), "--layers", "2", "--seed", "7"}),
            0);
  const Answers two = compare_one_and_two_ranks("ngram");
  EXPECT_GT(two.speculative.value("accepted_tokens", 0), 0)
      << "no draft was accepted: verification under --tp was not exercised " << two.speculative;
}

// glm4moe with the head tied to the embedding (rank 0's block takes the whole embedding as its
// head), deepseek2 with its own output.weight (mapped whole again for the block).
class TpMtp : public ::testing::TestWithParam<const char*> {};

TEST_P(TpMtp, TwoRanksVerifyingMtpDraftsAnswerLikeOneRankWithoutSpeculation) {
  std::vector<std::string> make = {
      kBin,         "--log-level", "warn", "make-test-model", "--family", GetParam(), "--out",
      model_path(), "--layers",    "3",    "--nextn",         "1",        "--seed",   "5"};
  if (std::string(GetParam()) == "deepseek2") make.push_back("--untied");
  ASSERT_EQ(run_command(make), 0);
  compare_one_and_two_ranks("mtp");
}

INSTANTIATE_TEST_SUITE_P(Families, TpMtp, ::testing::Values("glm4moe", "deepseek2"),
                         [](const ::testing::TestParamInfo<const char*>& i) {
                           return std::string(i.param);
                         });

}  // namespace
}  // namespace arc::tptest
