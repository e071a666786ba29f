// NCCL for the CUDA emulator, over MPI: a communicator is a duplicate of MPI_COMM_WORLD (the
// engine's NCCL communicators span every rank), and each collective is a stream item that runs the
// matching MPI collective on the stream's thread, in stream order. Calls between ncclGroupStart
// and ncclGroupEnd are enqueued at ncclGroupEnd, in the order they were made, so every rank issues
// the same MPI collectives in the same order. Needs MPI_THREAD_MULTIPLE (the engine asks for it):
// the stream threads call MPI while the main thread runs the control communicator.
// The C API only (OpenMPI would pull in its C++ bindings, which need their own library).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#include <nccl.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

#include "cuda_emu/emu_internal.h"

struct ncclComm {
  MPI_Comm mpi = MPI_COMM_NULL;
  int rank = 0, size = 0;
  std::atomic<bool> aborted{false};
  std::atomic<int> async_error{ncclSuccess};
};

namespace {

// Calls made inside a group, per host thread (NCCL's groups are per thread too).
thread_local int t_group_depth = 0;
thread_local std::vector<std::pair<cudaStream_t, arc::cuda_emu::StreamItem>> t_group;

MPI_Datatype mpi_type(ncclDataType_t t) {
  switch (t) {
    case ncclInt8:
      return MPI_INT8_T;
    case ncclInt32:
      return MPI_INT32_T;
    case ncclFloat32:
      return MPI_FLOAT;
  }
  return MPI_DATATYPE_NULL;
}

size_t type_bytes(ncclDataType_t t) {
  return t == ncclInt8 ? 1 : 4;
}

MPI_Op mpi_op(ncclRedOp_t op) {
  switch (op) {
    case ncclSum:
      return MPI_SUM;
    case ncclProd:
      return MPI_PROD;
    case ncclMax:
      return MPI_MAX;
    case ncclMin:
      return MPI_MIN;
  }
  return MPI_OP_NULL;
}

// Device buffers must be device allocations, as NCCL requires.
bool device_range(const void* p, size_t bytes) {
  return bytes == 0 || arc::cuda_emu::classify(p, bytes) == arc::cuda_emu::MemKind::kDevice;
}

ncclResult_t submit(cudaStream_t stream, arc::cuda_emu::StreamItem item) {
  if (t_group_depth > 0) {
    t_group.emplace_back(stream, std::move(item));
    return ncclSuccess;
  }
  return arc::cuda_emu::enqueue(stream, std::move(item)) == cudaSuccess ? ncclSuccess
                                                                        : ncclUnhandledCudaError;
}

void record(ncclComm* c, int rc) {
  if (rc != MPI_SUCCESS) c->async_error = ncclSystemError;
}

}  // namespace

const char* ncclGetErrorString(ncclResult_t r) {
  switch (r) {
    case ncclSuccess:
      return "no error";
    case ncclUnhandledCudaError:
      return "unhandled cuda error (emulated NCCL)";
    case ncclSystemError:
      return "unhandled system error (emulated NCCL over MPI)";
    case ncclInternalError:
      return "internal error (emulated NCCL)";
    case ncclInvalidArgument:
      return "invalid argument (emulated NCCL)";
    case ncclInvalidUsage:
      return "invalid usage (emulated NCCL)";
    case ncclRemoteError:
      return "remote process exited or there was a network error";
    case ncclInProgress:
      return "NCCL operation in progress";
  }
  return "unknown NCCL result";
}

ncclResult_t ncclGetUniqueId(ncclUniqueId* id) {
  if (id == nullptr) return ncclInvalidArgument;
  std::random_device rd;
  for (char& c : id->internal) c = static_cast<char>(rd());
  return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId, int rank) {
  if (comm == nullptr) return ncclInvalidArgument;
  int initialized = 0, world = 0, me = 0;
  MPI_Initialized(&initialized);
  if (!initialized) return ncclInvalidUsage;  // the emulation rides on the job's MPI
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  if (nranks != world || rank != me) return ncclInvalidUsage;  // only world-wide communicators
  auto* c = new ncclComm;
  if (MPI_Comm_dup(MPI_COMM_WORLD, &c->mpi) != MPI_SUCCESS) {
    delete c;
    return ncclSystemError;
  }
  c->rank = rank;
  c->size = nranks;
  *comm = c;
  return ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  if (comm == nullptr) return ncclInvalidArgument;
  arc::cuda_emu::device_wait_idle();  // collectives still queued use the communicator
  if (!comm->aborted) MPI_Comm_free(&comm->mpi);
  delete comm;
  return ncclSuccess;
}

