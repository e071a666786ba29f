// The communicator a tensor-parallel rank's forward all-reduces and all-gathers through. Control
// messages (step batches, load/unload) always go through the MPI communicator; tensors go
// through NCCL on the GPU backend's stream when the backend has one (arc/backend_caps.h
// NativeStream), so collectives are ordered with the kernels, and through MPI on host memory
// otherwise.
#pragma once

#include <chrono>
#include <memory>

#include "arc/backend.h"
#include "arc/communicator.h"

namespace arc {

// Collective over `control` when the backend is a GPU (every rank must call it at the same
// point, with the same backend kind): a stream-ordered NcclCommunicator on the backend's stream
// and device. Null when the control communicator itself carries the tensors (CPU backend, one
// rank). A GPU backend in a build without NCCL is refused with what to do.
Result<std::unique_ptr<Communicator>> make_tensor_communicator(
    Communicator& control, Backend& backend,
    std::chrono::milliseconds deadline = std::chrono::seconds(60));

}  // namespace arc
