// Helpers for the model tests: tiny models in memory, an engine instance, prefill/decode loops.
#pragma once

#include <memory>
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
  KvCacheOptions kvo{c.n_layer, c.n_kv_head, c.head_dim, block_size, 64, kv_type};
  ARC_ASSIGN_OR_RETURN(e.kv, KvCache::create(*e.backend, kvo));
  e.exec = std::make_unique<ForwardExecutor>(*e.model, *e.backend, *e.kv);
  return e;
}

}  // namespace arc::testing
