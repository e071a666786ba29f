// eval --backend cuda against --backend cpu through the binary: the same perplexity to rounding,
// and the CUDA run's KL from the CPU run's saved logits at rounding level. Label gpu: the
// cuda-emu preset runs it on the CUDA emulator (registered only there, like test_cuda_run).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

namespace {

const std::string kBin = std::string(ARC_BIN_DIR) + "/arclight-engine";

std::string sh(const std::string& cmd, int* rc) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  std::array<char, 4096> buf;
  size_t n = 0;
  while (p != nullptr && (n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int st = p != nullptr ? pclose(p) : -1;
  *rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return out;
}

TEST(EvalCuda, MatchesTheCpu) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("arc_eval_cuda_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string m = (dir / "m.gguf").string(), saved = (dir / "cpu.logits").string();
  int rc = 0;
  sh(kBin + " --log-level error make-test-model --family qwen3moe --type Q8_0 --seed 6 --out " + m,
     &rc);
  ASSERT_EQ(rc, 0);
  const std::string common = " --log-level error eval -m " + m + " --ctx 32 --max-windows 3 -q ";
  const std::string cpu = sh(kBin + common + "--backend cpu --json --save-logits " + saved, &rc);
  ASSERT_EQ(rc, 0) << cpu;
  const std::string cuda =
      sh(kBin + common + "--backend cuda --json --reference-logits " + saved + " 2>&1", &rc);
  ASSERT_EQ(rc, 0) << cuda;
  const auto a = nlohmann::json::parse(cpu), b = nlohmann::json::parse(cuda);
  EXPECT_EQ(b["backend"], "cuda");
  EXPECT_EQ(b["tokens_scored"], a["tokens_scored"]);
  const double na = a["perplexity"]["mean_nll"], nb = b["perplexity"]["mean_nll"];
  EXPECT_NEAR(nb, na, 2e-3 * (1 + na));
  // Both backends quantize activations their own way: KL small, agreement near complete.
  EXPECT_LT(b["reference"]["kl"]["mean"].get<double>(), 1e-3);
  EXPECT_GT(b["reference"]["top1_agreement"]["value"].get<double>(), 0.95);
  std::filesystem::remove_all(dir);
}

}  // namespace
