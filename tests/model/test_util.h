// Helpers for the model tests: tiny models in memory, an engine instance, prefill/decode loops.
#pragma once

#include <algorithm>

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "arc/backend.h"
#include "arc/forward.h"
#include "arc/gguf.h"
#include "arc/kv_cache.h"
#include "arc/model.h"
#include "model/test_model.h"

namespace arc::testing {

struct Engine {
  std::vector<uint8_t> bytes;  // the GGUF image (kept alive for the model)
  std::unique_ptr<Backend> backend;
  std::unique_ptr<Model> model;
  std::unique_ptr<KvCache> kv;
  std::unique_ptr<ForwardExecutor> exec;
};

// Builds the test model in memory and an engine over it.
inline Result<Engine> make_engine(const TestModelOptions& o, int threads = 1,
                                  DType kv_type = DType::F32, int64_t block_size = 16) {
  Engine e;
  ARC_ASSIGN_OR_RETURN(e.bytes, build_test_model(o));
  ARC_ASSIGN_OR_RETURN(gguf::File f, gguf::File::parse(e.bytes, "test-model"));
  e.backend = make_cpu_backend(threads);
  ARC_ASSIGN_OR_RETURN(e.model, Model::from_file(std::move(f), *e.backend));
  const ModelConfig& c = e.model->config();
  const KvCacheOptions kvo = kv_cache_options(c, block_size, 64, kv_type);
  ARC_ASSIGN_OR_RETURN(e.kv, KvCache::create(*e.backend, kvo));
  e.exec = std::make_unique<ForwardExecutor>(*e.model, *e.backend, *e.kv);
  return e;
}

// One tiny model of a family and weight format, as the model and backend tests use them.
struct ModelCase {
  const char* name;
  Family family;
  int64_t n_expert;  // 0: dense
  const char* type;  // a weight type or mix; "MXFP4": F32 with MXFP4 experts (gpt-oss's format)
};

inline TestModelOptions tiny_model(const ModelCase& c) {
  TestModelOptions o;
  o.family = c.family;
  o.n_expert = c.n_expert;
  o.type = c.type;
  if (o.type == "MXFP4") {
    o.type = "F32";
    o.experts_type = "MXFP4";
  }
  o.seed = 7;
  const bool kquant = std::string(c.type).find("_K") != std::string::npos;
  // K-quants need rows of 256: wider models for them, still tiny.
  o.n_embd = kquant ? 256 : 64;
  o.n_ff = kquant ? 256 : 96;
  o.n_ff_exp = kquant ? 256 : 32;
  o.n_ff_shexp = kquant ? 256 : 64;
  o.n_layer = kquant ? 8 : 2;  // 8 layers so Q4_K_M mixes Q4_K and Q6_K
  o.n_expert_used = 2;
  // Quantized kernels may quantize activations (~0.5% error), which can flip a near-tied top-k
  // choice: a discrete jump no tolerance covers. Quantized MoE cases therefore use every expert
  // (routing weights stay continuous); the F32 cases, whose error is ~1e-6, test the selection.
  const bool exact = std::string(c.type) == "F32" || std::string(c.type) == "F16";
  if (!exact && c.n_expert > 0) o.n_expert = o.n_expert_used = 4;
  o.tied_embeddings = c.family != Family::kLlama;  // cover both output heads
  // gpt-oss: a window shorter than the test prompts, so the sliding layers drop keys.
  if (c.family == Family::kGptOss) o.sliding_window = 4;
  // qwen3next: three Gated DeltaNet layers and a full-attention one at least.
  if (c.family == Family::kQwen3Next) o.n_layer = std::max<int64_t>(o.n_layer, 4);
  return o;
}

// Logits of a 9-token prefill then 8 greedy decode steps on `threads` threads (F16 cache, 4-token
// chunks): the thread-count tests compare two runs' bits.
inline std::vector<float> prefill_and_greedy_logits(const TestModelOptions& o, int threads) {
  auto e = make_engine(o, threads, DType::F16, 4);
  EXPECT_TRUE(e.ok()) << e.status().to_string();
  if (!e.ok()) return {};
  const std::vector<int32_t> prompt = {5, 17, 99, 3, 250, 40, 41, 42, 7};
  const int32_t seq = e->kv->add_sequence();
  EXPECT_TRUE(e->kv->reserve(seq, 32).ok());
  std::vector<int32_t> pos(prompt.size()), seqs(prompt.size(), seq), rows(prompt.size());
  for (size_t i = 0; i < pos.size(); ++i) pos[i] = rows[i] = static_cast<int32_t>(i);
  auto got = e->exec->run({prompt, pos, seqs, rows});
  EXPECT_TRUE(got.ok()) << got.status().to_string();
  if (!got.ok()) return {};
  std::vector<float> all = *got;
  const int64_t v = e->model->config().n_vocab;
  int32_t p = static_cast<int32_t>(prompt.size());
  int32_t tok = static_cast<int32_t>(std::max_element(all.end() - v, all.end()) - (all.end() - v));
  for (int step = 0; step < 8; ++step, ++p) {
    auto d = e->exec->run({std::span(&tok, 1), std::span(&p, 1), std::span(&seq, 1), {}});
    EXPECT_TRUE(d.ok()) << d.status().to_string();
    if (!d.ok()) return {};
    all.insert(all.end(), d->begin(), d->end());
    tok = static_cast<int32_t>(std::max_element(d->begin(), d->end()) - d->begin());
  }
  return all;
}

}  // namespace arc::testing
