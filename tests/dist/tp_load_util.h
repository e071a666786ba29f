// Shared by the tensor-parallel load tests (tp_shard_load_test on the CPU, tp_cuda_test on GPUs):
// a tiny model written to a file, greedy decoding through a TpDriver, and the whole model on one
// rank's CPU backend as the oracle.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "arc/communicator.h"
#include "arc/forward.h"
#include "arc/shard_load.h"
#include "arc/tp_session.h"
#include "model/test_util.h"

namespace arc::tptest {

struct Decode {
  std::vector<int32_t> tokens;  // greedy tokens
  std::vector<float> logits;    // every step's last-row logits [n_new, n_vocab]
  Status status;
};

// Prefill of a fixed prompt, then greedy steps through `step`.
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
    const int32_t next =
        static_cast<int32_t>(std::max_element(l->data(), l->data() + n_vocab) - l->data());
    d.tokens.push_back(next);
    d.logits.insert(d.logits.end(), l->begin(), l->begin() + n_vocab);
    const int32_t p = pos.back() + 1;
    toks = {next};
    pos = {p};
    seqs = {*seq};
  }
  return d;
}

// The oracle: the whole model on the CPU backend of this rank, single-rank forward. MLA in the
// absorbed form, as TP runs it (the plain form rounds a quantized k_b differently, enough to
// flip a near-tied expert choice of a random-weight model).
inline Decode whole_model_decode(const TestModelOptions& o, int64_t* n_vocab) {
  Result<testing::Engine> e = testing::make_engine(o);
  if (!e.ok()) return {{}, {}, e.status()};
  e->exec->set_mla_plain(false);
  *n_vocab = e->model->config().n_vocab;
  return greedy(
      *n_vocab, [&] { return Result<int32_t>(e->kv->add_sequence()); },
      [&](int32_t s, int64_t n) { return e->kv->reserve(s, n); },
      [&](const ForwardBatch& b) { return e->exec->run(b); });
}

// The test model in a file of its own per rank (removed by the destructor).
struct ModelFile {
  std::string path;
  explicit ModelFile(const TestModelOptions& o, const std::string& tag) {
    path = (std::filesystem::temp_directory_path() /
            ("arc_tp_" + tag + "_" + std::to_string(getpid()) + ".gguf"))
               .string();
    status = write_test_model(o, path);
  }
  ~ModelFile() { std::remove(path.c_str()); }
  Status status;
};

// Runs the sharded model on every rank (`model` and `kv` on `backend`, the forward's
// collectives through `tensor`, the steps through `control`), and on rank 0 compares greedy
// tokens and logits with `ref`.
inline void decode_and_compare(Communicator& control, Communicator& tensor, const Model& model,
                               Backend& backend, const ShardPlan& plan, const Decode& ref,
                               int64_t n_vocab, float tol, const std::string& what) {
  const ModelConfig& lc = model.config();
  const KvCacheOptions kvo = kv_cache_options(lc, 16, 64, DType::F32);  // MLA: the latent pool
  Result<std::unique_ptr<KvCache>> kv = KvCache::create(backend, kvo);
  ASSERT_TRUE(kv.ok()) << kv.status().to_string();
  ForwardExecutor exec(model, backend, **kv);
  exec.set_tensor_parallel(&tensor, plan.vocab_begin);
  TpDriver drv(control, exec, **kv);
  if (control.rank() != 0) {
    Status s = drv.worker_loop();
    EXPECT_TRUE(s.ok()) << s.to_string();
    return;
  }
  Decode tp = greedy(
      n_vocab, [&] { return drv.add_sequence(); },
      [&](int32_t s, int64_t n) { return drv.reserve(s, n); },
      [&](const ForwardBatch& b) { return drv.step(b); });
  Status stopped = drv.stop();
  ASSERT_TRUE(tp.status.ok()) << what << ": " << tp.status.to_string();
  ASSERT_TRUE(stopped.ok()) << stopped.to_string();
  EXPECT_EQ(tp.tokens, ref.tokens) << what << ": greedy tokens differ";
  ASSERT_EQ(tp.logits.size(), ref.logits.size());
  float worst = 0;
  for (size_t i = 0; i < ref.logits.size(); ++i) {
    worst = std::max(worst, std::fabs(tp.logits[i] - ref.logits[i]));
  }
  EXPECT_LE(worst, tol) << what << ": largest logit difference against the whole model";
  std::printf("  %s: max |logit diff| %.2e\n", what.c_str(), worst);
}

// Every rank's gtest verdict counts (run by main after RUN_ALL_TESTS).
inline int all_ranks_verdict(Communicator& comm, int rc) {
  float bad = rc != 0 ? 1.0f : 0.0f;
  (void)comm.all_reduce_sum(&bad, 1);
  return bad > 0 ? 1 : 0;
}

// main() of the tests run under mpirun: one MPI communicator in *comm_slot while the tests run,
// one report (rank 0's), and the job fails when any rank's tests fail.
inline int run_all_ranks(int argc, char** argv, MpiCommunicator** comm_slot) {
  auto session = MpiSession::init(&argc, &argv);
  if (!session.ok()) return 2;
  auto comm = MpiCommunicator::create(**session, std::chrono::seconds(60));
  if (!comm.ok()) return 2;
  *comm_slot = comm->get();
  ::testing::InitGoogleTest(&argc, argv);
  if ((*comm)->rank() != 0) {
    auto& l = ::testing::UnitTest::GetInstance()->listeners();
    delete l.Release(l.default_result_printer());
  }
  const int rc = all_ranks_verdict(**comm, RUN_ALL_TESTS());
  *comm_slot = nullptr;
  return rc;
}

}  // namespace arc::tptest
