// eval --tp 2 under mpirun (two ranks on this machine): the same figures as one rank, and a
// reference saved by a tensor-parallel job reused by a one-rank run.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace {

const std::string kBin = std::string(ARC_BIN_DIR) + "/arclight-engine";
const std::string kMpi = std::string(ARC_MPIEXEC) +
                         " --allow-run-as-root --oversubscribe -np 2 --mca btl_tcp_if_include lo "
                         "--mca oob_tcp_if_include lo ";

struct Ran {
  int rc = -1;
  std::string out, err;
};

class EvalTp : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kBin)) GTEST_SKIP() << "no " << kBin << " (build it first)";
    dir_ = std::filesystem::temp_directory_path() / ("arc_eval_tp_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    model_ = (dir_ / "m.gguf").string();
    ASSERT_EQ(run(kBin + " make-test-model --family qwen3moe --seed 4 --out " + model_).rc, 0);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  Ran run(const std::string& cmd) const {
    Ran r;
    const std::string err = (dir_ / "stderr.txt").string();
    FILE* p = popen((cmd + " 2>" + err).c_str(), "r");
    if (p == nullptr) return r;
    std::array<char, 4096> buf;
    size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
    const int st = pclose(p);
    r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    std::ifstream f(err);
    r.err.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    return r;
  }
  std::string eval(const std::string& args) const {
    return kBin + " --log-level error eval -m " + model_ + " --ctx 64 --max-windows 4 -t 1 -q " +
           args;
  }

  std::filesystem::path dir_;
  std::string model_;
};

nlohmann::json json_of(const Ran& r) {
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out << r.err;
  return j;
}

TEST_F(EvalTp, TwoRanksMatchOne) {
  const Ran one = run(eval("--json"));
  ASSERT_EQ(one.rc, 0) << one.err;
  const std::string saved = (dir_ / "tp2.logits").string();
  const Ran two = run(kMpi + eval("--json --tp 2 --save-logits " + saved));
  ASSERT_EQ(two.rc, 0) << two.err;
  const nlohmann::json a = json_of(one), b = json_of(two);
  EXPECT_EQ(b["tp"], 2);
  EXPECT_EQ(b["tokens_scored"], a["tokens_scored"]);
  // The sums of the sharded matmuls run in another order: equal to rounding.
  const double pa = a["perplexity"]["mean_nll"], pb = b["perplexity"]["mean_nll"];
  EXPECT_NEAR(pb, pa, 1e-4 * (1 + pa));

  // One rank against the two ranks' saved logits: the same model, KL at rounding level.
  const Ran cmp = run(kBin + " --log-level error eval -m " + model_ + " --reference-logits " +
                      saved + " -t 1 -q --json");
  ASSERT_EQ(cmp.rc, 0) << cmp.err;
  const nlohmann::json c = json_of(cmp);
  EXPECT_LT(c["reference"]["kl"]["mean"].get<double>(), 1e-6);
  EXPECT_GT(c["reference"]["top1_agreement"]["value"].get<double>(), 0.99);

  // A reference model beside the model needs two models per job: refused with the way out.
  const Ran both = run(kMpi + eval("--tp 2 --reference " + model_));
  EXPECT_NE(both.rc, 0);
  EXPECT_NE(both.err.find("--tp runs one model per job"), std::string::npos) << both.err;
}

}  // namespace
