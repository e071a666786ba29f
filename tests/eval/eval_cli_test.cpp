// arclight-engine eval through the real binary: its JSON, saved logits reused by a later run,
// and the clear messages for a tokenizer mismatch, a short text, a damaged logits file and a
// run stopped with Ctrl-C.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace {

const std::string kBin = std::string(ARC_BIN_DIR) + "/arclight-engine";

struct Ran {
  int rc = -1;
  std::string out, err;
};

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

class EvalCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kBin)) GTEST_SKIP() << "no " << kBin << " (build it first)";
    dir_ = std::filesystem::temp_directory_path() / ("arc_eval_cli_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  Ran run(const std::string& args) const {
    Ran r;
    const std::string err = path("stderr.txt");
    FILE* p = popen((kBin + " --log-level error " + args + " 2>" + err).c_str(), "r");
    if (p == nullptr) return r;
    std::array<char, 4096> buf;
    size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
    const int st = pclose(p);
    r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    r.err = slurp(err);
    return r;
  }

  // A small dense test model (K-quant-sized rows) of the given type.
  std::string model(const std::string& type, const std::string& extra = "") const {
    const std::string out = path(type + std::to_string(extra.size()) + ".gguf");
    const Ran r =
        run("make-test-model --family qwen3 --layers 2 --hidden 256 --heads 4 "
            "--kv-heads 2 --head-dim 64 --ff 256 --seed 9 --type " +
            type + " " + extra + " --out " + out);
    EXPECT_EQ(r.rc, 0) << r.err;
    return out;
  }

  std::filesystem::path dir_;
};

nlohmann::json json_of(const Ran& r) {
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out << r.err;
  return j;
}

const char* kSmall = " --ctx 64 --max-windows 6 -t 2 --json -q";

TEST_F(EvalCli, SelfReferenceAndSavedLogits) {
  const std::string f32 = model("F32"), q4 = model("Q4_K_M");
  // A model against itself: KL 0, agreement 100%, the same perplexity.
  Ran r = run("eval -m " + f32 + " --reference " + f32 + kSmall);
  ASSERT_EQ(r.rc, 0) << r.err;
  nlohmann::json j = json_of(r);
  EXPECT_EQ(j["windows"]["done"], 6);
  EXPECT_EQ(j["tokens_scored"], 6 * 32);
  EXPECT_EQ(j["reference"]["kl"]["mean"].get<double>(), 0.0);
  EXPECT_EQ(j["reference"]["kl"]["max"].get<double>(), 0.0);
  EXPECT_EQ(j["reference"]["top1_agreement"]["value"].get<double>(), 1.0);
  EXPECT_EQ(j["reference"]["delta_perplexity"]["value"].get<double>(), 0.0);
  EXPECT_EQ(j["text"], "built-in");

  // Q4_K_M against F32 directly, then against F32's saved logits.
  r = run("eval -m " + q4 + " --reference " + f32 + kSmall);
  ASSERT_EQ(r.rc, 0) << r.err;
  const nlohmann::json full = json_of(r);
  const double kl = full["reference"]["kl"]["mean"].get<double>();
  EXPECT_GT(kl, 0.0);
  const std::string saved = path("f32.logits");
  r = run("eval -m " + f32 + " --save-logits " + saved + " --save-top-k 8" + kSmall);
  ASSERT_EQ(r.rc, 0) << r.err;
  r = run("eval -m " + q4 + " --reference-logits " + saved + " -t 2 --json -q");
  ASSERT_EQ(r.rc, 0) << r.err;
  j = json_of(r);
  EXPECT_EQ(j["ctx"], 64);  // from the file
  EXPECT_EQ(j["windows"]["done"], 6);
  const nlohmann::json& c = j["reference"]["kl_compression"];
  EXPECT_EQ(c["top_k"], 8);
  const double est = j["reference"]["kl"]["mean"].get<double>();
  const double lo = c["mean_lower_bound"].get<double>();
  const double hi = c["mean_upper_bound"].get<double>();
  EXPECT_LE(lo, kl * (1 + 1e-6));
  EXPECT_GE(hi, kl * (1 - 1e-6));
  EXPECT_GE(est, lo);
  EXPECT_LE(est, hi);
  EXPECT_NEAR(j["perplexity"]["value"].get<double>(), full["perplexity"]["value"].get<double>(),
              1e-9 * full["perplexity"]["value"].get<double>());
  EXPECT_EQ(j["reference"]["top1_agreement"]["value"],
            full["reference"]["top1_agreement"]["value"]);

  // The text report says the same in words.
  r = run("eval -m " + q4 + " --reference-logits " + saved + " -t 2 -q");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("the full KL's mean lies in"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("top-1 agree"), std::string::npos) << r.out;
}

