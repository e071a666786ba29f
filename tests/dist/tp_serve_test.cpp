// `serve --tp 2` and `run --tp 2` under mpirun, driven like a user would: greedy chat text
// against `serve` on one rank (the oracle: the single-rank engine), model load/unload across
// ranks, and rank faults (a worker that exits or hangs) ending within a bound with a clear
// message. Each case starts its own short mpirun job.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "dist/tp_job.h"

// In the helpers' namespace: Job, mpirun, wait_state, run_command, ... (dist/tp_job.h).
namespace arc::tptest {
namespace {

using nlohmann::json;

json chat_body(const std::string& content, int max_tokens) {
  return {{"model", "test"},
          {"temperature", 0},
          {"max_tokens", max_tokens},
          {"messages", json::array({{{"role", "user"}, {"content", content}}})}};
}

class TpServe : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ASSERT_EQ(run_command({kBin, "--log-level", "warn", "make-test-model", "--family", "qwen3moe",
                           "--out", model_a(), "--layers", "2", "--seed", "7"}),
              0);
    ASSERT_EQ(run_command({kBin, "--log-level", "warn", "make-test-model", "--family", "llama",
                           "--out", model_b(), "--layers", "2", "--seed", "11"}),
              0);
  }
  static void TearDownTestSuite() {
    fs::remove(model_a());
    fs::remove(model_b());
  }

 public:
  static std::string model_a() {
    // Per process: several checkouts may run this test at once on one machine.
    return (fs::temp_directory_path() / ("arc_tp_serve_a_" + std::to_string(getpid()) + ".gguf"))
        .string();
  }
  static std::string model_b() {
    return (fs::temp_directory_path() / ("arc_tp_serve_b_" + std::to_string(getpid()) + ".gguf"))
        .string();
  }

