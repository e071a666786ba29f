// The cluster messages of arc/tp_control.h: a 24-byte header like the step and serving
// protocols' (kind, pad, arg, zero), then the message's own broadcasts.
#include "arc/tp_control.h"

#include "arc/cluster_probe.h"
#include "arc/log.h"

namespace arc {
namespace {

// Same size and layout of the first two fields as tp_session's Header and tp_serve's
// ControlHeader; the last field is zero so the step loop reads no payload after it.
struct ClusterHeader {
  int32_t kind = 0;
  int32_t pad = 0;
  int64_t arg = 0;  // kTpClusterLinkTest: bytes of the options JSON that follows
  int64_t zero = 0;
};
static_assert(sizeof(ClusterHeader) == 24);

constexpr int64_t kMaxOptionsBytes = 4096;

nlohmann::json own_probe() {
  cluster::ProbeOptions po;
  po.gpu_memory = false;  // a worker without a CUDA backend must not create a context for it
  return cluster::to_json(cluster::probe_node(po));
}

Result<std::vector<cluster::LinkTestResult>> link_test_body(Communicator& comm,
                                                            std::string& options_text) {
  auto j = nlohmann::json::parse(options_text, nullptr, false);
  if (j.is_discarded()) return internal_error("malformed link test message");
  ARC_ASSIGN_OR_RETURN(auto o, cluster::link_test_options_from_json(j));
  return cluster::run_link_test(comm, o);
}

}  // namespace

Result<std::vector<nlohmann::json>> tp_gather_probes(Communicator& comm,
                                                     const nlohmann::json& own) {
  if (comm.size() > 1) {
    ClusterHeader h;
    h.kind = kTpClusterProbe;
    ARC_RETURN_IF_ERROR(comm.broadcast(&h, sizeof h, 0));
  }
  return cluster::gather_json(comm, own);
}

Result<std::vector<cluster::LinkTestResult>> tp_link_test(Communicator& comm,
                                                          const cluster::LinkTestOptions& o) {
  std::string text = cluster::to_json(o).dump();
  if (comm.size() > 1) {
    ClusterHeader h;
    h.kind = kTpClusterLinkTest;
    h.arg = static_cast<int64_t>(text.size());
    ARC_RETURN_IF_ERROR(comm.broadcast(&h, sizeof h, 0));
    ARC_RETURN_IF_ERROR(comm.broadcast(text.data(), h.arg, 0));
  }
  return link_test_body(comm, text);
}

Status tp_answer_cluster_message(Communicator& comm, int32_t kind, int64_t arg) {
  if (kind == kTpClusterProbe) return cluster::gather_json(comm, own_probe()).status();
  if (kind != kTpClusterLinkTest) {
    return internal_error("worker: not a cluster message: kind " + std::to_string(kind));
  }
  if (arg <= 0 || arg > kMaxOptionsBytes) {
    return internal_error("worker: link test options of " + std::to_string(arg) + " bytes");
  }
  std::string text(static_cast<size_t>(arg), '\0');
  ARC_RETURN_IF_ERROR(comm.broadcast(text.data(), arg, 0));
  // Options rank 0 cannot read fail there too, before any collective: both sides skip the test
  // and stay in step, so only a failed collective ends the worker.
  auto j = nlohmann::json::parse(text, nullptr, false);
  auto o = j.is_discarded() ? Result<cluster::LinkTestOptions>(internal_error("malformed"))
                            : cluster::link_test_options_from_json(j);
  if (!o.ok()) {
    logger("dist")->error("rank {}: link test options: {}", comm.rank(), o.status().message());
    return ok_status();
  }
  auto r = cluster::run_link_test(comm, *o);
  if (!r.ok()) logger("dist")->error("rank {}: link test: {}", comm.rank(), r.status().message());
  return r.status();
}

}  // namespace arc
