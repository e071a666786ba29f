// GPUs through the CUDA runtime: compiled when the engine is built with CUDA.
#include <cuda_runtime.h>

#include "arc/cluster_probe.h"

namespace arc::cluster {

void probe_gpus(NodeProbe& node, bool with_memory) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count <= 0) {
    // No driver, or a driver without devices: not an error for a probe.
    node.gpu_note = err == cudaSuccess
                        ? "no CUDA device"
                        : std::string("no CUDA device (") + cudaGetErrorString(err) + ")";
    cudaGetLastError();  // clear the sticky-free error so later calls start clean
    return;
  }
  int current = 0;
  cudaGetDevice(&current);
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
    GpuInfo g;
    g.name = prop.name;
    g.cc_major = prop.major;
    g.cc_minor = prop.minor;
    g.total_bytes = static_cast<uint64_t>(prop.totalGlobalMem);
    if (with_memory && cudaSetDevice(i) == cudaSuccess) {
      size_t free_b = 0, total_b = 0;
      if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess) {
        g.free_bytes = free_b;
        g.total_bytes = total_b;
      }
    }
    node.gpus.push_back(std::move(g));
  }
  if (with_memory) cudaSetDevice(current);
  cudaGetLastError();
}

}  // namespace arc::cluster
