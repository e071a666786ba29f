// Why a CUDA kernel launcher returned false because a runtime call failed (ARC_CUDA_CHECK):
// "cudaMemsetAsync(...) failed at kernels/cuda/moe.cu:120: out of memory". Plain C++ header.
#pragma once

#include <string>

namespace arc::kernels::cuda {

// Message of the last failed CUDA runtime call on this thread; empty when none failed.
std::string last_error();
// Forgets the recorded message.
void clear_last_error();

}  // namespace arc::kernels::cuda
