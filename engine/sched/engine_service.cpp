// EngineService: load/unload with the memory guard, status, metrics and the event stream.
// Request preparation and the text pipeline live in request_pipeline.cpp.
#include "arc/engine_service.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "arc/catalog.h"
#include "arc/fit.h"
#include "arc/fit_gguf.h"
#include "arc/fit_json.h"
#include "arc/gguf_summary.h"
#include "arc/kv_window.h"
#include "arc/log.h"
#include "sched/engine_service_impl.h"
#include "sched/mmproj_pairing.h"

namespace arc {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

uint64_t meminfo_kib(const char* key) {
  std::ifstream in("/proc/meminfo");
  std::string line;
  const size_t n = std::strlen(key);
  while (std::getline(in, line)) {
    if (line.compare(0, n, key) == 0 && line.size() > n && line[n] == ':') {
      return std::stoull(line.substr(n + 1));
    }
  }
  return 0;
}

uint64_t process_rss_bytes() {
  std::ifstream in("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  in >> size >> resident;
  return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

std::string gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

}  // namespace

uint64_t available_memory_bytes() {
  return meminfo_kib("MemAvailable") * 1024;
}
uint64_t total_memory_bytes() {
  return meminfo_kib("MemTotal") * 1024;
}

EngineService::EngineService(EngineOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->opt = std::move(options);
  Impl& m = *impl_;
  m.metrics.add_counter("arclight_requests_total", "Requests finished, by finish reason");
  m.metrics.add_counter("arclight_prompt_tokens_total", "Prompt tokens of finished requests");
  m.metrics.add_counter("arclight_generation_tokens_total", "Tokens generated");
  m.metrics.add_counter("arclight_prefix_cache_queries_total",
                        "Prompt tokens looked up in the prefix cache");
  m.metrics.add_counter("arclight_prefix_cache_hits_total",
                        "Prompt tokens whose K/V came from the prefix cache");
  m.metrics.add_counter("arclight_spec_draft_tokens_total",
                        "Speculative decoding: drafted tokens verified by the model");
  m.metrics.add_counter("arclight_spec_accepted_tokens_total",
                        "Speculative decoding: drafted tokens the model accepted");
  m.metrics.add_counter("arclight_images_total", "Images in chat requests");
  m.metrics.add_counter("arclight_images_encoded_total",
                        "Images run through the vision encoder (the rest came from its cache)");
  m.metrics.add_histogram("arclight_time_to_first_token_seconds",
                          "Time from arrival to the first generated token",
                          latency_buckets_seconds());
  m.metrics.add_histogram("arclight_inter_token_latency_seconds",
                          "Time between consecutive streamed tokens", latency_buckets_seconds());
  m.metrics.add_histogram("arclight_e2e_request_latency_seconds",
                          "Time from arrival to the last token", latency_buckets_seconds());
  m.metrics.add_histogram("arclight_request_queue_time_seconds",
                          "Time from arrival to the first scheduled step",
                          latency_buckets_seconds());
  m.metrics.add_gauge("arclight_requests_running", "Sequences in the running batch");
  m.metrics.add_gauge("arclight_requests_waiting", "Requests waiting for admission");
  m.metrics.add_gauge("arclight_kv_blocks_capacity", "KV cache blocks in the pool");
  m.metrics.add_gauge("arclight_kv_blocks_used", "KV cache blocks held by sequences");
  m.metrics.add_gauge("arclight_kv_window_blocks_capacity",
                      "Blocks of the sliding-window layers' windowed KV pool (0: none)");
  m.metrics.add_gauge("arclight_kv_window_blocks_used",
                      "Windowed KV pool blocks held by sequences");
  m.metrics.add_gauge("arclight_kv_cache_usage_ratio", "Fraction of KV blocks held by sequences");
  m.metrics.add_gauge("arclight_state_slots_used",
                      "Hybrid models: recurrent state slots held by running sequences");
  m.metrics.add_gauge("arclight_state_snapshots",
                      "Hybrid models: recurrent-state snapshots of cached prefixes (state: filed, "
                      "pending, capacity)");
  m.metrics.add_gauge("arclight_spec_acceptance_ratio",
                      "Speculative decoding: accepted over drafted tokens since the model loaded");
  m.metrics.add_gauge("arclight_memory_used_bytes", "Resident memory of the engine, per rank");
  m.metrics.add_gauge("arclight_memory_available_bytes",
                      "Memory the OS reports available, per rank");
  if (m.opt.tp_comm != nullptr && m.opt.tp_comm->size() > 1) {
    m.tp = std::make_unique<TpServeGroup>(
        *m.opt.tp_comm,
        std::chrono::milliseconds(static_cast<int64_t>(m.opt.tp_load_timeout_s * 1000)));
    // A rank that stops answering: requests fail with the reason, new ones get 503, and the
    // job is aborted after the grace period (the communicator does that).
    m.opt.tp_comm->set_fault_handler(
        [this](const std::string& reason) {
          Impl& im = *impl_;
          {
            std::lock_guard<std::mutex> lock(im.mu);
            im.tp_fault = reason;
            im.state = EngineState::kError;
            im.error = reason + ". The engine stops; restart it (mpirun) once every rank is back";
          }
          im.emit("error", {{"message", reason}});
          im.emit("state", {{"state", "error"}, {"message", reason}});
        },
        std::chrono::milliseconds(static_cast<int64_t>(m.opt.tp_abort_grace_s * 1000)));
  }
  if (m.tp) {
    // Every rank's probe once at start, so GET /engine/cluster has an answer while the first
    // model loads (the other ranks are busy then).
    if (auto c = gather_cluster_locked(m); !c.ok())
      logger("engine")->warn("{}", c.status().message());
  }
  m.stats_thread = std::thread([this] { impl_->stats_loop(); });
}

EngineService::~EngineService() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stopping = true;
  }
  impl_->cv.notify_all();
  if (impl_->stats_thread.joinable()) impl_->stats_thread.join();
  if (impl_->load_thread.joinable()) impl_->load_thread.join();
  (void)unload();
  if (impl_->tp) {
    impl_->opt.tp_comm->set_fault_handler(nullptr, std::chrono::milliseconds(0));
    if (impl_->fault().empty()) {
      if (Status s = impl_->tp->shutdown(); !s.ok()) logger("engine")->warn("{}", s.message());
    }
  }
}

