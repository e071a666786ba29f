// Internals of EngineService shared by its source files.
#pragma once

#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include "arc/backend.h"
#include "arc/chat_template.h"
#include "arc/engine_service.h"
#include "arc/forward.h"
#include "arc/kv_cache.h"
#include "arc/metrics.h"
#include "arc/model.h"
#include "arc/output_parser.h"
#include "arc/tokenizer.h"
#include "arc/vision_encoder.h"
#include "sched/image_inputs.h"
#include "sched/scheduler.h"

namespace arc {

// Everything that belongs to one loaded model. Destroyed when the last request using it ends;
// the scheduler goes first (declared last), failing what it still holds.
struct LoadedModel {
  ModelInfo info;
  uint64_t weight_bytes = 0;
  uint64_t kv_bytes = 0;
  int64_t kv_tokens = 0;
  int64_t ctx_size = 0;
  std::unique_ptr<Backend> backend;
  std::unique_ptr<Model> model;
  std::unique_ptr<KvCache> kv;
  std::unique_ptr<ForwardExecutor> exec;
  std::optional<Tokenizer> tokenizer;
  std::optional<ChatFormatter> formatter;
  OutputSyntax syntax = OutputSyntax::kPlain;
  std::vector<int32_t> stop_tokens;
  // Image input: the vision projector (mmproj) paired with the model, if any.
  std::unique_ptr<vision::VisionEncoder> vision;
  std::string mmproj_path;
  ImageEmbeddingCache image_cache;
  int32_t image_pad_id = -1;  // <|image_pad|>

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
  std::thread stats_thread;
  MetricsRegistry metrics;

  void emit(const std::string& type, nlohmann::json data);
  std::shared_ptr<LoadedModel> current() const;
  void refresh_gauges();
  void stats_loop();
};

// model_loader.cpp
// mmproj: the vision projector to load with the model; empty: a mmproj-*.gguf beside a vision
// model is paired automatically; "none": no projector.
Result<std::shared_ptr<LoadedModel>> load_model(EngineService::Impl& m, const std::string& path,
                                                int64_t ctx_size, const std::string& mmproj = "");
// Returns true when a model was loaded.
bool unload_model(EngineService::Impl& m);

}  // namespace arc
