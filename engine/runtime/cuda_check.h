// First-failure bookkeeping for CUDA runtime calls: ARC_CUDA_CHECK(errors, call) runs `call`,
// and on failure keeps "call failed at file:line: message (cudaErrorName)" as the first error
// until it is taken (Backend::sync() returns it). Host code only; needs cuda_runtime_api.h.
#pragma once

#include <cuda_runtime_api.h>

#include <string>
#include <string_view>

#include "arc/status.h"

namespace arc::cuda_detail {

inline std::string_view base_name(std::string_view path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

inline std::string describe(cudaError_t e) {
  return std::string(cudaGetErrorString(e)) + " (" + cudaGetErrorName(e) + ")";
}

class CudaErrors {
 public:
  // True when `e` is cudaSuccess; otherwise records the first failure.
  bool check(cudaError_t e, const char* call, const char* file, int line) {
    if (e == cudaSuccess) return true;
    cudaGetLastError();  // recorded here: not again, as a stale error, by the next op's check
    fail(std::string(call) + " failed at " + std::string(base_name(file)) + ":" +
         std::to_string(line) + ": " + describe(e));
    return false;
  }
  void fail(std::string message) {
    if (first_.ok()) first_ = internal_error("CUDA backend: " + std::move(message));
  }
  bool failed() const { return !first_.ok(); }
  const Status& peek() const { return first_; }
  void restore(Status s) { first_ = std::move(s); }
  // The first failure since the last take(), and a clean slate.
  Status take() {
    Status s = std::move(first_);
    first_ = ok_status();
    return s;
  }

 private:
  Status first_;
};

}  // namespace arc::cuda_detail

// Runs a CUDA runtime call and records its failure (with the call's text, file and line) in
// `errors` (a CudaErrors). Evaluates to true on success.
#define ARC_CUDA_CHECK(errors, call) (errors).check((call), #call, __FILE__, __LINE__)