void EngineService::Impl::emit(const std::string& type, json data) {
  EngineEventSink sink;
  {
    std::lock_guard<std::mutex> lock(mu);
    sink = event_sink;
  }
  if (sink) sink({type, std::move(data)});
}

std::shared_ptr<LoadedModel> EngineService::Impl::current() const {
  std::lock_guard<std::mutex> lock(mu);
  return loaded;
}

EngineState EngineService::state() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->state;
}

std::optional<ModelInfo> EngineService::model() const {
  auto l = impl_->current();
  if (!l) return std::nullopt;
  return l->info;
}

void EngineService::set_event_sink(EngineEventSink sink) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->event_sink = std::move(sink);
}

namespace {

// The options of a load, checked: types and ranges. Settings not given keep the engine's own.
struct LoadRequest {
  std::string model;
  LoadSettings settings;
};

Result<LoadRequest> parse_load_options(const json& options, const EngineOptions& opt) {
  LoadRequest r;
  if (!options.is_object() || !options.contains("model") || !options["model"].is_string() ||
      options["model"].get<std::string>().empty()) {
    return invalid_argument("'model' must be the path of a GGUF file");
  }
  r.model = options["model"].get<std::string>();
  r.settings = default_load_settings(opt);
  auto given = [&](const char* key) { return options.contains(key) && !options[key].is_null(); };
  // An integer in [lo, hi] (JSON numbers that are not integers, or out of range, are refused).
  auto integer = [&](const char* key, int64_t lo, int64_t hi, int64_t& out) -> Status {
    const json& v = options[key];
    if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(hi)) ||
        v.get<int64_t>() < lo || v.get<int64_t>() > hi) {
      return invalid_argument("'" + std::string(key) + "' must be an integer from " +
                              std::to_string(lo) + " to " + std::to_string(hi));
    }
    out = v.get<int64_t>();
    return ok_status();
  };
  if (given("ctx_size")) ARC_RETURN_IF_ERROR(integer("ctx_size", 16, 1 << 24, r.settings.ctx_size));
  if (given("parallel")) {
    int64_t p = 0;
    ARC_RETURN_IF_ERROR(integer("parallel", 1, 1024, p));
    r.settings.max_parallel = static_cast<int>(p);
  }
  if (given("kv_type")) {
    const json& k = options["kv_type"];
    if (k == "f16") {
      r.settings.kv_type = DType::F16;
    } else if (k == "f32") {
      r.settings.kv_type = DType::F32;
    } else {
      return invalid_argument("'kv_type' must be \"f16\" or \"f32\"");
    }
  }
  if (given("reserve_gib")) {
    const json& g = options["reserve_gib"];
    if (!g.is_number() || g.get<double>() < 0 || g.get<double>() > 1024) {
      return invalid_argument("'reserve_gib' must be a number from 0 to 1024");
    }
    r.settings.reserve_gib = g.get<double>();
  }
  if (given("mmproj")) {
    if (!options["mmproj"].is_string()) return invalid_argument("'mmproj' must be a path");
    r.settings.mmproj = options["mmproj"].get<std::string>();
  }
  return r;
}

