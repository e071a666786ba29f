// TpServeGroup / tp_serve_worker: the control messages of multi-rank serving (load, shutdown)
// around the step protocol of arc/tp_session.h.
#include "arc/tp_serve.h"

#include <cstring>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "arc/forward.h"
#include "arc/kv_cache.h"
#include "arc/log.h"
#include "arc/model.h"
#include "arc/shard_plan.h"
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
  for (int r = 0; r < comm.size(); ++r) {
    std::vector<char> buf(kStatusBytes, '\0');
    if (r == comm.rank() && !own.ok()) {
      std::string m = own.message().substr(0, kStatusBytes - 1);
      if (m.empty()) m = "failed";
      std::memcpy(buf.data(), m.data(), m.size());
    }
    ARC_RETURN_IF_ERROR(comm.rank() == 0
                            ? comm.broadcast_within(buf.data(), kStatusBytes, r, timeout)
                            : comm.broadcast_no_deadline(buf.data(), kStatusBytes, r));
    if (buf[0] != '\0') {
      failed += (failed.empty() ? "" : "; ") + std::string("rank ") + std::to_string(r) + ": " +
                std::string(buf.data());
    }
  }
  if (failed.empty()) return ok_status();
  return failed_precondition(failed);
}

// One worker's hold on a model.
struct WorkerModel {
  std::unique_ptr<Backend> backend;
  std::unique_ptr<Model> model;
  std::unique_ptr<KvCache> kv;
  std::unique_ptr<ForwardExecutor> exec;
};

Result<std::unique_ptr<WorkerModel>> load_worker_model(Communicator& comm, const TpModelSpec& spec,
                                                       int threads) {
  auto w = std::make_unique<WorkerModel>();
  w->backend = make_cpu_backend(threads);
  ARC_ASSIGN_OR_RETURN(w->model, Model::load(spec.path, *w->backend));
  ARC_ASSIGN_OR_RETURN(ShardPlan plan, make_shard_plan(*w->model, comm.size(), comm.rank()));
  Result<uint64_t> bytes = shard_model(*w->model, *w->backend, plan);
  ARC_RETURN_IF_ERROR(bytes);
  const ModelConfig& c = w->model->config();
  ARC_ASSIGN_OR_RETURN(
      w->kv, KvCache::create(*w->backend, {c.n_layer, c.n_kv_head, c.head_dim, spec.block_size,
                                           spec.n_blocks, spec.kv_type}));
  w->exec = std::make_unique<ForwardExecutor>(*w->model, *w->backend, *w->kv);
  w->exec->set_tensor_parallel(&comm, plan.vocab_begin);
  return w;
}

}  // namespace

Status TpServeGroup::begin_load(const TpModelSpec& spec) {
  if (shut_down_) return failed_precondition("the ranks were shut down");
  const std::string body = nlohmann::json({{"path", spec.path},
                                           {"n_blocks", spec.n_blocks},
                                           {"block_size", spec.block_size},
                                           {"kv_type", static_cast<int>(spec.kv_type)}})
                               .dump();
  ControlHeader h;
  h.kind = kLoad;
  h.bytes = static_cast<int64_t>(body.size());
  ARC_RETURN_IF_ERROR(comm_.broadcast(&h, sizeof(h), 0));
  std::string copy = body;
  return comm_.broadcast(copy.data(), h.bytes, 0);
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
    spec.block_size = j.value("block_size", int64_t{16});
    spec.kv_type = static_cast<DType>(j.value("kv_type", static_cast<int>(DType::F16)));
    if (options.fault_on_load) {
      return cancelled("rank " + std::to_string(comm.rank()) + ": test fault injected at load");
    }
    log->info("rank {}: loading {}", comm.rank(), spec.path);
    auto w = load_worker_model(comm, spec, options.threads);
    const Status own = w.ok() ? ok_status() : w.status();
    if (!own.ok()) log->error("rank {}: cannot load {}: {}", comm.rank(), spec.path, own.message());
    if (Status all = exchange_outcomes(comm, own, std::chrono::milliseconds(0)); !all.ok()) {
      // Some rank failed: everyone drops the model and waits for the next one. A broken
      // collective, though, ends the worker.
      if (all.code() != StatusCode::kFailedPrecondition) return all;
      continue;
    }
    TpDriver drv(comm, *(*w)->exec, *(*w)->kv);
    drv.set_fault_before_step(options.fault_before_step);
    ARC_RETURN_IF_ERROR(drv.worker_loop());
    log->info("rank {}: unloaded {}", comm.rank(), spec.path);
  }
}

}  // namespace arc
