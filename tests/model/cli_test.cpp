// The run / bench / make-test-model commands through the real binary.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "model/test_util.h"
#include "sched/sampler.h"

namespace arc::testing {
namespace {

const std::string kBin = std::string(ARC_BIN_DIR) + "/arclight-engine";

int run_cmd(const std::string& args, std::string& out) {
  out.clear();
  FILE* p = popen((kBin + " --log-level error " + args + " 2>&1").c_str(), "r");
  if (p == nullptr) return -1;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kBin)) GTEST_SKIP() << "no " << kBin << " (build it first)";
    dir_ = std::filesystem::temp_directory_path() / ("arc_cli_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(Cli, RunJsonMatchesInProcessGreedy) {
  const std::string path = (dir_ / "m.gguf").string();
  std::string out;
  ASSERT_EQ(run_cmd("make-test-model --family qwen2moe --experts 4 --seed 3 --out " + path, out), 0)
      << out;
  ASSERT_EQ(run_cmd("run --model " + path +
                        " --prompt-ids 5,6,7 --max-tokens 6 --json "
                        "--logprobs 3 -t 1",
                    out),
            0)
      << out;
  auto j = nlohmann::json::parse(out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << out;
  std::vector<int32_t> got = j["tokens"].get<std::vector<int32_t>>();

  // The oracle: the same file, decoded greedily in process.
  TestModelOptions o;
  o.family = Family::kQwen2Moe;
  o.n_expert = 4;
  o.seed = 3;
  auto e = make_engine(o, 2, DType::F16);
  ASSERT_TRUE(e.ok());
  const int32_t seq = e->kv->add_sequence();
  ASSERT_TRUE(e->kv->reserve(seq, 16).ok());
  std::vector<int32_t> toks = {5, 6, 7}, pos = {0, 1, 2}, seqs = {seq, seq, seq}, want;
  for (int i = 0; i < 6; ++i) {
    auto logits = e->exec->run({toks, pos, seqs, {}});
    ASSERT_TRUE(logits.ok());
    want.push_back(argmax(*logits));
    toks = {want.back()};
    pos = {pos.back() + 1};
    seqs = {seq};
  }
  EXPECT_EQ(got, want);
  ASSERT_EQ(j["steps"].size(), 6u);
  EXPECT_EQ(j["steps"][0]["top_logprobs"].size(), 3u);
  EXPECT_EQ(j["steps"][0]["top_logprobs"][0]["id"], want[0]);
  EXPECT_LE(j["steps"][0]["top_logprobs"][0]["logprob"].get<double>(), 0.0);
}

TEST_F(Cli, BenchJsonAndErrors) {
  const std::string path = (dir_ / "m.gguf").string();
  std::string out;
  ASSERT_EQ(run_cmd("make-test-model --family llama --out " + path, out), 0) << out;
  ASSERT_EQ(
      run_cmd("bench --model " + path + " -p 8 -n 4 -r 2 -t 1 --json --bandwidth-mib 64", out), 0)
      << out;
  auto j = nlohmann::json::parse(out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << out;
  EXPECT_GT(j["decode_tokens_per_s"]["median"].get<double>(), 0.0);
  EXPECT_GT(j["prefill_tokens_per_s"]["min"].get<double>(), 0.0);
  EXPECT_GT(j["memory_read_gb_per_s"].get<double>(), 0.0);
  EXPECT_GT(j["active_weight_bytes_per_token"].get<double>(), 0.0);
  // On the CPU every repeat is compared with a bandwidth measured right after it; the fraction is
  // the median (of two: their mean) of those ratios.
  const auto tps = j["decode_tokens_per_s_per_repeat"].get<std::vector<double>>();
  const auto bws = j["memory_read_gb_per_s_per_repeat"].get<std::vector<double>>();
  ASSERT_EQ(tps.size(), 2u);
  ASSERT_EQ(bws.size(), 2u);
  const double bytes = j["active_weight_bytes_per_token"].get<double>();
  EXPECT_NEAR(j["decode_bandwidth_fraction"].get<double>(),
              (bytes * tps[0] / (bws[0] * 1e9) + bytes * tps[1] / (bws[1] * 1e9)) / 2,
              1e-9 * j["decode_bandwidth_fraction"].get<double>());
  EXPECT_NEAR(j["memory_read_gb_per_s"].get<double>(), (bws[0] + bws[1]) / 2, 1e-9 * bws[0]);
  // The generated llama: 2 layers, 2 KV heads of 16 (make-test-model's defaults); K and V, F16,
  // at the mean context 8 + 2.5 positions.
  EXPECT_DOUBLE_EQ(j["kv_bytes_per_token"].get<double>(), 2.0 * 2 * 2 * 2 * 16 * 10.5);
  EXPECT_GT(j["decode_gb_per_s_with_kv"].get<double>(), j["decode_gb_per_s"].get<double>());
  // The CPU reports its huge pages (the tiny model's buffers are too small for any).
  EXPECT_TRUE(j["anon_huge_page_bytes"].is_number_unsigned()) << j.dump();
  EXPECT_TRUE(j["thp_mode"].is_string()) << j.dump();

  EXPECT_EQ(run_cmd("make-test-model --family gpt9 --out " + path, out), 2);
  EXPECT_NE(out.find("unknown family 'gpt9'"), std::string::npos) << out;
  EXPECT_EQ(run_cmd("run --model " + (dir_ / "missing.gguf").string() + " --prompt-ids 1", out), 1);
  EXPECT_NE(out.find("missing.gguf"), std::string::npos) << out;
}

}  // namespace
}  // namespace arc::testing