json settings_json(const LoadSettings& s) {
  return {{"ctx_size", s.ctx_size},
          {"kv_type", s.kv_type == DType::F32 ? "f32" : "f16"},
          {"parallel", s.max_parallel},
          {"reserve_gib", s.reserve_gib},
          {"mmproj", s.mmproj}};
}

}  // namespace

Status EngineService::load(const json& options) {
  // Everything that can be checked is checked here, before the loaded model is touched: a
  // request that cannot load gets its refusal now and the working model keeps serving.
  ARC_ASSIGN_OR_RETURN(LoadRequest r, parse_load_options(options, impl_->opt));
  ARC_ASSIGN_OR_RETURN(std::string path, resolve_model_path(impl_->opt.model_dirs, r.model));
  std::string& mmproj = r.settings.mmproj;
  if (!mmproj.empty() && mmproj != "none") {
    auto mm = resolve_model_path(impl_->opt.model_dirs, mmproj);
    if (!mm.ok()) return mm.status().with_context("'mmproj'");
    mmproj = *mm;
  }
  if (std::string f = impl_->fault(); !f.empty()) return unavailable(f);
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    if (impl_->state == EngineState::kLoading) {
      return failed_precondition("a model is already loading; wait for it to finish");
    }
  }
  {
    auto current = impl_->current();
    Status s = check_loadable(*impl_, path, r.settings, current.get());
    if (!s.ok()) return s.with_context("cannot load " + path_for_message(r.model));
  }
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    if (impl_->state == EngineState::kLoading) {
      return failed_precondition("a model is already loading; wait for it to finish");
    }
    impl_->state = EngineState::kLoading;
    impl_->cancel_load = false;  // here, not on the thread: a cancel right after this counts
  }
  json resolved = settings_json(r.settings);
  resolved["model"] = path;
  if (mmproj.empty()) resolved.erase("mmproj");
  if (impl_->load_thread.joinable()) impl_->load_thread.join();
  impl_->load_thread = std::thread([this, resolved] { (void)load_now(resolved); });
  return ok_status();
}

