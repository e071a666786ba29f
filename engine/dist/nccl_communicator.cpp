// NcclCommunicator: ncclAllReduce / grouped ncclBroadcast on device memory, each waited for
// under a deadline (polling the stream, so a dead peer can be abandoned with ncclCommAbort).
#include "arc/nccl_communicator.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "arc/log.h"

namespace arc {

struct NcclCommunicator::Impl {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  int device = 0;
  std::chrono::milliseconds deadline{60000};
  std::mutex mu;
  FaultHandler on_fault;
  std::string fault;  // non-empty once aborted

  // Stream-ordered mode: event pairs around the all-reduces enqueued since the last settle().
  bool ordered = false;
  std::vector<std::pair<cudaEvent_t, cudaEvent_t>> events;
  size_t events_used = 0;

  ~Impl() {
    for (auto& [a, b] : events) {
      cudaEventDestroy(a);
      cudaEventDestroy(b);
    }
  }

  // The next free event pair, or null events when none can be created (timing is skipped).
  std::pair<cudaEvent_t, cudaEvent_t> next_events() {
    if (events_used == events.size()) {
      cudaEvent_t a = nullptr, b = nullptr;
      if (cudaEventCreate(&a) != cudaSuccess || cudaEventCreate(&b) != cudaSuccess) {
        cudaGetLastError();
        if (a != nullptr) cudaEventDestroy(a);
        return {nullptr, nullptr};
      }
      events.emplace_back(a, b);
    }
    return events[events_used++];
  }

  // Waits for the collective just queued on the stream.
  Status wait(const char* what) {
    const auto t0 = std::chrono::steady_clock::now();
    auto nap = std::chrono::microseconds(20);
    for (;;) {
      cudaError_t e = cudaStreamQuery(stream);
      if (e == cudaSuccess) return ok_status();
      if (e != cudaErrorNotReady) {
        return internal_error(std::string(what) + ": " + cudaGetErrorString(e));
      }
      ncclResult_t async = ncclSuccess;
      ncclCommGetAsyncError(comm, &async);
      if (async != ncclSuccess && async != ncclInProgress) {
        return fail(std::string(what) + " failed: " + ncclGetErrorString(async) +
                    " (a peer rank probably died)");
      }
      if (std::chrono::steady_clock::now() - t0 > deadline) {
        return fail("rank " + std::to_string(rank_of()) + ": " + what +
                    " did not complete within " + std::to_string(deadline.count() / 1000.0) +
                    " s: another rank died or hangs (check every rank's log and NCCL_DEBUG=INFO)");
      }
      std::this_thread::sleep_for(nap);
      nap = std::min(nap * 2, std::chrono::microseconds(1000));
    }
  }

  int rank_of() {
    int r = 0;
    if (comm != nullptr) ncclCommUserRank(comm, &r);
    return r;
  }

  // Aborts the communicator (unblocking the stream) and reports the fault once.
  Status fail(const std::string& why) {
    FaultHandler h;
    {
      std::lock_guard<std::mutex> lock(mu);
      if (fault.empty()) {
        fault = why;
        h = on_fault;
        logger("dist")->error("{}", why);
        ncclCommAbort(comm);
        comm = nullptr;
      }
    }
    if (h) h(why);
    return unavailable(why);
  }

  Status check(ncclResult_t r, const char* what) {
    if (r == ncclSuccess) return ok_status();
    return fail(std::string(what) + " failed: " + ncclGetErrorString(r));
  }

