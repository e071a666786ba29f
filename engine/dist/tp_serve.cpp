// TpServeGroup / tp_serve_worker: the control messages of multi-rank serving (load, shutdown)
// around the step protocol of arc/tp_session.h.
#include "arc/tp_serve.h"

#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "arc/backend_factory.h"
#include "arc/forward.h"
#include "arc/kv_cache.h"
#include "arc/kv_window.h"
#include "arc/log.h"
#include "arc/model.h"
#include "arc/rank_memory.h"
#include "arc/shard_load.h"
#include "arc/shard_plan.h"
#include "arc/tensor_comm.h"
#include "arc/tp_control.h"
#include "arc/tp_session.h"

namespace arc {
namespace {

// Kinds above the step protocol's, so a message arriving in the wrong loop is recognised.
enum ControlKind : int32_t { kLoad = 11, kShutdown = 12 };

// Same size as the step protocol's header; `bytes` of JSON follow a kLoad.
struct ControlHeader {
  int32_t kind = 0;
  int32_t unused = 0;
  int64_t bytes = 0;
  int64_t unused2 = 0;
};

constexpr int64_t kStatusBytes = 1024;  // one rank's load outcome: "" or the error text

// Every rank broadcasts its outcome in turn; returns the combined status (OK when all are).
// Not under the collective deadline: the others may still be reading their shard (minutes on
// big models). Rank 0 waits up to `timeout`; workers wait for rank 0 without a limit.
Status exchange_outcomes(Communicator& comm, const Status& own, std::chrono::milliseconds timeout) {
  std::string failed;
  bool memory = false;  // some rank lacks memory
  for (int r = 0; r < comm.size(); ++r) {
    // The message, NUL-terminated; the last byte says whether the rank lacks memory.
    std::vector<char> buf(kStatusBytes, '\0');
    if (r == comm.rank() && !own.ok()) {
      std::string m = own.message().substr(0, kStatusBytes - 2);
      if (m.empty()) m = "failed";
      std::memcpy(buf.data(), m.data(), m.size());
      buf[kStatusBytes - 1] = own.code() == StatusCode::kResourceExhausted ? 1 : 0;
    }
    ARC_RETURN_IF_ERROR(comm.rank() == 0
                            ? comm.broadcast_within(buf.data(), kStatusBytes, r, timeout)
                            : comm.broadcast_no_deadline(buf.data(), kStatusBytes, r));
    if (buf[0] != '\0') {
      memory = memory || buf[kStatusBytes - 1] == 1;
      buf[kStatusBytes - 1] = '\0';
      failed += (failed.empty() ? "" : "; ") + std::string("rank ") + std::to_string(r) + ": " +
                std::string(buf.data());
    }
  }
  if (failed.empty()) return ok_status();
  return memory ? resource_exhausted(failed) : failed_precondition(failed);
}

// One worker's hold on a model. Destroyed in reverse order: the executor, then the tensor
// communicator (its stream belongs to the backend), the KV pool, the model, the backend.
struct WorkerModel {
  std::unique_ptr<Backend> backend;
  std::unique_ptr<Model> model;
  std::unique_ptr<KvCache> kv;
  std::unique_ptr<Communicator> tensor_comm;  // NCCL on a GPU backend, else null
  std::unique_ptr<ForwardExecutor> exec;
};

// What a worker knows before reading weights: its backend, the file and its plan.
struct WorkerPrep {
  std::unique_ptr<Backend> backend;
  std::optional<gguf::File> file;
  ShardPlan plan;
};

Result<WorkerPrep> prepare_worker(Communicator& comm, const TpModelSpec& spec,
                                  const TpWorkerOptions& options) {
  WorkerPrep p;
  BackendOptions bo;
  bo.kind = spec.backend;
  bo.device = options.device;
  bo.threads = options.threads;
  bo.cuda_graphs = options.cuda_graphs;
  bo.mmap_weights = options.mmap_weights;
  ARC_ASSIGN_OR_RETURN(p.backend, make_backend(bo));
  ARC_ASSIGN_OR_RETURN(gguf::File f, gguf::File::open(spec.path));
  ARC_ASSIGN_OR_RETURN(p.plan, plan_for_file(f, comm.size(), comm.rank(), spec.moe_split));
  p.file.emplace(std::move(f));
  return p;
}

// This rank's memory guard: its shard, its KV pool (rank 0's block count, its own KV heads),
// rank 0's workspace and reserve, against what is free here.
Status check_worker_memory(WorkerPrep& p, const TpModelSpec& spec, const TpWorkerOptions& options) {
  const ModelConfig& c = p.plan.local;
  RankMemoryNeed need;
  need.weights = shard_weight_bytes(*p.file, p.plan);
  need.kv = spec.n_swa_blocks > 0 ? kv_pool_bytes(c, spec.kv_type, spec.n_blocks * spec.block_size,
                                                  spec.n_swa_blocks * spec.block_size)
                                  : static_cast<uint64_t>(c.kv_values_per_token()) *
                                        (spec.kv_type == DType::F16 ? 2 : 4) *
                                        static_cast<uint64_t>(spec.n_blocks * spec.block_size);
  need.workspace = spec.workspace_bytes;
  need.reserve = spec.reserve_bytes;
  ARC_ASSIGN_OR_RETURN(RankMemory free, rank_free_memory(*p.backend));
  if (options.test_memory_limit > 0) {
    free.available = options.test_memory_limit;
    free.where += " (test limit)";
  }
  return check_rank_memory(need, free);
}

Result<std::unique_ptr<WorkerModel>> load_worker_model(WorkerPrep& p, const TpModelSpec& spec) {
  auto w = std::make_unique<WorkerModel>();
  w->backend = std::move(p.backend);
  ARC_ASSIGN_OR_RETURN(w->model, load_model_shard(std::move(*p.file), *w->backend, p.plan));
  const ModelConfig& c = w->model->config();
  ARC_ASSIGN_OR_RETURN(
      w->kv,
      KvCache::create(*w->backend, with_windowed_pool(kv_cache_options(c, spec.block_size,
                                                                       spec.n_blocks, spec.kv_type),
                                                      c, spec.n_swa_blocks)));
  return w;
}

}  // namespace

Status TpServeGroup::begin_load(const TpModelSpec& spec) {
  if (shut_down_) return failed_precondition("the ranks were shut down");
  const std::string body =
      nlohmann::json({{"path", spec.path},
                      {"n_blocks", spec.n_blocks},
                      {"n_swa_blocks", spec.n_swa_blocks},
                      {"block_size", spec.block_size},
                      {"kv_type", static_cast<int>(spec.kv_type)},
                      {"backend", spec.backend},
                      {"workspace_bytes", spec.workspace_bytes},
                      {"reserve_bytes", spec.reserve_bytes},
                      {"moe_split", std::string(moe_split_name(spec.moe_split))}})
          .dump();
  ControlHeader h;
  h.kind = kLoad;
  h.bytes = static_cast<int64_t>(body.size());
  // Under the load timeout, not the collective deadline: the first load meets workers that may
  // still be starting (process start, MPI and backend init take seconds on a loaded box).
  ARC_RETURN_IF_ERROR(comm_.broadcast_within(&h, sizeof(h), 0, load_timeout_));
  std::string copy = body;
  return comm_.broadcast_within(copy.data(), h.bytes, 0, load_timeout_);
}

Status TpServeGroup::finish_load(const Status& own) {
  return exchange_outcomes(comm_, own, load_timeout_);
}

Status TpServeGroup::shutdown() {
  if (shut_down_ || comm_.size() == 1) return ok_status();
  shut_down_ = true;
  ControlHeader h;
  h.kind = kShutdown;
  return comm_.broadcast(&h, sizeof(h), 0);
}

Status tp_serve_worker(Communicator& comm, const TpWorkerOptions& options) {
  auto log = logger("dist");
  for (;;) {
    ControlHeader h;
    ARC_RETURN_IF_ERROR(comm.broadcast_no_deadline(&h, sizeof(h), 0).with_context("worker"));
    if (h.kind == kShutdown) return ok_status();
    if (is_tp_cluster_message(h.kind)) {
      ARC_RETURN_IF_ERROR(tp_answer_cluster_message(comm, h.kind, h.bytes));
      continue;
    }
    if (h.kind != kLoad || h.bytes <= 0 || h.bytes > (1 << 20)) {
      return internal_error("worker: unexpected control message kind " + std::to_string(h.kind));
    }
    std::string body(static_cast<size_t>(h.bytes), '\0');
    ARC_RETURN_IF_ERROR(comm.broadcast(body.data(), h.bytes, 0));
    TpModelSpec spec;
    auto j = nlohmann::json::parse(body, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return internal_error("worker: malformed load message");
    spec.path = j.value("path", "");
    spec.n_blocks = j.value("n_blocks", int64_t{0});
    spec.n_swa_blocks = j.value("n_swa_blocks", int64_t{0});
    spec.block_size = j.value("block_size", int64_t{16});
    spec.kv_type = static_cast<DType>(j.value("kv_type", static_cast<int>(DType::F16)));
    if (options.fault_on_load) {
      return cancelled("rank " + std::to_string(comm.rank()) + ": test fault injected at load");
    }
    spec.backend = j.value("backend", std::string("cpu"));
    spec.workspace_bytes = j.value("workspace_bytes", uint64_t{0});
    spec.reserve_bytes = j.value("reserve_bytes", uint64_t{0});
    spec.moe_split =
        parse_moe_split(j.value("moe_split", std::string("auto"))).value_or(MoeSplitMode::kAuto);
    log->info("rank {}: loading {}", comm.rank(), spec.path);
    // Every phase ends with every rank's outcome: when one rank failed, all drop the model and
    // wait for the next one; a broken collective, though, ends the worker.
    auto phase = [&](const Status& own) -> Status {
      if (!own.ok())
        log->error("rank {}: cannot load {}: {}", comm.rank(), spec.path, own.message());
      Status all = exchange_outcomes(comm, own, std::chrono::milliseconds(0));
      if (all.ok() || all.code() == StatusCode::kFailedPrecondition ||
          all.code() == StatusCode::kResourceExhausted) {
        return all;
      }
      return internal_error(all.message());  // distinguishes a broken collective
    };
    // 1. Memory, before any weight is read.
    auto prep = prepare_worker(comm, spec, options);
    Status s = phase(prep.ok() ? check_worker_memory(*prep, spec, options) : prep.status());
    if (s.code() == StatusCode::kInternal) return s;
    if (!s.ok()) continue;
    // 2. This rank's shard.
    auto w = load_worker_model(*prep, spec);
    s = phase(w.ok() ? ok_status() : w.status());
    if (s.code() == StatusCode::kInternal) return s;
    if (!s.ok()) continue;
    // 3. The tensor communicator (NCCL on a GPU; collective).
    WorkerModel& wm = **w;
    auto tc = make_tensor_communicator(comm, *wm.backend, options.collective_deadline);
    s = phase(tc.ok() ? ok_status() : tc.status());
    if (s.code() == StatusCode::kInternal) return s;
    if (!s.ok()) continue;
    wm.tensor_comm = std::move(*tc);
    wm.exec = std::make_unique<ForwardExecutor>(*wm.model, *wm.backend, *wm.kv);
    const ShardPlan& plan = prep->plan;
    wm.exec->set_tensor_parallel(wm.tensor_comm ? wm.tensor_comm.get() : &comm, plan.vocab_begin);
    TpDriver drv(comm, *wm.exec, *wm.kv);
    drv.set_fault_before_step(options.fault_before_step);
    ARC_RETURN_IF_ERROR(drv.worker_loop());
    log->info("rank {}: unloaded {}", comm.rank(), spec.path);
  }
}

}  // namespace arc