Status EngineService::load_now(const json& options) {
  Impl& m = *impl_;
  auto request = parse_load_options(options, m.opt);
  const std::string path = request.ok() ? request->model : std::string();
  std::lock_guard<std::mutex> switching(m.switch_mu);
  {
    std::lock_guard<std::mutex> lock(m.mu);
    m.state = EngineState::kLoading;
    m.error.clear();
  }
  // What to bring back if the new model fails to load after this one was unloaded.
  std::optional<LoadRequest> previous;
  if (auto cur = m.current()) {
    previous = LoadRequest{cur->info.path, cur->settings};
    previous->settings.mmproj = cur->mmproj_path.empty() ? std::string("none") : cur->mmproj_path;
  }
  m.emit("state", {{"state", "loading"}, {"model", path}});
  auto fail = [&](const Status& s) {
    const bool stopped = s.code() == StatusCode::kCancelled;
    if (stopped) {
      logger("engine")->info("load of {} cancelled", path);
    } else {
      logger("engine")->error("load failed: {}", s.to_string());
    }
    m.emit("load_error", {{"model", path}, {"message", s.message()}, {"cancelled", stopped}});
    m.cancel_load = false;  // the previous model's reload below must not stop
    auto settle = [&](EngineState state, std::string error) {
      std::lock_guard<std::mutex> lock(m.mu);
      m.state = state;
      m.error = std::move(error);
    };
    if (m.current() != nullptr) {  // refused before the loaded model was touched
      settle(EngineState::kReady, s.message());
      return s;
    }
    if (!previous) {  // a cancelled load is no failure: the engine is idle, as before it
      settle(stopped ? EngineState::kIdle : EngineState::kError, stopped ? "" : s.message());
      return s;
    }
    // The model that was serving comes back (its file was loadable a moment ago); the state
    // stays "loading" meanwhile.
    auto again = load_model(m, previous->model, previous->settings);
    if (!again.ok()) {
      logger("engine")->error("reloading {} failed too: {}", previous->model,
                              again.status().to_string());
      settle(EngineState::kError, s.message());
      return s;
    }
    {
      std::lock_guard<std::mutex> lock(m.mu);
      m.loaded = *again;
    }
    settle(EngineState::kReady,
           stopped ? std::string() : s.message() + "; still serving " + previous->model);
    m.emit("load_done", {{"model", (*again)->info.id}, {"path", previous->model}});
    return s;
  };
  if (!request.ok()) return fail(request.status());
  (void)unload_model(m);
  auto loaded = load_model(m, path, request->settings);
  if (!loaded.ok()) {
    if (loaded.status().code() == StatusCode::kCancelled) {
      return fail(cancelled("the load of " + path + " was cancelled"));
    }
    return fail(loaded.status().with_context("cannot load " + path));
  }
  {
    std::lock_guard<std::mutex> lock(m.mu);
    m.loaded = *loaded;
    m.state = EngineState::kReady;
    m.cancel_load = false;  // a cancel that came as the load finished is moot
  }
  const auto& l = **loaded;
  logger("engine")->info("loaded {} ({}, {} of weights, KV pool {} tokens)", path,
                         l.info.architecture, gib(static_cast<double>(l.weight_bytes)),
                         l.kv_tokens);
  if (m.tp) {
    // Fresh probes with the model in memory (still under switch_mu: no other control message).
    if (auto c = gather_cluster_locked(m); !c.ok())
      logger("engine")->warn("{}", c.status().message());
  }
  m.emit("load_done", {{"model", l.info.id},
                       {"path", path},
                       {"weight_bytes", l.weight_bytes},
                       {"kv_bytes", l.kv_bytes},
                       {"kv_tokens", l.kv_tokens},
                       {"context_length", l.info.context_length}});
  return ok_status();
}

Status EngineService::cancel_load() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (impl_->state != EngineState::kLoading) return failed_precondition("no model is loading");
  impl_->cancel_load = true;
  logger("engine")->info("cancelling the load in progress");
  return ok_status();
}

Status EngineService::unload() {
  Impl& m = *impl_;
  {
    std::lock_guard<std::mutex> lock(m.mu);
    if (m.state == EngineState::kLoading && m.loaded == nullptr) {
      return failed_precondition("a model is loading; unload it when loading has finished");
    }
  }
  std::unique_lock<std::mutex> switching(m.switch_mu, std::try_to_lock);
  if (!switching.owns_lock()) {
    return failed_precondition("a model is loading; unload it when loading has finished");
  }
  bool had = unload_model(m);
  {
    std::lock_guard<std::mutex> lock(m.mu);
    if (m.state != EngineState::kLoading && m.tp_fault.empty()) m.state = EngineState::kIdle;
  }
  if (had) m.emit("unloaded", json::object());
  return ok_status();
}

