// Tensor parallelism under mpirun -np 2: the sharded model on two ranks against the whole model
// on one (the oracle: the unchanged single-rank forward), for every family, F32 and quantized.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "arc/communicator.h"
#include "arc/shard_plan.h"
#include "arc/tp_session.h"
#include "model/test_util.h"

namespace arc {
namespace {

MpiCommunicator* g_comm = nullptr;  // set by main for the test's lifetime

struct Decode {
  std::vector<int32_t> tokens;  // greedy tokens
  std::vector<float> logits;    // every step's last-row logits
  Status status;
};

int32_t argmax(const float* v, int64_t n) {
  return static_cast<int32_t>(std::max_element(v, v + n) - v);
}

// Prefill of a fixed prompt, then greedy steps; `step` runs one batch.
template <typename AddSeq, typename Reserve, typename Step>
Decode greedy(int64_t n_vocab, AddSeq add_seq, Reserve reserve, Step step) {
  const std::vector<int32_t> prompt = {1, 17, 42, 99, 7, 23};
  const int n_new = 6;
  Decode d;
  Result<int32_t> seq = add_seq();
  if (!seq.ok()) return {{}, {}, seq.status()};
  if (Status s = reserve(*seq, static_cast<int64_t>(prompt.size()) + n_new); !s.ok()) {
    return {{}, {}, s};
  }
  std::vector<int32_t> toks = prompt, pos, seqs;
  for (size_t i = 0; i < prompt.size(); ++i) {
    pos.push_back(static_cast<int32_t>(i));
    seqs.push_back(*seq);
  }
  for (int k = 0; k < n_new; ++k) {
    ForwardBatch b;
    b.tokens = toks;
    b.positions = pos;
    b.seq_ids = seqs;
    Result<std::vector<float>> l = step(b);
    if (!l.ok()) return {d.tokens, d.logits, l.status()};
    const int32_t next = argmax(l->data(), n_vocab);
    d.tokens.push_back(next);
    d.logits.insert(d.logits.end(), l->begin(), l->begin() + n_vocab);
    const int32_t p = pos.back() + 1;
    toks = {next};
    pos = {p};
    seqs = {*seq};
  }
  return d;
}

void compare_tp(const TestModelOptions& o, float tol) {
  Communicator& comm = *g_comm;
  Decode ref;
  int64_t n_vocab = 0;
  if (comm.rank() == 0) {  // the oracle: the whole model, single-rank forward
    Result<testing::Engine> e = testing::make_engine(o);
    ASSERT_TRUE(e.ok()) << e.status().to_string();
    n_vocab = e->model->config().n_vocab;
    ref = greedy(
        n_vocab, [&] { return Result<int32_t>(e->kv->add_sequence()); },
        [&](int32_t s, int64_t n) { return e->kv->reserve(s, n); },
        [&](const ForwardBatch& b) { return e->exec->run(b); });
    ASSERT_TRUE(ref.status.ok()) << ref.status.to_string();
  }
  // Every rank: its shard, its KV cache, its executor.
  Result<testing::Engine> e = testing::make_engine(o);
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  const uint64_t whole = e->model->weight_bytes();
  Result<ShardPlan> plan = make_shard_plan(*e->model, comm.size(), comm.rank());
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  Result<uint64_t> bytes = shard_model(*e->model, *e->backend, *plan);
  ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
  // About half of the whole: at most half plus the replicated tensors and the vocab slice.
  EXPECT_LT(*bytes, whole);
  EXPECT_GT(*bytes, whole / 4);
  const ModelConfig& lc = e->model->config();
  KvCacheOptions kvo{lc.n_layer, lc.n_kv_head, lc.head_dim, 16, 64, DType::F32};
  Result<std::unique_ptr<KvCache>> kv = KvCache::create(*e->backend, kvo);
  ASSERT_TRUE(kv.ok());
  ForwardExecutor exec(*e->model, *e->backend, **kv);
  exec.set_tensor_parallel(&comm, plan->vocab_begin);
  TpDriver drv(comm, exec, **kv);
  if (comm.rank() != 0) {
    Status s = drv.worker_loop();
    EXPECT_TRUE(s.ok()) << s.to_string();
    return;
  }
  Decode tp = greedy(
      n_vocab, [&] { return drv.add_sequence(); },
      [&](int32_t s, int64_t n) { return drv.reserve(s, n); },
      [&](const ForwardBatch& b) { return drv.step(b); });
  Status stopped = drv.stop();
  ASSERT_TRUE(tp.status.ok()) << tp.status.to_string();
  ASSERT_TRUE(stopped.ok()) << stopped.to_string();
  EXPECT_EQ(tp.tokens, ref.tokens);
  ASSERT_EQ(tp.logits.size(), ref.logits.size());
  float worst = 0;
  for (size_t i = 0; i < ref.logits.size(); ++i) {
    worst = std::max(worst, std::fabs(tp.logits[i] - ref.logits[i]));
  }
  EXPECT_LE(worst, tol) << "largest logit difference TP=2 vs TP=1";
  std::printf("  %s %s: max |logit diff| %.2e, rank 0 weights %.0f%% of whole\n",
              std::string(family_name(o.family)).c_str(), o.type.c_str(), worst,
              100.0 * static_cast<double>(*bytes) / static_cast<double>(whole));
}

TestModelOptions opts(Family f, const std::string& type) {
  TestModelOptions o;
  o.family = f;
  o.type = type;
  o.n_ff_exp = 64;  // 32 per rank: whole Q8_0 blocks
  o.n_ff_shexp = 64;
  return o;
}

// Logits have std ~4 (test_model.h); F32 differs only in summation order.
constexpr float kTolF32 = 1e-3f;
// Q8_0: activations are quantized per 32-value block, identical on both sides of a block-aligned
// split; only summation order differs, plus rounding of the per-block products.
constexpr float kTolQ8 = 5e-3f;

TEST(TensorParallel, LlamaDense) {
  compare_tp(opts(Family::kLlama, "F32"), kTolF32);
  compare_tp(opts(Family::kLlama, "Q8_0"), kTolQ8);
}
TEST(TensorParallel, LlamaMoe) {
  TestModelOptions o = opts(Family::kLlama, "F32");
  o.n_expert = 4;
  compare_tp(o, kTolF32);
}
TEST(TensorParallel, Qwen3) {
  compare_tp(opts(Family::kQwen3, "F32"), kTolF32);
  compare_tp(opts(Family::kQwen3, "Q8_0"), kTolQ8);
}
TEST(TensorParallel, Qwen2Moe) {
  compare_tp(opts(Family::kQwen2Moe, "F32"), kTolF32);
  compare_tp(opts(Family::kQwen2Moe, "Q8_0"), kTolQ8);
}
TEST(TensorParallel, Qwen3Moe) {
  compare_tp(opts(Family::kQwen3Moe, "F32"), kTolF32);
  compare_tp(opts(Family::kQwen3Moe, "Q8_0"), kTolQ8);
}
TEST(TensorParallel, KvHeadsReplicatedWhenFewerThanRanks) {
  TestModelOptions o = opts(Family::kQwen3, "F32");
  o.n_kv_head = 1;
  compare_tp(o, kTolF32);
}
TEST(TensorParallel, UnevenPlanRefusedOnEveryRank) {
  TestModelOptions o = opts(Family::kQwen3, "F32");
  o.n_head = 3;
  o.n_kv_head = 1;
  Result<testing::Engine> e = testing::make_engine(o);
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  Result<ShardPlan> p = make_shard_plan(*e->model, g_comm->size(), g_comm->rank());
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().to_string().find("3 attention heads"), std::string::npos)
      << p.status().to_string();
}

}  // namespace
}  // namespace arc

int main(int argc, char** argv) {
  auto session = arc::MpiSession::init(&argc, &argv);
  if (!session.ok()) return 2;
  int rc = 0;
  {
    auto comm = arc::MpiCommunicator::create(**session, std::chrono::seconds(60));
    if (!comm.ok()) return 2;
    arc::g_comm = comm->get();
    ::testing::InitGoogleTest(&argc, argv);
    if ((*comm)->rank() != 0) {  // one report: rank 0's
      auto& l = ::testing::UnitTest::GetInstance()->listeners();
      delete l.Release(l.default_result_printer());
    }
    rc = RUN_ALL_TESTS();
    // Every rank's verdict counts.
    float bad = rc != 0 ? 1.0f : 0.0f;
    (void)(*comm)->all_reduce_sum(&bad, 1);
    rc = bad > 0 ? 1 : 0;
    arc::g_comm = nullptr;
  }
  return rc;
}