ncclResult_t ncclCommAbort(ncclComm_t comm) {
  if (comm == nullptr) return ncclInvalidArgument;
  // A collective blocked in MPI cannot be cancelled: the communicator is left to the process's
  // end (MPI aborts the job when a rank dies). Queued collectives are skipped.
  comm->aborted = true;
  return ncclSuccess;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* async_error) {
  if (comm == nullptr || async_error == nullptr) return ncclInvalidArgument;
  *async_error = static_cast<ncclResult_t>(comm->async_error.load());
  return ncclSuccess;
}

ncclResult_t ncclCommUserRank(ncclComm_t comm, int* rank) {
  if (comm == nullptr || rank == nullptr) return ncclInvalidArgument;
  *rank = comm->rank;
  return ncclSuccess;
}

ncclResult_t ncclCommCount(ncclComm_t comm, int* count) {
  if (comm == nullptr || count == nullptr) return ncclInvalidArgument;
  *count = comm->size;
  return ncclSuccess;
}

ncclResult_t ncclAllReduce(const void* send, void* recv, size_t count, ncclDataType_t type,
                           ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  const size_t bytes = count * type_bytes(type);
  if (comm == nullptr || mpi_type(type) == MPI_DATATYPE_NULL || mpi_op(op) == MPI_OP_NULL ||
      !device_range(send, bytes) || !device_range(recv, bytes)) {
    return ncclInvalidArgument;
  }
  return submit(stream, [=] {
    if (comm->aborted) return;
    const void* src = send == recv ? MPI_IN_PLACE : send;
    record(comm, MPI_Allreduce(src, recv, static_cast<int>(count), mpi_type(type), mpi_op(op),
                               comm->mpi));
  });
}

ncclResult_t ncclBroadcast(const void* send, void* recv, size_t count, ncclDataType_t type,
                           int root, ncclComm_t comm, cudaStream_t stream) {
  const size_t bytes = count * type_bytes(type);
  if (comm == nullptr || root < 0 || root >= comm->size || mpi_type(type) == MPI_DATATYPE_NULL ||
      !device_range(recv, bytes) || (comm->rank == root && !device_range(send, bytes))) {
    return ncclInvalidArgument;
  }
  return submit(stream, [=] {
    if (comm->aborted) return;
    if (comm->rank == root && send != recv) std::memmove(recv, send, bytes);
    record(comm, MPI_Bcast(recv, static_cast<int>(count), mpi_type(type), root, comm->mpi));
  });
}

ncclResult_t ncclAllGather(const void* send, void* recv, size_t count, ncclDataType_t type,
                           ncclComm_t comm, cudaStream_t stream) {
  const size_t bytes = count * type_bytes(type);
  if (comm == nullptr || mpi_type(type) == MPI_DATATYPE_NULL || !device_range(send, bytes) ||
      !device_range(recv, bytes * static_cast<size_t>(comm->size))) {
    return ncclInvalidArgument;
  }
  return submit(stream, [=] {
    if (comm->aborted) return;
    const bool in_place = static_cast<const char*>(send) ==
                          static_cast<const char*>(recv) + bytes * static_cast<size_t>(comm->rank);
    record(comm,
           MPI_Allgather(in_place ? MPI_IN_PLACE : send, static_cast<int>(count), mpi_type(type),
                         recv, static_cast<int>(count), mpi_type(type), comm->mpi));
  });
}

ncclResult_t ncclGroupStart() {
  ++t_group_depth;
  return ncclSuccess;
}

ncclResult_t ncclGroupEnd() {
  if (t_group_depth == 0) return ncclInvalidUsage;
  if (--t_group_depth > 0) return ncclSuccess;
  std::vector<std::pair<cudaStream_t, arc::cuda_emu::StreamItem>> calls;
  calls.swap(t_group);
  for (auto& [stream, item] : calls) {
    if (arc::cuda_emu::enqueue(stream, std::move(item)) != cudaSuccess) {
      return ncclUnhandledCudaError;
    }
  }
  return ncclSuccess;
}