json EngineService::status() const {
  Impl& m = *impl_;
  auto l = m.current();
  json j;
  {
    std::lock_guard<std::mutex> lock(m.mu);
    j["state"] = std::string(engine_state_name(m.state));
    if (!m.error.empty()) j["error"] = m.error;
  }
  j["version"] = m.opt.version;
  j["ranks"] = m.tp ? m.tp->comm().size() : 1;
  j["backend"] = m.opt.backend;
  if (!m.opt.backend_reason.empty()) j["backend_reason"] = m.opt.backend_reason;
  if (m.opt.backend == "cuda") j["device"] = m.opt.device;
  j["settings"] = {{"ctx_size", m.opt.ctx_size},
                   {"max_batch_tokens", m.opt.max_batch_tokens},
                   {"max_parallel", m.opt.max_parallel},
                   {"kv_block_size", m.opt.kv_block_size},
                   {"kv_type", std::string(dtype_name(m.opt.kv_type))},
                   {"reserve_gib", m.opt.reserve_gib},
                   {"model_dirs", m.opt.model_dirs}};
  j["memory"] = json::array({{{"rank", 0},
                              {"used_bytes", process_rss_bytes()},
                              {"available_bytes", available_memory_bytes()},
                              {"total_bytes", total_memory_bytes()}}});
  if (l) {
    j["model"] = {{"id", l->info.id},
                  {"path", l->info.path},
                  {"architecture", l->info.architecture},
                  {"context_length", l->info.context_length},
                  {"weight_bytes", l->weight_bytes},
                  {"vision", l->info.vision},
                  {"mmproj", l->mmproj_path},
                  {"tools", l->info.tools},
                  {"tool_call_syntax", output_syntax_name(l->syntax)},
                  {"settings", settings_json(l->settings)}};
    if (l->n_ranks > 1) {
      // How the model splits over the ranks; the routed experts' line says which split and why.
      j["model"]["tp_split"] = l->tp_split;
      j["model"]["moe_split_requested"] = std::string(moe_split_name(m.opt.moe_split));
    }
    SchedulerStats s = l->stats();
    j["kv"] = {{"blocks_total", s.kv_blocks_total},
               {"blocks_used", s.kv_blocks_used},
               {"blocks_cached", s.kv_blocks_cached},
               {"state_slots_total", s.state_slots_total},
               {"state_slots_used", s.state_slots_used},
               {"state_snapshots_total", s.state_snapshots_total},
               {"state_snapshots_filed", s.state_snapshots_filed},
               {"block_size", m.opt.kv_block_size},
               {"bytes", l->kv_bytes},
               {"tokens", l->kv_tokens}};
    if (const WindowedBlocks* w = l->kv->window()) {
      // Sliding-window layers (gpt-oss) keep only their window, in a pool of their own; the
      // blocks above are the full-attention layers'.
      j["kv"]["window"] = {{"tokens", w->window()},
                           {"blocks_total", s.kv_window_blocks_total},
                           {"blocks_used", s.kv_window_blocks_used},
                           {"blocks_cached", s.kv_window_blocks_cached},
                           {"bytes", l->kv_window_bytes}};
    }
    j["requests"] = {{"running", s.running}, {"waiting", s.waiting}};
    j["speculative"] = {
        {"requested", m.opt.spec},
        {"mode", l->info.speculative},
        {"k", l->spec.k},
        {"max_k", l->spec.max_k()},
        {"note", l->spec_note},
        {"draft_tokens", s.draft_tokens},
        {"accepted_tokens", s.accepted_tokens},
        {"acceptance_rate",
         s.draft_tokens ? static_cast<double>(s.accepted_tokens) / s.draft_tokens : 0.0},
        {"tokens_per_verify",
         s.verify_steps ? 1.0 + static_cast<double>(s.accepted_tokens) / s.verify_steps : 0.0}};
  } else {
    j["model"] = nullptr;
  }
  return j;
}