TEST_F(EvalCli, TokenizerMismatchNamesBothModels) {
  const std::string a = model("F32"), b = model("F32", "--vocab 300");
  Ran r = run("eval -m " + a + " --reference " + b + kSmall);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("different tokenizers"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(a), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(b), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("259 tokens"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("300 tokens"), std::string::npos) << r.err;
  // The same through saved logits.
  const std::string saved = path("b.logits");
  ASSERT_EQ(run("eval -m " + b + " --save-logits " + saved + kSmall).rc, 0);
  r = run("eval -m " + a + " --reference-logits " + saved + " -q");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("tokenizer differs"), std::string::npos) << r.err;
}

TEST_F(EvalCli, ShortTextAndBadFiles) {
  const std::string m = model("F32");
  const std::string text = path("short.txt");
  std::ofstream(text) << "Too short for a window.";
  Ran r = run("eval -m " + m + " --text " + text + " --ctx 512 -q");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("the text has 23 tokens, fewer than one window of --ctx 512"),
            std::string::npos)
      << r.err;
  r = run("eval -m " + m + " --ctx 8192 -q");  // the test models' context is 4096
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("is longer than the 4096 tokens of context"), std::string::npos) << r.err;
  r = run("eval -m " + m + " --text " + path("missing.txt") + " -q");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("cannot open the text file"), std::string::npos) << r.err;
  const std::string junk = path("junk.logits");
  std::ofstream(junk) << "not logits";
  r = run("eval -m " + m + " --reference-logits " + junk + " -q");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("is not a reference-logits file"), std::string::npos) << r.err;
  r = run("eval -m " + m + " --reference " + m + " --reference-logits " + junk + " -q");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("not both"), std::string::npos) << r.err;
}

// Ctrl-C during a run: the windows done are reported (JSON says interrupted), exit code 130.
TEST_F(EvalCli, InterruptKeepsWhatWasMeasured) {
  const std::string m = model("F32");
  int out_pipe[2], err_pipe[2];
  ASSERT_EQ(pipe(out_pipe), 0);
  ASSERT_EQ(pipe(err_pipe), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    close(out_pipe[0]);
    close(err_pipe[0]);
    // Every window of the built-in text: far more than runs before the signal arrives.
    execl(kBin.c_str(), kBin.c_str(), "--log-level", "error", "eval", "-m", m.c_str(), "--ctx",
          "64", "-t", "1", "--json", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  // The first progress line comes after the first window: the handler is installed by then.
  std::string err;
  char buf[512];
  while (err.find("eval: window") == std::string::npos) {
    const ssize_t n = read(err_pipe[0], buf, sizeof buf);
    if (n <= 0) break;
    err.append(buf, static_cast<size_t>(n));
  }
  ASSERT_NE(err.find("eval: window"), std::string::npos) << err;
  kill(pid, SIGINT);
  std::string out;
  for (ssize_t n; (n = read(out_pipe[0], buf, sizeof buf)) > 0;) out.append(buf, n);
  for (ssize_t n; (n = read(err_pipe[0], buf, sizeof buf)) > 0;) err.append(buf, n);
  int st = 0;
  waitpid(pid, &st, 0);
  close(out_pipe[0]);
  close(err_pipe[0]);
  ASSERT_TRUE(WIFEXITED(st)) << err;
  EXPECT_EQ(WEXITSTATUS(st), 130) << err;
  auto j = nlohmann::json::parse(out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << out << err;
  EXPECT_TRUE(j["interrupted"].get<bool>());
  const int64_t done = j["windows"]["done"], planned = j["windows"]["planned"];
  EXPECT_GE(done, 1);
  EXPECT_LT(done, planned);
  EXPECT_EQ(j["tokens_scored"].get<int64_t>(), done * 32);
  EXPECT_NE(err.find("stopped after " + std::to_string(done) + " of " + std::to_string(planned) +
                     " windows"),
            std::string::npos)
      << err;
}

}  // namespace
