// Expert parallelism (--moe-split ep, arc/moe_split.h) under mpirun -np 2, 3 and 4 (the same
// binary at each count): every rank holds whole routed experts (8 experts: 4 + 4, 3 + 3 + 2,
// 2 x 4), routes every token with the whole router and computes only the experts it holds; the
// all-reduce after the MoE block sums the ranks' partial outputs. Attention, the shared expert
// and dense layers keep their block split. The sharded model on N ranks against the whole model
// on one (the oracle: the unchanged single-rank forward): greedy tokens equal, logits within the
// tolerances of tp_uneven_test; mapped in place, and read from the file for the K-quant cases.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "arc/backend_factory.h"
#include "arc/communicator.h"
#include "arc/shard_load.h"
#include "arc/shard_plan.h"
#include "arc/tensor_comm.h"
#include "arc/tp_session.h"
#include "dist/tp_load_util.h"
#include "model/test_util.h"

namespace arc {
namespace {

MpiCommunicator* g_comm = nullptr;  // set by main for the test's lifetime

using tptest::Decode;

// As tp_uneven_test: F32 differs only in summation order; quantized files in rounding.
constexpr float kTolF32 = 1e-3f;
constexpr float kTolQuant = 5e-3f;

// 8 experts, 2 per token. Expert width 768 is 3 Q4_K blocks: it does not split into equal
// block shares over 2 or 4 ranks, and under EP it is never cut.
TestModelOptions shape(Family f, const std::string& type) {
  TestModelOptions o;
  o.family = f;
  o.type = type;
  o.n_embd = 256;
  o.n_head = 12;  // q_dim 384: attn_output Q8_0 in a Q4_K_M file, as tp_uneven_test's
  o.n_kv_head = 2;
  o.head_dim = 32;
  o.n_expert = 8;
  o.n_ff_exp = 768;
  o.n_ff_shexp = 768;
  o.n_ff = 1280;
  return o;
}

TestModelOptions small(Family f) {
  TestModelOptions o = shape(f, "F32");
  o.n_embd = 64;
  o.n_ff_exp = 100;
  o.n_ff_shexp = 100;
  o.n_ff = 160;
  return o;
}

// `from_file`: also the shard read from a file (the K-quant cases: the F32 ones add little and
// keep the job short).
void compare(const TestModelOptions& o, float tol, bool from_file) {
  Communicator& comm = *g_comm;
  Decode ref;
  int64_t n_vocab = 0;
  if (comm.rank() == 0) {
    ref = tptest::whole_model_decode(o, &n_vocab);
    ASSERT_TRUE(ref.status.ok()) << ref.status.to_string();
  }
  Result<testing::Engine> e = testing::make_engine(o);
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  const uint64_t whole = e->model->weight_bytes();
  Result<ShardPlan> plan = make_shard_plan(*e->model, comm.size(), comm.rank(), MoeSplitMode::kEp);
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  ASSERT_TRUE(plan->ep());
  EXPECT_EQ(plan->local.ep_n_expert, plan->moe.experts.count(comm.rank()));
  Result<uint64_t> bytes = shard_model(*e->model, *e->backend, *plan);
  ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
  EXPECT_LT(*bytes, whole);
  std::string what = std::string(family_name(o.family)) + " " + o.type +
                     " EP=" + std::to_string(comm.size()) + " [";
  for (const std::string& line : plan->describe()) what += line + "; ";
  what += "]";
  tptest::decode_and_compare(comm, comm, *e->model, *e->backend, *plan, ref, n_vocab, tol, what);
  if (!from_file) return;
  // Read from the file by a CPU backend that copies weights (serve, run and bench): only this
  // rank's experts are read.
  tptest::ModelFile file(o, "ep_" + std::to_string(comm.rank()));
  ASSERT_TRUE(file.status.ok()) << file.status.to_string();
  BackendOptions bo;
  bo.threads = 1;
  auto be = make_backend(bo);
  ASSERT_TRUE(be.ok()) << be.status().to_string();
  auto f = gguf::File::open(file.path);
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  auto fplan = plan_for_file(*f, comm.size(), comm.rank(), MoeSplitMode::kEp);
  ASSERT_TRUE(fplan.ok()) << fplan.status().to_string();
  const uint64_t planned = shard_weight_bytes(*f, *fplan);
  auto model = load_model_shard(std::move(*f), **be, *fplan);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  EXPECT_EQ((*model)->weight_bytes(), planned);
  tptest::decode_and_compare(comm, comm, **model, **be, *fplan, ref, n_vocab, tol,
                             what + " (loaded from the file)");
}

TEST(ExpertParallel, Qwen3MoeF32) {
  compare(small(Family::kQwen3Moe), kTolF32, false);
}
// A K-quant file whose expert width (3 Q4_K blocks) does not split evenly on blocks.
TEST(ExpertParallel, Qwen3MoeQ4KM) {
  compare(shape(Family::kQwen3Moe, "Q4_K_M"), kTolQuant, true);
}
// A leading dense layer and a shared expert (block split) beside the whole experts.
TEST(ExpertParallel, Glm4MoeQ4KM) {
  compare(shape(Family::kGlm4Moe, "Q4_K_M"), kTolQuant, true);
}
// Per-expert biases: each rank holds and adds its experts' gate, up and down biases.
TEST(ExpertParallel, GptOssF32) {
  TestModelOptions o = small(Family::kGptOss);
  o.sliding_window = 4;
  compare(o, kTolF32, false);
}
// Group-limited routing (4 groups, 2 compete) with the whole router on every rank.
TEST(ExpertParallel, DeepSeek2F32) {
  TestModelOptions o = small(Family::kDeepSeek2);
  o.n_head = 4;
  o.head_dim = 24;
  o.v_head_dim = 16;
  compare(o, kTolF32, false);
}

// The whole model on one CUDA backend (the same kernels: only the split differs).
Decode cuda_whole_decode(const std::string& path, int64_t* n_vocab) {
  auto be = make_cuda_backend(0, /*graphs=*/true);
  if (!be.ok()) return {{}, {}, be.status()};
  auto f = gguf::File::open(path);
  if (!f.ok()) return {{}, {}, f.status()};
  auto m = Model::from_file(std::move(*f), **be);
  if (!m.ok()) return {{}, {}, m.status()};
  *n_vocab = (*m)->config().n_vocab;
  auto kv = KvCache::create(**be, kv_cache_options((*m)->config(), 16, 64, DType::F32));
  if (!kv.ok()) return {{}, {}, kv.status()};
  ForwardExecutor exec(**m, **be, **kv);
  exec.set_mla_plain(false);  // TP runs MLA in the absorbed form
  return tptest::greedy(
      *n_vocab, [&] { return Result<int32_t>((*kv)->add_sequence()); },
      [&](int32_t s, int64_t n) { return (*kv)->reserve(s, n); },
      [&](const ForwardBatch& b) { return exec.run(b); });
}

// The CUDA backend's path: the rank's experts streamed into device buffers, moe_ffn skipping
// the other ranks' experts, the all-reduce through NCCL. 2 ranks under the emulator.
TEST(ExpertParallel, CudaGlm4MoeQ4KM) {
  Communicator& comm = *g_comm;
  if (!cuda_backend_built()) GTEST_SKIP() << "this build has no CUDA backend";
  if (cuda_backend_emulated() && comm.size() != 2) {
    GTEST_SKIP() << "emulated CUDA: run at 2 ranks only (this job has " << comm.size() << ")";
  }
  const int n_dev = cuda_backend_emulated() ? comm.size() : cuda_device_count();
  if (n_dev < comm.size()) GTEST_SKIP() << n_dev << " CUDA device(s) for " << comm.size();
  const TestModelOptions o = shape(Family::kGlm4Moe, "Q4_K_M");
  tptest::ModelFile file(o, "ep_cuda");
  ASSERT_TRUE(file.status.ok()) << file.status.to_string();
  Decode ref;
  int64_t n_vocab = 0;
  if (comm.rank() == 0) {
    ref = cuda_whole_decode(file.path, &n_vocab);
    ASSERT_TRUE(ref.status.ok()) << ref.status.to_string();
  }
  auto be = make_cuda_backend(comm.rank() % std::max(cuda_device_count(), 1), /*graphs=*/true);
  ASSERT_TRUE(be.ok()) << be.status().to_string();
  auto f = gguf::File::open(file.path);
  ASSERT_TRUE(f.ok());
  auto plan = plan_for_file(*f, comm.size(), comm.rank(), MoeSplitMode::kEp);
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  ASSERT_TRUE(plan->ep());
  const uint64_t planned = shard_weight_bytes(*f, *plan);
  auto model = load_model_shard(std::move(*f), **be, *plan);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  EXPECT_EQ((*model)->weight_bytes(), planned);
  auto tensor = make_tensor_communicator(comm, **be);
  ASSERT_TRUE(tensor.ok()) << tensor.status().to_string();
  ASSERT_NE(*tensor, nullptr);
  tptest::decode_and_compare(comm, **tensor, **model, **be, *plan, ref, n_vocab, kTolQuant,
                             "glm4moe Q4_K_M CUDA EP=" + std::to_string(comm.size()));
}

}  // namespace
}  // namespace arc

int main(int argc, char** argv) {
  return arc::tptest::run_all_ranks(argc, argv, &arc::g_comm);
}
