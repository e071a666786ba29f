// Tensor parallelism under mpirun -np 2: the sharded model on two ranks against the whole model
// on one (the oracle: the unchanged single-rank forward), for every family, F32 and quantized.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "arc/communicator.h"
#include "arc/shard_plan.h"
#include "arc/tp_session.h"
#include "dist/tp_load_util.h"
#include "model/kv_window_script.h"
#include "model/test_util.h"

namespace arc {
namespace {

MpiCommunicator* g_comm = nullptr;  // set by main for the test's lifetime

using tptest::Decode;
using tptest::greedy;

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
// glm4moe: a leading dense layer, sigmoid routing with the selection bias and routed scaling, a
// shared expert added without a gate, partial rotary, q/k/v biases; the MTP layer not loaded.
TEST(TensorParallel, Glm4Moe) {
  TestModelOptions o = opts(Family::kGlm4Moe, "F32");
  o.n_layer = 3;
  compare_tp(o, kTolF32);
  o.qk_norm = true;
  compare_tp(o, kTolF32);
  compare_tp(opts(Family::kGlm4Moe, "Q8_0"), kTolQ8);
}
// minimax-m2: the q/k norms over all heads span the ranks (their sums of squares are summed);
// with one KV head both ranks hold it, and the k norm must still count it once.
TEST(TensorParallel, MiniMaxM2) {
  compare_tp(opts(Family::kMiniMaxM2, "F32"), kTolF32);
  compare_tp(opts(Family::kMiniMaxM2, "Q8_0"), kTolQ8);
  TestModelOptions o = opts(Family::kMiniMaxM2, "F32");
  o.n_kv_head = 1;
  compare_tp(o, kTolF32);
}

// gpt-oss: sinks split by head, expert biases by column, the output and down biases added once;
// a window shorter than the prompts; MXFP4 experts split by column blocks.
TEST(TensorParallel, GptOss) {
  TestModelOptions o = opts(Family::kGptOss, "F32");
  o.sliding_window = 4;
  compare_tp(o, kTolF32);
  o.type = "Q8_0";
  compare_tp(o, kTolQ8);
  o.type = "F32";
  o.experts_type = "MXFP4";
  compare_tp(o, kTolQ8);
  // 9 MXFP4 blocks of expert width: 4 on rank 0, 5 on rank 1 (uneven, whole blocks).
  o.n_ff_exp = 288;
  compare_tp(o, kTolQ8);
}

// gpt-oss with a windowed pool for its sliding-window layers on both ranks: rank 0 decides the
// windowed tables too (released blocks, blocks handed out again, prefix reuse past the window
// and its fallback) and sends them with each step. Oracle: the same script on the whole model
// with the full pool on one rank.
TEST(TensorParallel, GptOssWindowedPool) {
  Communicator& comm = *g_comm;
  const auto cpu = []() -> Result<std::unique_ptr<Backend>> { return make_cpu_backend(1); };
  testing::ScriptResult ref;
  if (comm.rank() == 0) {
    auto e = testing::window_engine(cpu, 0);
    ASSERT_TRUE(e.ok()) << e.status().to_string();
    ASSERT_TRUE(testing::window_script(testing::target_of(*e), ref).ok());
  }
  auto e = testing::window_engine(cpu, 0);
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  const int64_t n_vocab = e->model->config().n_vocab;
  Result<ShardPlan> plan = make_shard_plan(*e->model, comm.size(), comm.rank());
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  ASSERT_TRUE(shard_model(*e->model, *e->backend, *plan).ok());
  const ModelConfig& lc = e->model->config();
  auto kv = KvCache::create(
      *e->backend,
      with_windowed_pool(kv_cache_options(lc, testing::kWinBlock, 96, DType::F16), lc, 12));
  ASSERT_TRUE(kv.ok()) << kv.status().to_string();
  ASSERT_NE((*kv)->window(), nullptr);
  ForwardExecutor exec(*e->model, *e->backend, **kv);
  exec.set_tensor_parallel(&comm, plan->vocab_begin);
  TpDriver drv(comm, exec, **kv);
  if (comm.rank() != 0) {
    Status s = drv.worker_loop();
    EXPECT_TRUE(s.ok()) << s.to_string();
    return;
  }
  testing::ScriptResult tp;
  const Status run = testing::window_script(
      {**kv, n_vocab, [&](const ForwardBatch& b) { return drv.step(b); }}, tp);
  ASSERT_TRUE(drv.stop().ok());
  ASSERT_TRUE(run.ok()) << run.to_string();
  EXPECT_EQ(ref.c_reused, 64);
  EXPECT_EQ(tp.c_reused, 64);
  EXPECT_LT(tp.d_reused, 28) << "the window at 28 was evicted: a shorter prefix is reused";
  ASSERT_EQ(tp.out.size(), ref.out.size());
  ASSERT_EQ(tp.tail.size(), ref.tail.size());
  float worst = 0;
  for (size_t i = 0; i < ref.out.size(); ++i) {
    worst = std::max(worst, std::fabs(tp.out[i] - ref.out[i]));
  }
  for (size_t i = 0; i < ref.tail.size(); ++i) {
    worst = std::max(worst, std::fabs(tp.tail[i] - ref.tail[i]));
  }
  EXPECT_LE(worst, 2e-3f) << "largest logit difference, TP=2 windowed vs TP=1 full pool";
}

TEST(TensorParallel, KvHeadsReplicatedWhenFewerThanRanks) {
  TestModelOptions o = opts(Family::kQwen3, "F32");
  o.n_kv_head = 1;
  compare_tp(o, kTolF32);
}
// Only rank 0 decides KV blocks (prefix reuse, LRU eviction of cached blocks, a freed
// sequence's blocks handed to another); workers follow the tables sent with each step. The same
// script on the whole model with its own single-rank cache is the oracle.
struct KvScriptOut {
  std::vector<float> logits;    // every step's rows
  std::vector<int64_t> cached;  // tokens attached from the prefix cache, per attach
  Status status;
};

template <typename Step>
KvScriptOut kv_script(KvCache& kv, int64_t n_vocab, Step step) {
  KvScriptOut out;
  auto run = [&](int32_t seq, const std::vector<int32_t>& toks, int32_t start) {
    std::vector<int32_t> pos, seqs(toks.size(), seq);
    for (size_t i = 0; i < toks.size(); ++i) pos.push_back(start + static_cast<int32_t>(i));
    ForwardBatch b;
    b.tokens = toks;
    b.positions = pos;
    b.seq_ids = seqs;
    Result<std::vector<float>> l = step(b);
    if (!l.ok()) {
      out.status = l.status();
      return;
    }
    out.logits.insert(out.logits.end(), l->begin(), l->begin() + n_vocab);
  };
  std::vector<int32_t> p;  // 13 tokens: three full blocks of 4 and one more
  for (int i = 0; i < 13; ++i) p.push_back(3 + 7 * i % 50);
  // a: prefill, index its full blocks, free them (they stay cached).
  const int32_t a = kv.add_sequence();
  if (!kv.reserve(a, 13).ok()) return {{}, {}, internal_error("reserve a")};
  run(a, p, 0);
  kv.commit(a, p, 13);
  kv.free_sequence(a);
  // b: the same 12-token prefix from the cache, then its own 4 tokens.
  std::vector<int32_t> pb(p.begin(), p.begin() + 12);
  for (int32_t t : {61, 62, 63, 64}) pb.push_back(t);
  const int32_t b = kv.add_sequence();
  out.cached.push_back(kv.attach_cached_prefix(b, pb));
  if (!kv.reserve(b, 16).ok()) return {{}, {}, internal_error("reserve b")};
  run(b, std::vector<int32_t>(pb.begin() + 12, pb.end()), 12);
  kv.commit(b, pb, 16);
  // c: takes the free blocks but two; freeing b leaves them and b's four cached, so d's four
  // blocks evict the two deepest of the prefix.
  const int32_t c = kv.add_sequence();
  if (!kv.reserve(c, 16).ok()) return {{}, {}, internal_error("reserve c")};
  std::vector<int32_t> pc;
  for (int i = 0; i < 16; ++i) pc.push_back(40 + i);
  run(c, pc, 0);
  kv.free_sequence(b);
  const int32_t d = kv.add_sequence();
  if (!kv.reserve(d, 16).ok()) return {{}, {}, internal_error("reserve d")};
  std::vector<int32_t> pd = {9, 8, 7, 6, 5, 4, 3, 2, 1, 11, 12, 13};
  run(d, pd, 0);
  kv.free_sequence(c);  // uncommitted: its blocks go back to the free list
  // e: what is left of the prefix after the eviction, then its own blocks.
  const int32_t e = kv.add_sequence();
  out.cached.push_back(kv.attach_cached_prefix(e, pb));
  const int64_t have = out.cached.back();
  if (!kv.reserve(e, 16).ok()) return {{}, {}, internal_error("reserve e")};
  run(e, std::vector<int32_t>(pb.begin() + have, pb.end()), static_cast<int32_t>(have));
  // Decode steps of d and e together: one batch, two block tables.
  std::vector<int32_t> toks = {5, 6}, pos = {12, 16}, seqs = {d, e};
  ForwardBatch both;
  both.tokens = toks;
  both.positions = pos;
  both.seq_ids = seqs;
  if (!kv.reserve(d, 13).ok() || !kv.reserve(e, 17).ok()) {
    return {{}, {}, internal_error("reserve the decode step")};
  }
  Result<std::vector<float>> l = step(both);
  if (!l.ok()) return {out.logits, out.cached, l.status()};
  out.logits.insert(out.logits.end(), l->begin(), l->end());
  return out;
}

TEST(TensorParallel, PrefixReuseAndEvictionFollowRankZerosTables) {
  Communicator& comm = *g_comm;
  const TestModelOptions o = opts(Family::kQwen3, "F32");
  const int64_t block = 4, n_blocks = 10;
  KvScriptOut ref;
  int64_t n_vocab = 0;
  if (comm.rank() == 0) {
    Result<testing::Engine> e = testing::make_engine(o, 1, DType::F32, block);
    ASSERT_TRUE(e.ok()) << e.status().to_string();
    n_vocab = e->model->config().n_vocab;
    const ModelConfig& c = e->model->config();
    auto kv = KvCache::create(*e->backend,
                              {c.n_layer, c.n_kv_head, c.head_dim, block, n_blocks, DType::F32});
    ASSERT_TRUE(kv.ok());
    ForwardExecutor exec(*e->model, *e->backend, **kv);
    ref = kv_script(**kv, n_vocab, [&](const ForwardBatch& b) { return exec.run(b); });
  }
  Result<testing::Engine> e = testing::make_engine(o, 1, DType::F32, block);
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  Result<ShardPlan> plan = make_shard_plan(*e->model, comm.size(), comm.rank());
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  ASSERT_TRUE(shard_model(*e->model, *e->backend, *plan).ok());
  const ModelConfig& lc = e->model->config();
  auto kv = KvCache::create(*e->backend,
                            {lc.n_layer, lc.n_kv_head, lc.head_dim, block, n_blocks, DType::F32});
  ASSERT_TRUE(kv.ok());
  ForwardExecutor exec(*e->model, *e->backend, **kv);
  exec.set_tensor_parallel(&comm, plan->vocab_begin);
  TpDriver drv(comm, exec, **kv);
  if (comm.rank() != 0) {
    Status s = drv.worker_loop();
    EXPECT_TRUE(s.ok()) << s.to_string();
    return;
  }
  KvScriptOut tp = kv_script(**kv, n_vocab, [&](const ForwardBatch& b) { return drv.step(b); });
  ASSERT_TRUE(drv.stop().ok());
  ASSERT_TRUE(ref.status.ok()) << ref.status.to_string();
  ASSERT_TRUE(tp.status.ok()) << tp.status.to_string();
  // The script did reuse and evict (else it tests nothing).
  ASSERT_EQ(ref.cached.size(), 2u);
  EXPECT_EQ(ref.cached[0], 12);
  EXPECT_EQ(ref.cached[1], 8);  // two of the three prefix blocks survived
  EXPECT_EQ(tp.cached, ref.cached);
  ASSERT_EQ(tp.logits.size(), ref.logits.size());
  float worst = 0;
  for (size_t i = 0; i < ref.logits.size(); ++i) {
    worst = std::max(worst, std::fabs(tp.logits[i] - ref.logits[i]));
  }
  EXPECT_LE(worst, kTolF32) << "largest logit difference TP=2 vs TP=1";
}

// 3 heads over 2 ranks: padded with zero heads (rank 1 holds one KV slot of zeros), the output
// still the whole model's.
TEST(TensorParallel, HeadsThatDoNotDivideArePadded) {
  TestModelOptions o = opts(Family::kQwen3, "F32");
  o.n_head = 3;
  o.n_kv_head = 1;
  compare_tp(o, kTolF32);
}

// A split no cut makes whole blocks (4 heads of 64 values, a Q4_K output projection: 128
// columns per rank cut its 256-value blocks) is refused on every rank, naming what works.
TEST(TensorParallel, ImpossiblePlanRefusedOnEveryRank) {
  TestModelOptions o = opts(Family::kQwen3, "Q4_K");
  o.n_embd = 256;
  o.n_head = 4;
  o.n_kv_head = 4;
  o.head_dim = 64;
  o.n_ff = 512;
  Result<testing::Engine> e = testing::make_engine(o);
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  Result<ShardPlan> p = make_shard_plan(*e->model, g_comm->size(), g_comm->rank());
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().to_string().find("4 attention heads of 64 values"), std::string::npos)
      << p.status().to_string();
  EXPECT_NE(p.status().to_string().find("Rank counts that split: 1"), std::string::npos)
      << p.status().to_string();
}

}  // namespace
}  // namespace arc

int main(int argc, char** argv) {
  return arc::tptest::run_all_ranks(argc, argv, &arc::g_comm);
}
