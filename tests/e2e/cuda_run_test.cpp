// `arclight-engine run --backend cuda` against `--backend cpu`, as a user runs them, for every
// family and weight format the engine supports (qwen3moe F32 / Q8_0 / Q4_K_M, qwen2moe, the
// Mixtral-style llama, dense qwen3, qwen3vlmoe with an image): the same greedy tokens, and the
// top log-probabilities of every step within a stated tolerance. Also CUDA graphs on and off give
// identical tokens, and --tp 2 under mpirun gives the tokens of one rank. Label gpu: the cuda-emu
// preset runs it on the CUDA emulator, a GPU build on the device.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

std::string engine() {
  return std::string(ARC_BIN_DIR) + "/arclight-engine";
}

// Runs a shell command; returns stdout and sets *rc.
std::string sh(const std::string& cmd, int* rc) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  char buf[4096];
  size_t n = 0;
  while (p != nullptr && (n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int status = p != nullptr ? pclose(p) : -1;
  *rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

struct Case {
  const char* name;
  const char* family;
  const char* type;
  const char* make_args = "";  // more make-test-model flags
};

class CudaRun : public ::testing::TestWithParam<Case> {
 protected:
  static fs::path dir() {
    static const fs::path d = [] {
      fs::path p = fs::temp_directory_path() / ("arc_cuda_run_" + std::to_string(getpid()));
      fs::create_directories(p);
      return p;
    }();
    return d;
  }
  // A generated model (and its projector for qwen3vlmoe); empty on failure.
  static std::string model(const Case& c) {
    const fs::path out = dir() / (std::string(c.name) + ".gguf");
    if (fs::exists(out)) return out;
    std::string cmd = engine() + " --log-level warn make-test-model --family " + c.family +
                      " --type " + c.type + " --out " + out.string() + " " + c.make_args;
    if (std::string(c.family) == "qwen3vlmoe") {
      cmd += " --mmproj " + (dir() / (std::string(c.name) + ".mmproj.gguf")).string();
    }
    int rc = 0;
    sh(cmd + " 2>&1", &rc);
    return rc == 0 ? out.string() : std::string();
  }
  // `run --json --logprobs 5` greedy; the parsed output, or null with the error in *err.
  static json run(const std::string& m, const std::string& extra, std::string* err) {
    int rc = 0;
    const std::string out = sh(engine() + " --log-level warn run --model " + m +
                                   " --prompt 'the quick brown fox' -n 12 --temperature 0 "
                                   "--json --logprobs 5 --threads 2 " +
                                   extra + " 2>/tmp/arc_cuda_run_err.txt",
                               &rc);
    if (rc != 0) {
      int r2 = 0;
      *err = "exit " + std::to_string(rc) + ": " + sh("cat /tmp/arc_cuda_run_err.txt", &r2);
      return nullptr;
    }
    return json::parse(out, nullptr, false);
  }
};

// Log-probabilities differ by the devices' rounding: F32 weights only by summation order; Q8_0 and
// Q4_K_M weights also because the CPU and the GPU quantise the activations apart (the CPU per
// row block for its kernels, the GPU to int8 per 32 values for dp4a), which moves a tiny random
// model's logits by up to about 0.25 nats (cuda_backend_test allows 8% of the largest logit).
// A wrong kernel moves them by whole nats. Tokens must be equal.
double logprob_tolerance(const char* type) {
  return std::string(type) == "F32" ? 0.02 : 0.4;
}

TEST_P(CudaRun, GreedyTokensAndLogprobsMatchTheCpu) {
  const Case c = GetParam();
  const std::string m = model(c);
  ASSERT_FALSE(m.empty()) << "make-test-model failed for " << c.name;
  std::string extra;
  if (std::string(c.family) == "qwen3vlmoe") {
    extra = "--image " + std::string(ARC_TEST_DATA_DIR) + "/vision/busy.png --mmproj " +
            (dir() / (std::string(c.name) + ".mmproj.gguf")).string() + " ";
  }
  std::string err;
  const json cpu = run(m, extra + "--backend cpu", &err);
  ASSERT_FALSE(cpu.is_null()) << err;
  const json gpu = run(m, extra + "--backend cuda", &err);
  ASSERT_FALSE(gpu.is_null()) << err;
  ASSERT_EQ(gpu["prompt_tokens"], cpu["prompt_tokens"]);
  ASSERT_EQ(gpu["tokens"], cpu["tokens"]) << c.name << ": greedy tokens differ";
  ASSERT_EQ(gpu["steps"].size(), cpu["steps"].size());
  for (size_t s = 0; s < cpu["steps"].size(); ++s) {
    const json& a = cpu["steps"][s]["top_logprobs"];
    const json& b = gpu["steps"][s]["top_logprobs"];
    ASSERT_EQ(a.size(), b.size());
    // The best token's log-probability, and each of the top ones where both list it.
    for (const json& x : a) {
      for (const json& y : b) {
        if (x["id"] != y["id"]) continue;
        EXPECT_NEAR(y["logprob"].get<double>(), x["logprob"].get<double>(),
                    logprob_tolerance(c.type))
            << c.name << " step " << s << " token " << x["id"];
      }
    }
  }
}

TEST_P(CudaRun, GraphsOnAndOffGiveTheSameTokens) {
  const Case c = GetParam();
  if (std::string(c.type) != "Q8_0") GTEST_SKIP() << "one format per family is enough here";
  const std::string m = model(c);
  ASSERT_FALSE(m.empty());
  std::string err;
  const json on = run(m, "--backend cuda", &err);
  ASSERT_FALSE(on.is_null()) << err;
  const json off = run(m, "--backend cuda --no-cuda-graphs", &err);
  ASSERT_FALSE(off.is_null()) << err;
  EXPECT_EQ(on["tokens"], off["tokens"]);
  EXPECT_EQ(on["steps"], off["steps"]) << "graphs replay the same kernels on the same data";
}

// `mpirun -np 2 run --tp 2 --backend cuda` (NCCL between the ranks; emulated: over MPI, each rank
// with its own device) gives the tokens and log-probabilities of one rank on the CUDA backend.
TEST_P(CudaRun, TensorParallelTwoRanksEqualOne) {
#if defined(ARC_MPIEXEC)
  const Case c = GetParam();
  // F32 splits at any column (the tiny Q8_0 experts' 32 columns do not split into 32-value
  // blocks over two ranks).
  if (std::string(c.name) != "qwen3moe_f32") GTEST_SKIP() << "one model is enough here";
  const std::string m = model(c);
  ASSERT_FALSE(m.empty());
  std::string err;
  const json one = run(m, "--backend cuda", &err);
  ASSERT_FALSE(one.is_null()) << err;
  int rc = 0;
  const std::string out =
      sh(std::string(ARC_MPIEXEC) + " -np 2 --allow-run-as-root --oversubscribe " + engine() +
             " --log-level warn run --model " + m +
             " --prompt 'the quick brown fox' -n 12 --temperature 0 --json --logprobs 5 "
             "--threads 1 --backend cuda --tp 2 2>/tmp/arc_cuda_tp_err.txt",
         &rc);
  ASSERT_EQ(rc, 0) << sh("cat /tmp/arc_cuda_tp_err.txt", &rc);
  const json two = json::parse(out, nullptr, false);
  ASSERT_FALSE(two.is_null()) << out;
  EXPECT_EQ(two["tokens"], one["tokens"]);
  for (size_t s = 0; s < one["steps"].size() && s < two["steps"].size(); ++s) {
    const json& a = one["steps"][s]["top_logprobs"];
    const json& b = two["steps"][s]["top_logprobs"];
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
      if (a[i]["id"] != b[i]["id"]) continue;
      // Two partial sums per layer instead of one: rounding only.
      EXPECT_NEAR(b[i]["logprob"].get<double>(), a[i]["logprob"].get<double>(),
                  logprob_tolerance(c.type))
          << c.name << " step " << s;
    }
  }
#else
  GTEST_SKIP() << "built without MPI";
#endif
}

// `bench --profile-ops` on the emulated device counts each decode kernel's operations, and the
// sampled step's candidates are selected on the device (as serve does), listed as sampling.
TEST_P(CudaRun, BenchCountsTheDecodeKernelsWorkWithSamplingOnTheDevice) {
  const Case& c = GetParam();
  if (std::string(c.name) != "qwen3moe_q8") GTEST_SKIP() << "one model is enough here";
  const std::string m = model(c);
  ASSERT_FALSE(m.empty());
  int rc = 0;
  const std::string out = sh(engine() + " --log-level warn bench -m " + m +
                                 " --backend cuda -p 4 -n 3 -r 1 --temperature 0.6 "
                                 "--profile-ops --json 2>&1",
                             &rc);
  ASSERT_EQ(rc, 0) << out;
  const json j = json::parse(out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << out;
  ASSERT_TRUE(j.contains("decode_kernel_work")) << out;
  double sampling = 0, forward = 0, shares = 0;
  for (const json& k : j["decode_kernel_work"]) {
    const double ops = k["ops_per_token"].get<double>();
    EXPECT_GT(ops, 0.0) << k.dump();
    shares += k["share"].get<double>();
    (k["sampling"].get<bool>() ? sampling : forward) += ops;
    if (k["kernel"] == "candidates_kernel") {
      EXPECT_TRUE(k["sampling"].get<bool>());
      EXPECT_DOUBLE_EQ(k["launches_per_token"].get<double>(), 1.0);
    }
  }
  EXPECT_GT(sampling, 0.0) << "no sampling kernel ran on the device: " << out;
  EXPECT_GT(forward, sampling);
  EXPECT_NEAR(shares, 1.0, 1e-9);
}

INSTANTIATE_TEST_SUITE_P(Families, CudaRun,
                         ::testing::Values(Case{"qwen3moe_f32", "qwen3moe", "F32"},
                                           Case{"qwen3moe_q8", "qwen3moe", "Q8_0"},
                                           Case{"qwen3moe_q4km", "qwen3moe", "Q4_K_M"},
                                           Case{"qwen2moe_q8", "qwen2moe", "Q8_0"},
                                           Case{"llama_q8", "llama", "Q8_0"},
                                           Case{"mixtral_q4km", "llama", "Q4_K_M", "--experts 4"},
                                           Case{"qwen3_q8", "qwen3", "Q8_0"},
                                           Case{"qwen3vlmoe_q8", "qwen3vlmoe", "Q8_0"}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