 protected:
  static std::vector<std::string> serve_args(std::vector<std::string> extra) {
    std::vector<std::string> a = {"--log-level", "warn",       "serve",   "--port",
                                  "0",           "--model",    model_a(), "--ctx-size",
                                  "256",         "--threads",  "1",       "--max-batch-tokens",
                                  "64",          "--parallel", "4"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }
};

// What the same scripted session answers: chats (one extending another's prompt, so the prefix
// cache attaches blocks; several at once, so steps batch sequences), then a switch to model B.
struct Session {
  std::vector<std::string> texts;
  std::vector<int64_t> cached;
  int ranks = 0;
  std::vector<std::string> tp_split;  // /engine/status model.tp_split
  std::string error;
  // GET /engine/cluster and POST /engine/link-test, with a model loaded and with none.
  std::vector<json> cluster;
  std::vector<int> link_status;
  std::vector<json> link;
};

// The cluster routes between chats: every rank's probe, and a small link test, whose messages
// reach the workers in their step loop (model loaded) or their idle loop (none).
void cluster_checks(httplib::Client& c, Session& s, bool defaults = false) {
  auto cl = c.Get("/engine/cluster");
  s.cluster.push_back(cl && cl->status == 200 ? json::parse(cl->body) : json());
  // Without "iterations" (as the app's button asks): the count comes from the size. The default
  // sizes take tens of seconds on an oversubscribed test box, so one small size here.
  const std::string body = defaults ? json({{"sizes", {4096}}}).dump()
                                    : json({{"sizes", {4096, 1 << 20}}, {"iterations", 3}}).dump();
  auto lt = c.Post("/engine/link-test", body, "application/json");
  s.link_status.push_back(lt ? lt->status : 0);
  s.link.push_back(lt ? json::parse(lt->body, nullptr, false) : json());
}

Session script(int port) {
  Session s;
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(60, 0);
  auto chat = [&](const std::string& prompt) -> std::string {
    auto r = c.Post("/v1/chat/completions", chat_body(prompt, 12).dump(), "application/json");
    if (!r || r->status != 200) {
      s.error = "chat failed: " + (r ? std::to_string(r->status) + " " + r->body : "no answer");
      return {};
    }
    auto j = json::parse(r->body);
    s.cached.push_back(j["usage"]
                           .value("prompt_tokens_details", json::object())
                           .value("cached_tokens", int64_t{0}));
    return j["choices"][0]["message"].value("content", "");
  };
  const std::string base =
      "Tell me a long story about a lighthouse keeper who counts the waves every night and "
      "writes the numbers into a book";
  s.texts.push_back(chat(base));
  s.texts.push_back(chat(base + " and then one night the numbers stop"));
  // Three at once: one batch holds several sequences' block tables.
  std::vector<std::string> parallel(3);
  std::vector<std::thread> threads;
  for (int i = 0; i < 3; ++i) {
    threads.emplace_back([&, i] {
      httplib::Client ci("127.0.0.1", port);
      ci.set_read_timeout(60, 0);
      auto r =
          ci.Post("/v1/chat/completions",
                  chat_body("question number " + std::to_string(i) + " about the sea", 10).dump(),
                  "application/json");
      if (r && r->status == 200) {
        parallel[i] = json::parse(r->body)["choices"][0]["message"].value("content", "");
      } else {
        parallel[i] = "<failed>";
      }
    });
  }
  for (auto& t : threads) t.join();
  s.texts.insert(s.texts.end(), parallel.begin(), parallel.end());
  auto st = c.Get("/engine/status");
  if (st) {
    const json sj = json::parse(st->body);
    s.ranks = sj.value("ranks", 0);
    s.tp_split = sj.value("model", json::object()).value("tp_split", std::vector<std::string>{});
  }
  cluster_checks(c, s);

  // Unload, then load model B on every rank.
  auto u = c.Post("/engine/unload", "", "application/json");
  if (!u || u->status != 200) s.error = "unload failed";
  if (!wait_state(port, "idle", 10)) s.error = "not idle after unload";
  cluster_checks(c, s, /*defaults=*/true);
  auto l = c.Post("/engine/load", json({{"model", TpServe::model_b()}}).dump(), "application/json");
  if (!l || l->status != 202) s.error = "load failed: " + (l ? l->body : "no answer");
  if (!wait_state(port, "ready", 30)) s.error = "model B not ready";
  s.texts.push_back(chat("A short poem about rain"));
  return s;
}

TEST_F(TpServe, TwoRanksAnswerLikeOneThenSwitchModels) {
  Session one, two;
  {
    Job j;
    std::vector<std::string> argv = {kBin};
    auto a = serve_args({});
    argv.insert(argv.end(), a.begin(), a.end());
    ASSERT_TRUE(j.start(argv));
    const int port = j.wait_port(30);
    ASSERT_GT(port, 0) << j.stderr_text();
    ASSERT_TRUE(wait_state(port, "ready", 30)) << j.stderr_text();
    one = script(port);
  }
  ASSERT_TRUE(one.error.empty()) << one.error;
  {
    Job j;
    // Whole experts per rank (expert parallelism), asked for: the workers plan alike.
    ASSERT_TRUE(
        j.start(mpirun(2, serve_args({"--tp", "2", "--tp-timeout", "20", "--moe-split", "ep"}))));
    const int port = j.wait_port(30);
    ASSERT_GT(port, 0) << j.stderr_text();
    ASSERT_TRUE(wait_state(port, "ready", 30)) << j.stderr_text();
    two = script(port);
    j.stop();
    EXPECT_TRUE(two.error.empty()) << two.error << "\n" << j.stderr_text();
  }
  EXPECT_EQ(one.ranks, 1);
  EXPECT_EQ(two.ranks, 2);
  EXPECT_TRUE(one.tp_split.empty());
  bool ep_said = false;  // the status says which split the routed experts got, and why
  for (const std::string& line : two.tp_split) {
    ep_said = ep_said || line.find("routed experts: expert parallelism") != std::string::npos;
  }
  EXPECT_TRUE(ep_said) << json(two.tp_split).dump();
  ASSERT_EQ(one.texts.size(), two.texts.size());
  for (size_t i = 0; i < one.texts.size(); ++i) {
    EXPECT_FALSE(one.texts[i].empty()) << "request " << i;
    EXPECT_EQ(one.texts[i], two.texts[i]) << "request " << i;
  }
  // One rank: its own probe, and the link test refused as a conflict with a reason.
  ASSERT_EQ(one.cluster.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(one.cluster[i].value("ranks", 0), 1);
    EXPECT_EQ(one.link_status[i], 409);
    EXPECT_NE(one.link[i].dump().find("two or more ranks"), std::string::npos) << one.link[i];
    // Two ranks on this machine: two probes of the same host, mapped to ranks 0 and 1.
    const json& c2 = two.cluster.at(i);
    ASSERT_EQ(c2.value("ranks", 0), 2) << c2;
    ASSERT_EQ(c2["nodes"].size(), 2u);
    EXPECT_EQ(c2["nodes"][1]["rank"], 1);
    EXPECT_FALSE(c2["nodes"][1]["probe"].value("hostname", "").empty());
    EXPECT_EQ(c2["nodes"][0]["host"], c2["nodes"][1]["host"]);
    EXPECT_EQ(c2["hosts"].size(), 1u);
    EXPECT_EQ(c2["hosts"][0]["ranks"], json::array({0, 1}));
    EXPECT_EQ(c2["nodes"][0]["host"], one.cluster[i]["nodes"][0]["host"]);
    ASSERT_EQ(two.link_status[i], 200) << two.link[i];
    // Loaded: two sizes, 3 times each; idle: 4 KiB as often as its size gives (200).
    ASSERT_EQ(two.link[i]["results"].size(), i == 0 ? 2u : 1u) << two.link[i];
    for (const auto& r : two.link[i]["results"]) {
      EXPECT_TRUE(r.value("correct", false)) << r;
      EXPECT_GT(r.value("algbw_gbs", 0.0), 0.0) << r;
    }
    EXPECT_EQ(two.link[i]["results"][0]["iterations"], i == 0 ? 3 : 200);
    EXPECT_EQ(two.link[i]["results"][0]["bytes"], 4096);
    EXPECT_EQ(two.link[i].value("model_loaded", true), i == 0);
  }
  // The second chat extends the first: its leading blocks came from the prefix cache.
  ASSERT_GE(two.cached.size(), 2u);
  EXPECT_GT(two.cached[1], 0);
  EXPECT_EQ(one.cached[1], two.cached[1]);
}

TEST_F(TpServe, ModelThatCannotSplitIsRefusedAndTheRanksStayInStep) {
  const std::string odd =
      (fs::temp_directory_path() / ("arc_tp_serve_odd_" + std::to_string(getpid()) + ".gguf"))
          .string();
  // 4 heads of 64 values with a Q4_K output projection: any cut over 2 ranks leaves a rank 128
  // columns, half a 256-value block (padding cannot help).
  ASSERT_EQ(run_command({kBin,         "--log-level", "warn",       "make-test-model",
                         "--family",   "qwen3",       "--out",      odd,
                         "--layers",   "1",           "--hidden",   "256",
                         "--heads",    "4",           "--kv-heads", "4",
                         "--head-dim", "64",          "--ff",       "512",
                         "--type",     "Q4_K"}),
            0);
  Job j;
  ASSERT_TRUE(j.start(mpirun(2, serve_args({"--tp", "2", "--tp-timeout", "20"}))));
  const int port = j.wait_port(30);
  ASSERT_GT(port, 0) << j.stderr_text();
  ASSERT_TRUE(wait_state(port, "ready", 30)) << j.stderr_text();
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(60, 0);
  // Refused before anything is unloaded (issue 33): the answer carries the reason and the
  // loaded model keeps serving.
  auto l = c.Post("/engine/load", json({{"model", odd}}).dump(), "application/json");
  ASSERT_TRUE(l);
  EXPECT_EQ(l->status, 400) << l->body;
  EXPECT_EQ(json::parse(c.Get("/engine/status")->body)["state"], "ready");
  const std::string why = json::parse(l->body)["error"].value("message", "");
  EXPECT_NE(why.find("4 attention heads of 64 values over 2 ranks"), std::string::npos) << why;
  EXPECT_NE(why.find("Rank counts that split: 1"), std::string::npos) << why;
  // The workers were never told: the next model loads and answers.
  l = c.Post("/engine/load", json({{"model", model_a()}}).dump(), "application/json");
  ASSERT_TRUE(l && l->status == 202);
  ASSERT_TRUE(wait_state(port, "ready", 30)) << j.stderr_text();
  auto r = c.Post("/v1/chat/completions", chat_body("hello", 4).dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  fs::remove(odd);
}

// Every rank checks its own memory before any weight is read; rank 0 refuses the load naming
// the rank and host that lacks it, and every rank stays in step for the next load. Rank 1's free
// memory is lowered by a test option (1 MiB: less than its shard of model A).
TEST_F(TpServe, WorkerWithoutMemoryRefusesTheLoadNamingItsRank) {
  Job j;
  ASSERT_TRUE(j.start(mpirun(
      2, serve_args({"--tp", "2", "--tp-timeout", "20", "--tp-test-rank1-memory-gib", "0.001"}))));
  const int port = j.wait_port(30);
  ASSERT_GT(port, 0) << j.stderr_text();
  ASSERT_TRUE(wait_state(port, "error", 30)) << j.stderr_text();
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(60, 0);
  const json st = json::parse(c.Get("/engine/status")->body);
  const std::string why = st.value("error", "");
  EXPECT_NE(why.find("rank 1: "), std::string::npos) << why;
  EXPECT_NE(why.find("lacks memory for its shard"), std::string::npos) << why;
  EXPECT_NE(why.find("(test limit)"), std::string::npos) << why;
  EXPECT_EQ(why.find("rank 0: "), std::string::npos) << why;
  // The ranks stay in step: the next load is refused the same way (no collective mismatch).
  auto l = c.Post("/engine/load", json({{"model", model_b()}}).dump(), "application/json");
  ASSERT_TRUE(l && l->status == 202);
  ASSERT_TRUE(wait_state(port, "error", 30)) << j.stderr_text();
  const std::string again = json::parse(c.Get("/engine/status")->body).value("error", "");
  EXPECT_NE(again.find("rank 1: "), std::string::npos) << again;
  EXPECT_NE(again.find("lacks memory"), std::string::npos) << again;
}

TEST_F(TpServe, HungWorkerGives503WithTheReasonThenTheJobEnds) {
  Job j;
  ASSERT_TRUE(j.start(mpirun(2, serve_args({"--tp", "2", "--tp-timeout", "2", "--tp-test-fault",
                                            "hang", "--tp-test-fault-step", "3"}))));
  const int port = j.wait_port(30);
  ASSERT_GT(port, 0) << j.stderr_text();
  ASSERT_TRUE(wait_state(port, "ready", 30)) << j.stderr_text();
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(30, 0);
  const auto t0 = Clock::now();
  auto r = c.Post("/v1/chat/completions", chat_body("hello there", 20).dump(), "application/json");
  const double waited = since(t0);
  ASSERT_TRUE(r) << j.stderr_text();
  EXPECT_EQ(r->status, 503) << r->body;
  EXPECT_NE(r->body.find("did not complete within"), std::string::npos) << r->body;
  EXPECT_LT(waited, 10.0);
  // Status and new requests carry the reason until the job ends.
  auto st = c.Get("/engine/status");
  if (st) {  // the grace period (2 s) may already be over on a slow machine
    auto js = json::parse(st->body);
    EXPECT_EQ(js.value("state", ""), "error");
    EXPECT_NE(js.value("error", "").find("did not complete within"), std::string::npos);
    auto again = c.Post("/v1/chat/completions", chat_body("again", 4).dump(), "application/json");
    if (again) {
      EXPECT_EQ(again->status, 503);
    }
  }
  auto rc = j.wait_exit(20);
  ASSERT_TRUE(rc.has_value()) << "the job still runs after the grace period";
  EXPECT_NE(*rc, 0);
  EXPECT_LT(since(t0), 25.0);
  EXPECT_NE(j.stderr_text().find("did not complete within"), std::string::npos) << j.stderr_text();
}

TEST_F(TpServe, WorkerHungWhileLoadingIsAnErrorAfterTheLoadTimeout) {
  Job j;
  ASSERT_TRUE(
      j.start(mpirun(2, serve_args({"--tp", "2", "--tp-timeout", "2", "--tp-load-timeout", "3",
                                    "--tp-test-fault", "hang", "--tp-test-fault-step", "0"}))));
  const int port = j.wait_port(30);
  ASSERT_GT(port, 0) << j.stderr_text();
  const auto t0 = Clock::now();
  ASSERT_TRUE(wait_state(port, "error", 15)) << j.stderr_text();
  EXPECT_LT(since(t0), 10.0);
  httplib::Client c("127.0.0.1", port);
  if (auto st = c.Get("/engine/status")) {
    const std::string why = json::parse(st->body).value("error", "");
    EXPECT_NE(why.find("load outcome) did not complete within 3.0 s"), std::string::npos) << why;
  }
  auto rc = j.wait_exit(20);
  ASSERT_TRUE(rc.has_value()) << "the job still runs after the grace period";
  EXPECT_NE(*rc, 0);
}

TEST_F(TpServe, WorkerThatExitsEndsTheJobWithAMessage) {
  Job j;
  ASSERT_TRUE(j.start(mpirun(2, serve_args({"--tp", "2", "--tp-timeout", "2", "--tp-test-fault",
                                            "exit", "--tp-test-fault-step", "3"}))));
  const int port = j.wait_port(30);
  ASSERT_GT(port, 0) << j.stderr_text();
  ASSERT_TRUE(wait_state(port, "ready", 30)) << j.stderr_text();
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(30, 0);
  const auto t0 = Clock::now();
  auto r = c.Post("/v1/chat/completions", chat_body("hello there", 20).dump(), "application/json");
  // Open MPI ends the whole job when a rank exits; if rank 0 outlives it briefly, the request
  // fails with the watchdog's reason instead. Never a 200 with a full answer.
  if (r) {
    EXPECT_NE(r->status, 200) << r->body;
  }
  auto rc = j.wait_exit(20);
  ASSERT_TRUE(rc.has_value()) << "the job still runs";
  EXPECT_NE(*rc, 0);
  EXPECT_LT(since(t0), 25.0);
  const std::string err = j.stderr_text();
  EXPECT_NE(err.find("test fault injected"), std::string::npos) << err;
  // mpirun names the rank that ended the job.
  EXPECT_TRUE(err.find("exited") != std::string::npos ||
              err.find("did not complete within") != std::string::npos)
      << err;
}

TEST_F(TpServe, RunWithHungWorkerAbortsWithinTheDeadline) {
  Job j;
  ASSERT_TRUE(
      j.start(mpirun(2, {"--log-level", "warn", "run", "--model", model_a(), "--prompt-ids",
                         "1,2,3,4", "-n", "16", "--threads", "1", "--tp", "2", "--tp-timeout", "2",
                         "--tp-test-fault", "hang", "--tp-test-fault-step", "3"})));
  const auto t0 = Clock::now();
  auto rc = j.wait_exit(20);
  ASSERT_TRUE(rc.has_value()) << "run still blocked after 20 s";
  EXPECT_NE(*rc, 0);
  EXPECT_LT(since(t0), 20.0);
  EXPECT_NE(j.stderr_text().find("did not complete within 2.0 s"), std::string::npos)
      << j.stderr_text();
}

}  // namespace
}  // namespace arc::tptest
