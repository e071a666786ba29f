// Per-op timing of a decode step: a Backend that forwards every op to another backend and adds
// the wall time of each op to a table (`arclight-engine bench --profile-ops`). After each op it
// waits for the inner backend (sync), so asynchronous backends are timed per op too, at the price
// of their overlap; on the CPU backend ops run synchronously anyway.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "arc/backend.h"

namespace arc {

struct OpTime {
  std::string op;  // backend op name: "matmul", "moe_ffn", ...
  double seconds = 0;
  int64_t calls = 0;
};

// Accumulated op times, in the order ops were first seen. Single-threaded, like the backend.
class OpProfile {
 public:
  bool enabled = false;  // ops are timed only while set (e.g. during the decode steps)
  void add(const char* op, double seconds);
  const std::vector<OpTime>& times() const { return times_; }

 private:
  std::vector<OpTime> times_;
};

// Wraps `inner` (which must outlive the result). Optional capabilities of `inner` (step graphs,
// device reports) are not visible through the wrapper.
std::unique_ptr<Backend> make_profiling_backend(Backend& inner, OpProfile* profile);

}  // namespace arc