json EngineService::local_models() const {
  json out = json::array();
  auto l = impl_->current();
  std::set<fs::path> seen;  // a folder given twice (or inside another) lists its files once
  for (const auto& dir : impl_->opt.model_dirs) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    for (fs::recursive_directory_iterator
             it(dir, fs::directory_options::skip_permission_denied, ec),
         end;
         it != end; it.increment(ec)) {
      if (ec) break;
      if (it.depth() > 2) it.disable_recursion_pending();
      if (!it->is_regular_file(ec) || it->path().extension() != ".gguf") continue;
      if (!seen.insert(fs::weakly_canonical(it->path(), ec)).second) continue;
      const std::string name = it->path().filename().string();
      // Later parts of a split model open with their first part.
      if (name.find("-of-") != std::string::npos && name.find("-00001-of-") == std::string::npos)
        continue;
      json entry = {{"path", it->path().string()},
                    {"name", it->path().stem().string()},
                    {"file_bytes", it->is_regular_file(ec) ? it->file_size(ec) : 0},
                    {"loaded", l && l->info.path == it->path().string()}};
      auto file = gguf::File::open(it->path().string());
      if (file.ok()) {
        entry["summary"] = gguf::to_json(gguf::summarize(*file));
        // A projector is the vision part of a model, not a model: listed as such, and each
        // vision model names the projector that loading it pairs (the one made for it).
        const bool projector = name.rfind("mmproj", 0) == 0 || file->architecture() == "clip";
        entry["mmproj"] = projector;
        if (auto cfg = config_from_gguf(*file); !projector && cfg.ok() && cfg->mrope()) {
          const auto cands = mmproj_candidates(it->path().string(), *cfg);
          entry["vision_projector"] =
              !cands.empty() && cands.front().fits ? json(cands.front().path) : json(nullptr);
        }
      } else {
        entry["error"] = file.status().message();
      }
      out.push_back(std::move(entry));
    }
  }
  return out;
}

Result<json> EngineService::fit(const json& request) const {
  // {"model": PATH} or {"catalog": ID, "build": NAME}, plus optional "cluster" and "workload".
  fit::ModelSpec spec;
  if (!request.is_object()) return invalid_argument("the request must be a JSON object");
  if (request.contains("model") && request["model"].is_string()) {
    ARC_ASSIGN_OR_RETURN(std::string path, resolve_model_path(impl_->opt.model_dirs,
                                                              request["model"].get<std::string>()));
    ARC_ASSIGN_OR_RETURN(spec, fit::model_spec_from_gguf_file(path));
  } else if (request.contains("catalog") && request["catalog"].is_string()) {
    if (impl_->opt.catalog_path.empty()) {
      return not_found("this engine was started without a model catalog");
    }
    ARC_ASSIGN_OR_RETURN(auto cat, catalog::load_catalog(impl_->opt.catalog_path));
    const std::string id = request["catalog"];
    const catalog::Model* model = cat.find(id);
    const std::string shown = path_for_message(id);
    if (model == nullptr) return not_found("no catalog entry '" + shown + "'");
    if (model->builds.empty()) return not_found("catalog entry '" + shown + "' has no builds");
    const std::string build_name = request.contains("build") && request["build"].is_string()
                                       ? request["build"].get<std::string>()
                                       : "";
    const catalog::Build* build =
        build_name.empty() ? &model->builds.front() : model->find_build(build_name);
    if (build == nullptr)
      return not_found("catalog entry '" + shown + "' has no build '" +
                       path_for_message(build_name) + "'");
    ARC_ASSIGN_OR_RETURN(spec, catalog::model_spec(*model, *build));
  } else {
    return invalid_argument(
        "give 'model' (a GGUF path) or 'catalog' (an entry id) with an optional 'build'");
  }
  ARC_ASSIGN_OR_RETURN(auto cluster,
                       fit::cluster_from_json(request.value("cluster", json::object())));
  ARC_ASSIGN_OR_RETURN(auto workload,
                       fit::workload_from_json(request.value("workload", json::object())));
  ARC_ASSIGN_OR_RETURN(auto report, fit::compute(spec, cluster, workload));
  return fit::to_json(report);
}

std::string EngineService::metrics_text() const {
  impl_->refresh_gauges();
  return impl_->metrics.render();
}

