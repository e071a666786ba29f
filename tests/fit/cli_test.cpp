// `arclight-engine fit` end to end: JSON output, the catalog list, and exit codes for bad input.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

namespace {

struct CliRun {
  int code = -1;
  std::string out;
};

CliRun run(const std::string& args) {
  const std::string cmd = std::string(ARC_BIN_DIR) + "/arclight-engine fit " + args + " 2>&1";
  CliRun r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

TEST(FitCli, JsonReportForACatalogBuild) {
  CliRun r =
      run("--catalog deepseek-v4.1-flash-1017 --build exl3-2.9bpw --boxes 2 --engram-on-disk "
          "--json --catalog-file " ARC_CATALOG_FILE);
  ASSERT_EQ(r.code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["verdict"], "fits");
  EXPECT_EQ(j["cluster"]["boxes"], 2);
  EXPECT_EQ(j["workload"]["ngram_on_disk"], true);
  EXPECT_EQ(j["by_boxes"].size(), 4u);
  EXPECT_EQ(j["by_boxes"][0]["verdict"], "does not fit");
}

TEST(FitCli, TextTablesAndList) {
  CliRun r = run("--catalog glm-5.3 --build exl3-2.75bpw --boxes 3");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("headroom"), std::string::npos);
  EXPECT_NE(r.out.find("boxes  verdict"), std::string::npos);
  CliRun l = run("--list");
  ASSERT_EQ(l.code, 0) << l.out;
  EXPECT_NE(l.out.find("qwen3.8-flash-next"), std::string::npos);
  EXPECT_NE(l.out.find("--build exl3-2.9bpw"), std::string::npos);
}

TEST(FitCli, BadInputsExitWithAMessage) {
  CliRun r = run("--catalog glm-5.3 --build exl3-2.75bpw --boxes 0");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("boxes must be at least 1"), std::string::npos) << r.out;
  r = run("--catalog glm-5.3 --build exl3-2.75bpw --context 0");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("context"), std::string::npos) << r.out;
  r = run("--catalog no-such-model");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("no catalog entry 'no-such-model'"), std::string::npos) << r.out;
  r = run("--catalog glm-5.3");  // several builds, none chosen
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("exl3-2.75bpw"), std::string::npos) << r.out;
  r = run("--catalog glm-5.3 --build exl3-2.75bpw --kv-dtype int3");
  EXPECT_EQ(r.code, 2);
  r = run("--model /nonexistent.gguf");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("nonexistent.gguf"), std::string::npos) << r.out;
  r = run("--boxes 2");
  EXPECT_EQ(r.code, 2);
}

}  // namespace
