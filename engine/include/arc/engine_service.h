// The engine behind the HTTP server on one rank: model, tokenizer, chat template, paged KV with
// prefix reuse and the continuous-batching scheduler, loaded and switched at runtime.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "arc/kernels/dtype.h"
#include "arc/moe_split.h"
#include "arc/service.h"

namespace arc {

class Communicator;

struct EngineOptions {
  int threads = 0;                 // CPU threads (0: all)
  std::string backend = "cpu";     // compute backend: cpu or cuda (resolved: never "auto")
  std::string backend_reason;      // why this backend (--backend auto's choice), for the status
  int device = 0;                  // CUDA device index
  bool mmap_weights = false;       // CPU: weights in place from the file (BackendOptions)
  int64_t ctx_size = 4096;         // longest sequence, prompt + output
  int64_t max_batch_tokens = 512;  // tokens per forward step
  int max_parallel = 64;           // sequences decoding at once
  int64_t kv_block_size = 16;
  DType kv_type = DType::F16;
  double reserve_gib = 2.0;             // memory kept free for the OS and other programs
  std::vector<std::string> model_dirs;  // searched by /engine/local-models
  std::string version;                  // reported in /engine/status
  std::string catalog_path;             // model catalog for POST /engine/fit (empty: none)
  // Tensor parallelism (serve --tp N under mpirun): rank 0's communicator, or null for one
  // rank. The other ranks run tp_serve_worker (arc/tp_serve.h); every model loaded here is
  // sharded over all of them.
  Communicator* tp_comm = nullptr;
  // After a rank fault (a collective past its deadline) the engine answers 503 with the reason
  // for this long, then the whole job is aborted so that no process stays blocked.
  double tp_abort_grace_s = 30.0;
  // How long rank 0 waits for every rank to load its shard (then the same fault).
  double tp_load_timeout_s = 1800.0;
  // How every model's routed experts split over the ranks (--moe-split, arc/moe_split.h).
  MoeSplitMode moe_split = MoeSplitMode::kAuto;
  // Speculative decoding (serve --spec, --spec-k; sched/drafter.h): none, ngram, draft:PATH, mtp.
  std::string spec = "none";
  int spec_k = 0;  // most drafted tokens per step; 0: adaptive up to 4
};

class EngineService final : public InferenceService {
 public:
  explicit EngineService(EngineOptions options);
  ~EngineService() override;

  // Loads synchronously (the `serve --model` start path); load() runs this on a thread.
  Status load_now(const nlohmann::json& options);

  EngineState state() const override;
  std::optional<ModelInfo> model() const override;
  Result<std::shared_ptr<PreparedRequest>> prepare_chat(const ChatRequest& request) override;
  Result<std::shared_ptr<PreparedRequest>> prepare_completion(
      const CompletionRequest& request) override;
  Status run(const std::shared_ptr<PreparedRequest>& request, const EventSink& sink) override;
  Result<int64_t> count_chat_tokens(const ChatRequest& request) override;
  nlohmann::json status() const override;
  Status load(const nlohmann::json& options) override;
  Status unload() override;
  Status cancel_load() override;
  nlohmann::json local_models() const override;
  Result<nlohmann::json> fit(const nlohmann::json& request) const override;
  std::string metrics_text() const override;
  void set_event_sink(EngineEventSink sink) override;
  // engine_cluster.cpp
  Result<nlohmann::json> cluster() override;
  Result<nlohmann::json> link_test(const nlohmann::json& request) override;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Free memory the OS reports (MemAvailable), in bytes; 0 when unknown.
uint64_t available_memory_bytes();
uint64_t total_memory_bytes();

}  // namespace arc