void EngineService::Impl::refresh_gauges() {
  auto l = current();
  SchedulerStats s = l ? l->stats() : SchedulerStats{};
  metrics.set("arclight_requests_running", s.running);
  metrics.set("arclight_requests_waiting", s.waiting);
  metrics.set("arclight_kv_blocks_capacity", s.kv_blocks_total);
  metrics.set("arclight_kv_blocks_used", s.kv_blocks_used);
  metrics.set("arclight_kv_window_blocks_capacity", s.kv_window_blocks_total);
  metrics.set("arclight_kv_window_blocks_used", s.kv_window_blocks_used);
  metrics.set("arclight_kv_cache_usage_ratio",
              s.kv_blocks_total ? static_cast<double>(s.kv_blocks_used) / s.kv_blocks_total : 0.0);
  metrics.set("arclight_state_slots_used", s.state_slots_used);
  metrics.set("arclight_state_snapshots", s.state_snapshots_filed, {{"state", "filed"}});
  metrics.set("arclight_state_snapshots", s.state_snapshots_pending, {{"state", "pending"}});
  metrics.set("arclight_state_snapshots", s.state_snapshots_total, {{"state", "capacity"}});
  metrics.set("arclight_spec_acceptance_ratio",
              s.draft_tokens ? static_cast<double>(s.accepted_tokens) / s.draft_tokens : 0.0);
  metrics.set("arclight_memory_used_bytes", static_cast<double>(process_rss_bytes()),
              {{"rank", "0"}});
  metrics.set("arclight_memory_available_bytes", static_cast<double>(available_memory_bytes()),
              {{"rank", "0"}});
}

void EngineService::Impl::stats_loop() {
  uint64_t last_generated = 0, last_prompt = 0, last_drafted = 0, last_accepted = 0;
  auto last = Clock::now();
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu);
      if (cv.wait_for(lock, std::chrono::seconds(1), [&] { return stopping; })) return;
    }
    auto l = current();
    SchedulerStats s = l ? l->stats() : SchedulerStats{};
    auto now = Clock::now();
    double dt = std::chrono::duration<double>(now - last).count();
    last = now;
    uint64_t computed_prompt = s.prompt_tokens - s.prefix_hit_tokens;
    double decode_tps = dt > 0 && s.generated_tokens >= last_generated
                            ? (s.generated_tokens - last_generated) / dt
                            : 0.0;
    double prefill_tps =
        dt > 0 && computed_prompt >= last_prompt ? (computed_prompt - last_prompt) / dt : 0.0;
    last_generated = s.generated_tokens;
    // Speculative decoding: the share of the last second's drafts that were accepted.
    // Speculative decoding: the share of the last second's drafts that were accepted (none
    // when nothing was drafted: the chart leaves a gap rather than a false zero).
    const bool drafted = s.draft_tokens > last_drafted && s.accepted_tokens >= last_accepted;
    const double acceptance = drafted ? static_cast<double>(s.accepted_tokens - last_accepted) /
                                            static_cast<double>(s.draft_tokens - last_drafted)
                                      : 0.0;
    last_drafted = s.draft_tokens;
    last_accepted = s.accepted_tokens;
    last_prompt = computed_prompt;
    EngineState st;
    {
      std::lock_guard<std::mutex> lock(mu);
      st = state;
    }
    emit("stats",
         {{"state", std::string(engine_state_name(st))},
          {"running", s.running},
          {"waiting", s.waiting},
          {"kv_blocks_total", s.kv_blocks_total},
          {"kv_blocks_used", s.kv_blocks_used},
          {"kv_blocks_cached", s.kv_blocks_cached},
          {"kv_window_blocks_total", s.kv_window_blocks_total},
          {"kv_window_blocks_used", s.kv_window_blocks_used},
          {"prefix_hit_rate",
           s.prompt_tokens ? static_cast<double>(s.prefix_hit_tokens) / s.prompt_tokens : 0.0},
          {"decode_tokens_per_s", decode_tps},
          {"prefill_tokens_per_s", prefill_tps},
          {"generated_tokens_total", s.generated_tokens},
          {"draft_tokens_total", s.draft_tokens},
          {"accepted_tokens_total", s.accepted_tokens},
          {"acceptance_rate", drafted ? json(acceptance) : json(nullptr)},
          {"memory", json::array({{{"rank", 0},
                                   {"used_bytes", process_rss_bytes()},
                                   {"available_bytes", available_memory_bytes()},
                                   {"total_bytes", total_memory_bytes()}}})}});
  }
}

}  // namespace arc
