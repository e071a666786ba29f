// EngineService::cluster and link_test: the node probes of every rank and the timed all-reduce,
// sent to the other ranks on the control path (arc/tp_control.h) while rank 0 holds it: no load
// or unload in flight (switch_mu) and, with a model loaded, between two steps (tp_send_mu).
#include <chrono>

#include "arc/cluster_probe.h"
#include "arc/tp_control.h"
#include "sched/engine_service_impl.h"

namespace arc {
namespace {

using nlohmann::json;

json local_probe(const EngineOptions& o) {
  cluster::ProbeOptions po;
  // A CUDA engine has its context already; a CPU one must not create one just to read memory.
  po.gpu_memory = o.backend == "cuda";
  return cluster::to_json(cluster::probe_node(po));
}

int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// {"ranks", "nodes": [{rank, host, probe}], "hosts": [{host, ranks: [...]}]}
json assemble(const std::vector<json>& probes) {
  json nodes = json::array();
  json hosts = json::array();
  for (size_t r = 0; r < probes.size(); ++r) {
    const std::string host = probes[r].is_object() ? probes[r].value("hostname", "") : "";
    nodes.push_back({{"rank", r}, {"host", host}, {"probe", probes[r]}});
    bool found = false;
    for (auto& h : hosts) {
      if (h["host"] == host) {
        h["ranks"].push_back(r);
        found = true;
      }
    }
    if (!found) hosts.push_back({{"host", host}, {"ranks", json::array({r})}});
  }
  return {{"ranks", probes.size()}, {"nodes", nodes}, {"hosts", hosts}, {"probed_at", unix_now()}};
}

// Runs `fn` (which sends to the other ranks) while no step can be sent: between two steps of a
// loaded model, or while none is loaded. The caller holds switch_mu.
template <typename F>
auto between_steps(EngineService::Impl& m, F&& fn) {
  auto l = m.current();
  if (l && l->tp_driver) {
    std::lock_guard<std::mutex> lock(l->tp_send_mu);
    return fn();
  }
  return fn();
}

}  // namespace

Result<json> gather_cluster_locked(EngineService::Impl& m) {
  json own = local_probe(m.opt);
  if (!m.tp) return assemble(std::vector<json>(1, own));
  auto probes = between_steps(m, [&] { return tp_gather_probes(m.tp->comm(), own); });
  if (!probes.ok()) return probes.status().with_context("gathering the ranks' probes");
  json j = assemble(*probes);
  std::lock_guard<std::mutex> lock(m.cluster_mu);
  m.last_cluster = j;
  return j;
}

Result<json> EngineService::cluster() {
  Impl& m = *impl_;
  json own = local_probe(m.opt);
  if (!m.tp) return assemble(std::vector<json>(1, own));
  if (std::string f = m.fault(); !f.empty()) return unavailable(f);
  std::unique_lock<std::mutex> switching(m.switch_mu, std::try_to_lock);
  if (!switching.owns_lock()) {
    // A load holds the other ranks for minutes: answer with what they said last time.
    std::lock_guard<std::mutex> lock(m.cluster_mu);
    if (m.last_cluster.is_null()) {
      return failed_precondition(
          "a model is loading on every rank; the other ranks report when it has finished");
    }
    json j = m.last_cluster;
    j["stale"] = true;
    j["nodes"][0]["probe"] = own;
    return j;
  }
  return gather_cluster_locked(m);
}

Result<json> EngineService::link_test(const json& request) {
  Impl& m = *impl_;
  ARC_ASSIGN_OR_RETURN(auto options, cluster::link_test_options_from_json(request));
  const int ranks = m.tp ? m.tp->comm().size() : 1;
  if (ranks < 2) {
    return failed_precondition(
        "the link test needs two or more ranks, and this engine is one process: start it on "
        "several boxes (mpirun -np 2 --hostfile HOSTS arclight-engine serve --tp 2 ...)");
  }
  if (std::string f = m.fault(); !f.empty()) return unavailable(f);
  std::unique_lock<std::mutex> switching(m.switch_mu, std::try_to_lock);
  if (!switching.owns_lock()) {
    return failed_precondition(
        "a model is loading or unloading; run the link test when it has finished");
  }
  const bool serving = m.current() != nullptr;
  auto results = between_steps(m, [&] { return tp_link_test(m.tp->comm(), options); });
  if (!results.ok()) return results.status().with_context("link test");
  return json{{"ranks", ranks},
              {"transport", "mpi"},
              {"model_loaded", serving},
              {"results", cluster::to_json(*results)}};
}

}  // namespace arc
