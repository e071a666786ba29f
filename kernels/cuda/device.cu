// Device discovery, the error record of ARC_CUDA_CHECK and scratch sizing. Nothing here may abort
// without a driver: device_count() answers 0 and device_info() false.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "arc/kernels/cuda_errors.h"
#include "cuda/attention.cuh"
#include "cuda/common.cuh"
#include "cuda/matmul.cuh"
#include "cuda/moe.cuh"
#include "cuda/sampling.cuh"

namespace arc::kernels::cuda {
namespace {
// Per thread, like cudaGetLastError itself: launchers on different streams/threads do not race.
thread_local std::string t_last_error;
}  // namespace

void record_error(const char* call, const char* file, int line, cudaError_t err) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "%s failed at %s:%d: %s", call, file, line,
                cudaGetErrorString(err));
  t_last_error = buf;
}

std::string last_error() {
  return t_last_error;
}
void clear_last_error() {
  t_last_error.clear();
}

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();  // no driver / no device: not sticky, clear it
    return 0;
  }
  return n;
}

bool device_info(int index, DeviceInfo* out) {
  if (out == nullptr || index < 0 || index >= device_count()) return false;
  cudaDeviceProp p{};
  ARC_CUDA_CHECK(cudaGetDeviceProperties(&p, index));
  *out = DeviceInfo{};
  out->index = index;
  const size_t len = strnlen(p.name, sizeof(out->name) - 1);
  std::memcpy(out->name, p.name, len);
  out->name[len] = '\0';
  out->sm_major = p.major;
  out->sm_minor = p.minor;
  out->total_bytes = p.totalGlobalMem;
  out->integrated = p.integrated != 0;
  return true;
}

size_t scratch_bytes(const ScratchShape& s) {
  size_t need = detail::matmul_scratch_bytes(s.max_tokens, s.max_dim);
  if (s.n_expert > 0 && s.k > 0) {
    need = std::max(need,
                    detail::moe_scratch_bytes(s.max_tokens, s.max_dim, s.max_dim, s.n_expert, s.k));
  }
  if (s.n_head > 0 && s.head_dim > 0) {
    need = std::max(
        need, detail::attention_scratch_bytes(s.max_tokens, s.n_head, s.head_dim, s.max_context));
  }
  if (s.n_vocab > 0) {
    need = std::max(need, detail::sampling_scratch_bytes(s.max_tokens, s.n_vocab, 256));
  }
  return need;
}

}  // namespace arc::kernels::cuda
