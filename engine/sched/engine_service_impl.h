// Internals of EngineService shared by its source files.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "arc/backend.h"
#include "arc/chat_template.h"
#include "arc/engine_service.h"
#include "arc/forward.h"
#include "arc/kv_cache.h"
#include "arc/log.h"
#include "arc/metrics.h"
#include "arc/model.h"
#include "arc/output_parser.h"
#include "arc/tokenizer.h"
#include "arc/tp_serve.h"
#include "arc/tp_session.h"
#include "arc/vision_encoder.h"
#include "grammar/token_mask.h"
#include "sched/image_inputs.h"
#include "sched/scheduler.h"

namespace arc {

// What one load asks for: the projector, and the settings that size the model's memory. Each
// defaults to the engine's own option (--ctx-size, --kv-type, --parallel, --reserve-gib); the
// desktop app sends them per model.
struct LoadSettings {
  int64_t ctx_size = 0;
  std::string mmproj;  // empty: pair automatically; "none": no projector
  DType kv_type = DType::F16;
  int max_parallel = 1;
  double reserve_gib = 0;
};

// Everything that belongs to one loaded model. Destroyed when the last request using it ends;
// the scheduler goes first (declared last), failing what it still holds.
struct LoadedModel {
  ModelInfo info;
  uint64_t weight_bytes = 0;
  uint64_t kv_bytes = 0;         // both pools
  uint64_t kv_window_bytes = 0;  // of which the windowed pool of sliding-window layers
  int64_t kv_tokens = 0;
  LoadSettings settings;  // as loaded: ctx_size is the longest sequence (a failed switch brings
                          // the model back with them)
  std::unique_ptr<Backend> backend;
  std::unique_ptr<Model> model;
  std::unique_ptr<KvCache> kv;
  // Tensor parallel on a GPU: NCCL on the backend's stream (freed before the backend), else null.
  std::unique_ptr<Communicator> tensor_comm;
  std::unique_ptr<ForwardExecutor> exec;
  std::optional<Tokenizer> tokenizer;
  std::optional<ChatFormatter> formatter;
  OutputSyntax syntax = OutputSyntax::kPlain;
  std::vector<int32_t> stop_tokens;
  // Speculative decoding as running (none when what was asked cannot run here: spec_note says
  // why).
  SpecOptions spec;
  std::string spec_note;
  int n_ranks = 1;
  // Tensor parallel: how the model splits (ShardPlan::describe; the routed experts' line says
  // block split or whole experts, and why), for /engine/status.
  std::vector<std::string> tp_split;
  // Tensor parallel: sends each step (and the unload) to the other ranks; null on one rank.
  std::unique_ptr<TpDriver> tp_driver;
  std::mutex tp_send_mu;  // held while a step or a cluster message goes to the other ranks
  // Image input: the vision projector (mmproj) paired with the model, if any.
  std::unique_ptr<vision::VisionEncoder> vision;
  std::string mmproj_path;
  ImageEmbeddingCache image_cache;
  int32_t image_pad_id = -1;  // <|image_pad|>
  // Structured output (sched/output_constraint.h): the vocabulary as grammars see it (built on
  // the first constrained request) and the compiled constraints, by constraint.
  std::mutex grammar_mu;
  std::shared_ptr<const grammar::TokenVocab> grammar_vocab;
  std::map<std::string, std::shared_ptr<grammar::TokenMasker>> maskers;

  mutable std::mutex mu;  // guards scheduler (reset on unload)
  std::unique_ptr<Scheduler> scheduler;

  std::shared_ptr<RequestHandle> submit(SequenceRequest r) {
    std::lock_guard<std::mutex> lock(mu);
    if (!scheduler) return nullptr;
    return scheduler->submit(std::move(r));
  }
  SchedulerStats stats() const {
    std::lock_guard<std::mutex> lock(mu);
    return scheduler ? scheduler->stats() : SchedulerStats{};
  }
  void shutdown() {
    std::unique_ptr<Scheduler> s;
    {
      std::lock_guard<std::mutex> lock(mu);
      s = std::move(scheduler);
    }
    s.reset();  // fails queued and running requests, joins the loop
    if (tp_driver) {
      // The workers leave their step loop and drop the model (fails at once after a fault).
      if (Status st = tp_driver->stop(); !st.ok()) logger("engine")->warn("{}", st.message());
    }
  }
};

struct EngineService::Impl {
  EngineOptions opt;
  mutable std::mutex mu;
  std::condition_variable cv;
  EngineState state = EngineState::kIdle;
  std::string error;
  std::shared_ptr<LoadedModel> loaded;
  EngineEventSink event_sink;
  bool stopping = false;
  std::thread load_thread;
  std::atomic<bool> cancel_load{false};  // set by cancel_load(), read by the loading thread
  std::thread stats_thread;
  MetricsRegistry metrics;
  // Tensor parallelism (opt.tp_comm with more than one rank), else null.
  std::unique_ptr<TpServeGroup> tp;
  // One model switch (unload, load) at a time: the other ranks follow rank 0's control
  // messages in order, so two threads must never send them at once.
  std::mutex switch_mu;
  std::string tp_fault;  // guarded by mu: why the ranks stopped answering (then state kError)
  // engine_cluster.cpp: the last gathered probes (answered while a load holds the ranks).
  std::mutex cluster_mu;
  nlohmann::json last_cluster;

  // The fault that ended multi-rank serving, or empty.
  std::string fault() const {
    std::lock_guard<std::mutex> lock(mu);
    return tp_fault;
  }

  void emit(const std::string& type, nlohmann::json data);
  std::shared_ptr<LoadedModel> current() const;
  void refresh_gauges();
  void stats_loop();
};

// model_loader.cpp
// The settings' engine defaults (what a load that names none of them gets).
LoadSettings default_load_settings(const EngineOptions& opt);
// Stops with kCancelled when m.cancel_load is set (checked while weights are read).
Result<std::shared_ptr<LoadedModel>> load_model(EngineService::Impl& m, const std::string& path,
                                                const LoadSettings& s);
// Returns true when a model was loaded.
bool unload_model(EngineService::Impl& m);
// Before anything is unloaded: the file is a GGUF of an architecture this engine runs, and it
// fits in the memory available once `current` (the loaded model, or null) is unloaded. Gives the
// refusal with the numbers.
Status check_loadable(EngineService::Impl& m, const std::string& path, const LoadSettings& s,
                      const LoadedModel* current);

// model_paths.cpp
// `requested` (absolute, or relative to a model folder) as the canonical path of a regular file
// inside one of `model_dirs` (no "..", symlinks resolved). The same not-found answer for files
// outside the folders as for missing ones.
Result<std::string> resolve_model_path(const std::vector<std::string>& model_dirs,
                                       const std::string& requested);
// A client-supplied path shortened for error messages.
std::string path_for_message(std::string_view path);

// engine_cluster.cpp: every rank's probe (GET /engine/cluster), kept as last_cluster. The caller
// holds switch_mu (or no other thread sends control messages yet).
Result<nlohmann::json> gather_cluster_locked(EngineService::Impl& m);

}  // namespace arc
