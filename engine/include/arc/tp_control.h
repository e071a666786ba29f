// Cluster messages on the tensor-parallel control path: rank 0 asks every rank for its node
// probe, or runs the link test with them. Workers answer them in both of their loops (idle in
// tp_serve_worker, or serving a model in TpDriver::worker_loop), so rank 0 may send one at any
// time it holds the control path: no load or unload in flight, no step being sent.
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "arc/cluster_link.h"
#include "arc/communicator.h"
#include "arc/status.h"

namespace arc {

// Message kinds above those of the step protocol (4, 5) and of serving control (11, 12).
enum TpClusterKind : int32_t { kTpClusterProbe = 21, kTpClusterLinkTest = 22 };

inline bool is_tp_cluster_message(int32_t kind) {
  return kind == kTpClusterProbe || kind == kTpClusterLinkTest;
}

// Rank 0: every rank's probe (arc::cluster::to_json of probe_node) in rank order, `own` first.
Result<std::vector<nlohmann::json>> tp_gather_probes(Communicator& comm, const nlohmann::json& own);
// Rank 0: the link test on every rank; results are rank 0's timings.
Result<std::vector<cluster::LinkTestResult>> tp_link_test(Communicator& comm,
                                                          const cluster::LinkTestOptions& o);

// Workers, after reading a control header whose kind is_tp_cluster_message: `arg` is the
// header's 64-bit field after the kind (its second word). Returns an error only when a
// collective failed.
Status tp_answer_cluster_message(Communicator& comm, int32_t kind, int64_t arg);

}  // namespace arc
