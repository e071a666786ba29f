// GET /engine/cluster and POST /engine/link-test on a one-rank engine (the two-rank path runs in
// tests/dist/tp_serve_test.cpp under mpirun), and `arclight-engine probe` on a fake tree.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "e2e/engine_process.h"

namespace {

using arc::testing::EngineProcess;
using nlohmann::json;

// MemTotal of this machine in bytes, read here independently of the engine.
uint64_t mem_total_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  while (in >> key >> kib) {
    if (key == "MemTotal:") return kib * 1024;
    in.ignore(1 << 10, '\n');
  }
  return 0;
}

std::string run_capture(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

TEST(ClusterE2e, OneRankReportsItselfAndRefusesTheLinkTest) {
  EngineProcess e;
  ASSERT_TRUE(e.start({}, "idle")) << e.error();
  httplib::Client c("127.0.0.1", e.port());
  auto r = c.Get("/engine/cluster");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const json j = json::parse(r->body);
  EXPECT_EQ(j["ranks"], 1);
  ASSERT_EQ(j["nodes"].size(), 1u);
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  EXPECT_EQ(j["nodes"][0]["host"], host);
  EXPECT_EQ(j["nodes"][0]["rank"], 0);
  EXPECT_EQ(j["hosts"], json::array({{{"host", host}, {"ranks", {0}}}}));
  const json& p = j["nodes"][0]["probe"];
  EXPECT_EQ(p["memory"].value("total_bytes", uint64_t{0}), mem_total_bytes());
  EXPECT_TRUE(p["findings"].is_array());
  EXPECT_TRUE(p["rdma"].is_array());

  auto lt = c.Post("/engine/link-test", "", "application/json");
  ASSERT_TRUE(lt);
  EXPECT_EQ(lt->status, 409);
  EXPECT_NE(json::parse(lt->body)["error"].value("message", "").find("two or more ranks"),
            std::string::npos)
      << lt->body;
  // The body is checked before the rank count.
  lt = c.Post("/engine/link-test", "{not json", "application/json");
  ASSERT_TRUE(lt);
  EXPECT_EQ(lt->status, 400);
  lt = c.Post("/engine/link-test", json({{"sizes", {1}}}).dump(), "application/json");
  ASSERT_TRUE(lt);
  EXPECT_EQ(lt->status, 400);
  EXPECT_NE(lt->body.find("'sizes'"), std::string::npos) << lt->body;
}

TEST(ClusterE2e, ApiKeyIsRequired) {
  EngineProcess e;
  ASSERT_TRUE(e.start({"--api-key", "sekrit"}, "idle")) << e.error();
  httplib::Client c("127.0.0.1", e.port());
  auto r = c.Get("/engine/cluster");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  r = c.Post("/engine/link-test", "{}", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  r = c.Get("/engine/cluster", {{"Authorization", "Bearer sekrit"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

TEST(ClusterE2e, ProbeCommandReadsTheGivenTree) {
  const std::string bin = std::string(ARC_BIN_DIR) + "/arclight-engine";
  const std::string root = std::string(ARC_TEST_DATA_DIR) + "/cluster/spark";
  const json j =
      json::parse(run_capture(bin + " probe --json --no-gpu --root " + root), nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["hostname"], "spark-a");
  EXPECT_EQ(j["rdma"].size(), 4u);
  EXPECT_EQ(j["findings"].size(), 8u);
  const std::string text = run_capture(bin + " probe --no-gpu --root " + root);
  EXPECT_NE(text.find("host        spark-a"), std::string::npos) << text;
  EXPECT_NE(text.find("info: enp1s0f0np0 has MTU 1500"), std::string::npos) << text;
  // This machine, with the GPU query: whatever it has, a report and exit code 0.
  EXPECT_EQ(std::system((bin + " probe > /dev/null").c_str()), 0);
}

}  // namespace
