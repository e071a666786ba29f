// Multi-rank cluster checks over a Communicator: every rank's probe gathered in rank order, and
// a timed all-reduce of a few sizes (the link test). Every rank calls the same function with
// the same arguments; the messages that make the workers call them are in arc/tp_control.h.
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "arc/communicator.h"
#include "arc/status.h"

namespace arc::cluster {

// Every rank's JSON in rank order (each rank gets all of them). `own` is at most 1 MiB dumped.
Result<std::vector<nlohmann::json>> gather_json(Communicator& comm, const nlohmann::json& own);

struct LinkTestOptions {
  std::vector<int64_t> sizes_bytes;  // per all-reduce; multiples of 4 (floats)
  int iterations = 0;                // timed all-reduces per size; 0: from the size
};

// {"sizes": [bytes...], "iterations": N}, both optional; explains what is out of range.
Result<LinkTestOptions> link_test_options_from_json(const nlohmann::json& body);
nlohmann::json to_json(const LinkTestOptions& o);

struct LinkTestResult {
  int64_t bytes = 0;
  int iterations = 0;
  double seconds = 0;    // mean wall time of one all-reduce (rank 0's clock)
  double algbw_gbs = 0;  // bytes / seconds, GB/s (1e9)
  // The traffic each rank's link carries in a ring all-reduce: algbw x 2 (n-1) / n, the figure
  // to set against the link's speed (as nccl-tests reports it).
  double busbw_gbs = 0;
  bool correct = false;  // every element summed to the expected value on this rank
};

// Runs the all-reduces: one warm-up, a barrier, then `iterations` timed ones per size. Every
// rank fills its buffer with rank + 1 and checks the sum n (n + 1) / 2.
Result<std::vector<LinkTestResult>> run_link_test(Communicator& comm, const LinkTestOptions& o);
nlohmann::json to_json(const std::vector<LinkTestResult>& results);

}  // namespace arc::cluster