  Status broken() {
    std::lock_guard<std::mutex> lock(mu);
    return fault.empty() ? ok_status() : unavailable(fault);
  }
};

Result<std::unique_ptr<NcclCommunicator>> NcclCommunicator::create(
    Communicator& control, int device, void* stream, std::chrono::milliseconds deadline) {
  auto impl = std::make_unique<Impl>();
  impl->device = device;
  impl->deadline = deadline;
  impl->stream = static_cast<cudaStream_t>(stream);
  // Every rank takes part in the same collectives whatever fails locally: a rank that returned
  // early would leave the others waiting in the next collective until the watchdog aborts the
  // job with a message that names the wait, not the cause.
  std::string why;  // this rank's failure
  if (cudaError_t e = cudaSetDevice(device); e != cudaSuccess) {
    cudaGetLastError();
    why = "CUDA device " + std::to_string(device) + ": " + cudaGetErrorString(e);
  }
  ncclUniqueId id;
  std::memset(&id, 0, sizeof(id));
  if (control.rank() == 0 && why.empty()) {
    if (ncclResult_t r = ncclGetUniqueId(&id); r != ncclSuccess) {
      why = std::string("ncclGetUniqueId: ") + ncclGetErrorString(r);
    }
  }
  float failed_ranks = why.empty() ? 0.0f : 1.0f;
  ARC_RETURN_IF_ERROR(
      control.all_reduce_sum(&failed_ranks, 1).with_context("agreeing to set up NCCL"));
  if (!why.empty()) return unavailable("rank " + std::to_string(control.rank()) + ": " + why);
  if (failed_ranks > 0.0f) {
    return unavailable(std::to_string(static_cast<int>(failed_ranks)) +
                       " other rank(s) could not set up CUDA or NCCL (their logs say why)");
  }
  ARC_RETURN_IF_ERROR(control.broadcast(&id, sizeof(id), 0).with_context("sending the NCCL id"));
  if (ncclResult_t r = ncclCommInitRank(&impl->comm, control.size(), id, control.rank());
      r != ncclSuccess) {
    return unavailable(std::string("ncclCommInitRank: ") + ncclGetErrorString(r) +
                       " (NCCL_DEBUG=INFO tells which transport failed)");
  }
  return std::unique_ptr<NcclCommunicator>(new NcclCommunicator(control, std::move(impl)));
}

NcclCommunicator::NcclCommunicator(Communicator& control, std::unique_ptr<Impl> impl)
    : control_(control), impl_(std::move(impl)) {}

NcclCommunicator::~NcclCommunicator() {
  if (impl_->comm != nullptr) ncclCommDestroy(impl_->comm);
}

Status NcclCommunicator::all_reduce_sum(float* data, int64_t n) {
  ARC_RETURN_IF_ERROR(impl_->broken());
  if (impl_->ordered) {
    // Inside a recorded decode step (a CUDA graph) the events would time nothing: the graph
    // replays the collective later, so only eager steps are timed.
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    const bool recording = cudaStreamIsCapturing(impl_->stream, &capture) == cudaSuccess &&
                           capture != cudaStreamCaptureStatusNone;
    auto [before, after] =
        recording ? std::pair<cudaEvent_t, cudaEvent_t>{nullptr, nullptr} : impl_->next_events();
    // The events only time the collective: a failed record must not leave its error behind for
    // the next kernel launch's check to report.
    if (before != nullptr && cudaEventRecord(before, impl_->stream) != cudaSuccess) {
      cudaGetLastError();
    }
    ARC_RETURN_IF_ERROR(impl_->check(ncclAllReduce(data, data, static_cast<size_t>(n), ncclFloat,
                                                   ncclSum, impl_->comm, impl_->stream),
                                     "ncclAllReduce"));
    if (after != nullptr && cudaEventRecord(after, impl_->stream) != cudaSuccess) {
      cudaGetLastError();
    }
    stats_.all_reduce_calls += 1;
    stats_.all_reduce_bytes += static_cast<uint64_t>(n) * sizeof(float);
    return ok_status();
  }
  const auto t0 = std::chrono::steady_clock::now();
  ARC_RETURN_IF_ERROR(impl_->check(ncclAllReduce(data, data, static_cast<size_t>(n), ncclFloat,
                                                 ncclSum, impl_->comm, impl_->stream),
                                   "ncclAllReduce"));
  Status s = impl_->wait("ncclAllReduce");
  stats_.all_reduce_calls += 1;
  stats_.all_reduce_bytes += static_cast<uint64_t>(n) * sizeof(float);
  stats_.all_reduce_seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return s;
}

Status NcclCommunicator::all_gather(const float* send, std::span<const int64_t> counts,
                                    float* recv) {
  ARC_RETURN_IF_ERROR(impl_->broken());
  if (static_cast<int>(counts.size()) != size()) {
    return invalid_argument("all_gather: one count per rank expected");
  }
  // Counts may differ (the vocabulary split is uneven): one broadcast per rank, grouped.
  ARC_RETURN_IF_ERROR(impl_->check(ncclGroupStart(), "ncclGroupStart"));
  int64_t off = 0;
  for (int r = 0; r < size(); ++r) {
    const float* src = r == rank() ? send : nullptr;
    ncclResult_t res = ncclBroadcast(src, recv + off, static_cast<size_t>(counts[r]), ncclFloat, r,
                                     impl_->comm, impl_->stream);
    if (res != ncclSuccess) {
      ncclGroupEnd();
      return impl_->check(res, "ncclBroadcast");
    }
    off += counts[r];
  }
  ARC_RETURN_IF_ERROR(impl_->check(ncclGroupEnd(), "ncclGroupEnd"));
  if (impl_->ordered) return ok_status();
  return impl_->wait("ncclBroadcast (all-gather)");
}

void NcclCommunicator::set_stream_ordered(bool on) {
  impl_->ordered = on;
}

bool NcclCommunicator::on_stream() const {
  return impl_->ordered;
}

Status NcclCommunicator::settle() {
  if (!impl_->ordered) return ok_status();
  ARC_RETURN_IF_ERROR(impl_->broken());
  Status s = impl_->wait("a step's NCCL collectives");
  if (s.ok()) {
    for (size_t i = 0; i < impl_->events_used; ++i) {
      float ms = 0;
      if (cudaEventElapsedTime(&ms, impl_->events[i].first, impl_->events[i].second) ==
          cudaSuccess) {
        stats_.all_reduce_seconds += ms / 1000.0;
      }
    }
    cudaGetLastError();
  }
  impl_->events_used = 0;
  return s;
}

Status NcclCommunicator::broadcast(void* data, int64_t bytes, int root) {
  return control_.broadcast(data, bytes, root);
}

Status NcclCommunicator::broadcast_no_deadline(void* data, int64_t bytes, int root) {
  return control_.broadcast_no_deadline(data, bytes, root);
}

Status NcclCommunicator::barrier() {
  return control_.barrier();
}

void NcclCommunicator::set_fault_handler(FaultHandler handler, std::chrono::milliseconds grace) {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->on_fault = handler;
  }
  control_.set_fault_handler(std::move(handler), grace);
}

}  // namespace arc
