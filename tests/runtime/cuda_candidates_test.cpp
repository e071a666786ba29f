// Device-side sampling through the CUDA backend: a sampled step (ForwardExecutor::submit with
// StepSampling, candidates selected by CudaBackend::top_candidates) against the same step with
// whole rows and kernels::top_candidates_ref on the host, for a prefill with several logit rows and
// for batched decode steps replayed from CUDA graphs; and the scheduler's tokens (greedy with
// logprobs, seeded top-p with a penalty) against a whole-row sampling loop on the same backend.
// Label gpu: skips without a CUDA device.
#include <gtest/gtest.h>

#include "arc/backend_factory.h"
#include "model/forward_candidates_check.h"

namespace arc::testing {
namespace {

Result<Engine> cuda_engine(const TestModelOptions& o) {
  Engine e;
  ARC_ASSIGN_OR_RETURN(e.backend, make_cuda_backend(0, /*graphs=*/true));
  ARC_ASSIGN_OR_RETURN(e.bytes, build_test_model(o));
  ARC_ASSIGN_OR_RETURN(gguf::File f, gguf::File::parse(e.bytes, "test-model"));
  ARC_ASSIGN_OR_RETURN(e.model, Model::from_file(std::move(f), *e.backend));
  const ModelConfig& c = e.model->config();
  KvCacheOptions kvo{c.n_layer, c.n_kv_head, c.head_dim, 16, 64, DType::F16};
  ARC_ASSIGN_OR_RETURN(e.kv, KvCache::create(*e.backend, kvo));
  e.exec = std::make_unique<ForwardExecutor>(*e.model, *e.backend, *e.kv);
  return e;
}

TEST(CudaCandidates, SampledStepsMatchWholeRows) {
  if (!make_cuda_backend(0).ok()) {
    GTEST_SKIP() << "no CUDA backend: " << make_cuda_backend(0).status().message();
  }
  auto e = cuda_engine(tiny_model({"qwen3moe F32", Family::kQwen3Moe, 8, "F32"}));
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  std::vector<int32_t> ids;
  for (int s = 0; s < 5; ++s) {
    ids.push_back(e->kv->add_sequence());
    ASSERT_TRUE(e->kv->reserve(ids.back(), 40).ok());
  }
  // Prefill: 5 sequences of 6 tokens, three logit rows each.
  std::vector<int32_t> tok, pos, seq, rows;
  for (int s = 0; s < 5; ++s) {
    for (int i = 0; i < 6; ++i) {
      if (i % 2 == 1) rows.push_back(static_cast<int32_t>(tok.size()));
      tok.push_back((s * 7 + i * 3) % 50 + 1);
      pos.push_back(i);
      seq.push_back(ids[s]);
    }
  }
  expect_sampled_step_matches(*e, {tok, pos, seq, rows});
  // Decode steps (graphs: 5 sequences pad to a bucket of 8).
  for (int step = 0; step < 3; ++step) {
    std::vector<int32_t> dtok, dpos;
    for (int s = 0; s < 5; ++s) {
      dtok.push_back((s + step * 11) % 50 + 2);
      dpos.push_back(6 + step);
    }
    expect_sampled_step_matches(*e, {dtok, dpos, ids, {}});
  }
}

TEST(CudaCandidates, SchedulerTokensEqualAWholeRowLoop) {
  if (!make_cuda_backend(0).ok()) {
    GTEST_SKIP() << "no CUDA backend: " << make_cuda_backend(0).status().message();
  }
  expect_scheduler_matches_whole_rows([] {
    return cuda_engine(tiny_model({"qwen3moe F32", Family::kQwen3Moe, 8, "F32"}));
  });
}

}  // namespace
}  // namespace arc::testing
