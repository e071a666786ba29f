// MpiCommunicator: MPI collectives on a duplicate of MPI_COMM_WORLD, with a watchdog that
// aborts the job when one collective outlives its deadline (a dead or hung peer).
// C API only (Open MPI would otherwise pull in its deprecated C++ bindings).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "arc/communicator.h"
#include "arc/log.h"

namespace arc {
namespace {

std::string mpi_error(int code) {
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, msg, &len);
  return std::string(msg, static_cast<size_t>(len));
}

}  // namespace

Result<std::unique_ptr<MpiSession>> MpiSession::init(int* argc, char*** argv) {
  int provided = 0;
  int rc = MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
  if (rc != MPI_SUCCESS) return internal_error("MPI_Init_thread failed: " + mpi_error(rc));
  std::unique_ptr<MpiSession> s(new MpiSession());
  MPI_Comm_rank(MPI_COMM_WORLD, &s->rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &s->size_);
  if (provided < MPI_THREAD_MULTIPLE) {
    // The watchdog calls MPI_Abort from its own thread; Open MPI's abort works regardless.
    logger("dist")->debug("MPI provides thread level {} (< MULTIPLE)", provided);
  }
  return s;
}

MpiSession::~MpiSession() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

struct MpiCommunicator::Impl {
  MPI_Comm comm = MPI_COMM_NULL;
  std::chrono::milliseconds deadline{60000};
  std::mutex mu;
  std::condition_variable cv;
  bool stop = false;
  const char* in_flight = nullptr;  // the collective now running, null when none
  std::chrono::steady_clock::time_point started;
  std::chrono::milliseconds limit{60000};  // of the collective in flight
  std::thread watchdog;

  // Faults (guarded by mu).
  FaultHandler on_fault;
  std::chrono::milliseconds grace{0};
  std::string fault;  // non-empty once a collective missed its deadline
  std::chrono::steady_clock::time_point abort_at;

  void watch() {
    std::unique_lock<std::mutex> lock(mu);
    while (!stop) {
      cv.wait_for(lock, std::chrono::milliseconds(100));
      const auto now = std::chrono::steady_clock::now();
      if (!fault.empty()) {
        if (now < abort_at) continue;
        logger("dist")->error("{}; aborting the job now", fault);
        MPI_Abort(comm, 3);
        continue;
      }
      if (in_flight == nullptr || now - started <= limit) continue;
      int rank = 0;
      MPI_Comm_rank(comm, &rank);
      fault = "rank " + std::to_string(rank) + ": " + in_flight + " did not complete within " +
              fmt_seconds(limit) +
              ": another rank died or hangs (check every rank's log, the hostfile and the "
              "network between the boxes)";
      logger("dist")->error("{}", fault);
      if (!on_fault) {
        MPI_Abort(comm, 3);
        continue;
      }
      abort_at = now + grace;
      FaultHandler h = on_fault;
      const std::string why = fault;
      lock.unlock();
      h(why);
      lock.lock();
    }
  }

  static std::string fmt_seconds(std::chrono::milliseconds d) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f s", static_cast<double>(d.count()) / 1000.0);
    return buf;
  }

  // Runs one collective under the watchdog.
  template <typename F>
  Status guarded(const char* what, F&& f) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (!fault.empty()) return unavailable(fault);
      in_flight = what;
      started = std::chrono::steady_clock::now();
      limit = deadline;
    }
    int rc = f();
    {
      std::lock_guard<std::mutex> lock(mu);
      in_flight = nullptr;
    }
    if (rc != MPI_SUCCESS) {
      return unavailable(std::string(what) + " failed: " + mpi_error(rc) +
                         " (a peer rank probably died)");
    }
    return ok_status();
  }
};

Result<std::unique_ptr<MpiCommunicator>> MpiCommunicator::create(
    const MpiSession& session, std::chrono::milliseconds deadline) {
  auto impl = std::make_unique<Impl>();
  int rc = MPI_Comm_dup(MPI_COMM_WORLD, &impl->comm);
  if (rc != MPI_SUCCESS) return internal_error("MPI_Comm_dup failed: " + mpi_error(rc));
  MPI_Comm_set_errhandler(impl->comm, MPI_ERRORS_RETURN);
  impl->deadline = deadline;
  Impl* p = impl.get();
  impl->watchdog = std::thread([p] { p->watch(); });
  std::unique_ptr<MpiCommunicator> c(new MpiCommunicator(std::move(impl)));
  return c;
}

MpiCommunicator::MpiCommunicator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {
  MPI_Comm_rank(impl_->comm, &rank_);
  MPI_Comm_size(impl_->comm, &size_);
}

MpiCommunicator::~MpiCommunicator() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stop = true;
  }
  impl_->cv.notify_all();
  if (impl_->watchdog.joinable()) impl_->watchdog.join();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Comm_free(&impl_->comm);
}

Status MpiCommunicator::all_reduce_sum(float* data, int64_t n) {
  if (n > INT32_MAX) return invalid_argument("all_reduce_sum: more than 2^31 floats");
  auto t0 = std::chrono::steady_clock::now();
  Status s = impl_->guarded("MPI_Allreduce", [&] {
    return MPI_Allreduce(MPI_IN_PLACE, data, static_cast<int>(n), MPI_FLOAT, MPI_SUM, impl_->comm);
  });
  stats_.all_reduce_calls += 1;
  stats_.all_reduce_bytes += static_cast<uint64_t>(n) * sizeof(float);
  stats_.all_reduce_seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return s;
}

Status MpiCommunicator::all_gather(const float* send, std::span<const int64_t> counts,
                                   float* recv) {
  if (static_cast<int>(counts.size()) != size_) {
    return invalid_argument("all_gather: one count per rank expected");
  }
  std::vector<int> cnt(counts.size()), displ(counts.size());
  int64_t off = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (off + counts[i] > INT32_MAX) return invalid_argument("all_gather: too many floats");
    cnt[i] = static_cast<int>(counts[i]);
    displ[i] = static_cast<int>(off);
    off += counts[i];
  }
  return impl_->guarded("MPI_Allgatherv", [&] {
    return MPI_Allgatherv(send, cnt[static_cast<size_t>(rank_)], MPI_FLOAT, recv, cnt.data(),
                          displ.data(), MPI_FLOAT, impl_->comm);
  });
}

Status MpiCommunicator::broadcast(void* data, int64_t bytes, int root) {
  if (bytes > INT32_MAX) return invalid_argument("broadcast: more than 2 GiB");
  // Non-blocking underneath, like broadcast_no_deadline: MPI never matches a blocking
  // collective with a non-blocking one, and a message may be sent by one and received by the
  // other (rank 0's steps, a waiting worker).
  return impl_->guarded("MPI_Bcast", [&] {
    MPI_Request req = MPI_REQUEST_NULL;
    int rc = MPI_Ibcast(data, static_cast<int>(bytes), MPI_BYTE, root, impl_->comm, &req);
    if (rc != MPI_SUCCESS) return rc;
    return MPI_Wait(&req, MPI_STATUS_IGNORE);
  });
}

Status MpiCommunicator::broadcast_no_deadline(void* data, int64_t bytes, int root) {
  if (bytes > INT32_MAX) return invalid_argument("broadcast: more than 2 GiB");
  MPI_Request req = MPI_REQUEST_NULL;
  int rc = MPI_Ibcast(data, static_cast<int>(bytes), MPI_BYTE, root, impl_->comm, &req);
  if (rc != MPI_SUCCESS) return unavailable("MPI_Ibcast failed: " + mpi_error(rc));
  // Open MPI's blocking calls busy-poll: a worker waiting hours for the next request would keep
  // a core at 100%. Poll instead: freely for the first millisecond (steps follow each other
  // closely while decoding), then with sleeps growing to 5 ms.
  const auto t0 = std::chrono::steady_clock::now();
  auto nap = std::chrono::microseconds(50);
  for (;;) {
    int done = 0;
    rc = MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) return unavailable("MPI_Ibcast failed: " + mpi_error(rc));
    if (done) return ok_status();
    if (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(1)) continue;
    std::this_thread::sleep_for(nap);
    nap = std::min(nap * 2, std::chrono::microseconds(5000));
  }
}

Status MpiCommunicator::broadcast_within(void* data, int64_t bytes, int root,
                                         std::chrono::milliseconds timeout) {
  if (bytes > INT32_MAX) return invalid_argument("broadcast: more than 2 GiB");
  Impl& m = *impl_;
  {
    std::lock_guard<std::mutex> lock(m.mu);
    if (!m.fault.empty()) return unavailable(m.fault);
    m.in_flight = "MPI_Bcast (every rank's load outcome)";
    m.started = std::chrono::steady_clock::now();
    m.limit = timeout;  // the watchdog declares the fault, as for any collective
  }
  MPI_Request req = MPI_REQUEST_NULL;
  int rc = MPI_Ibcast(data, static_cast<int>(bytes), MPI_BYTE, root, m.comm, &req);
  auto nap = std::chrono::microseconds(50);
  while (rc == MPI_SUCCESS) {
    int done = 0;
    rc = MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS || done) break;
    {
      // Past the timeout: the request stays pending (MPI cannot cancel it); the job ends.
      std::lock_guard<std::mutex> lock(m.mu);
      if (!m.fault.empty()) return unavailable(m.fault);
    }
    std::this_thread::sleep_for(nap);
    nap = std::min(nap * 2, std::chrono::microseconds(20000));
  }
  {
    std::lock_guard<std::mutex> lock(m.mu);
    m.in_flight = nullptr;
  }
  if (rc != MPI_SUCCESS) return unavailable("MPI_Ibcast failed: " + mpi_error(rc));
  return ok_status();
}

void MpiCommunicator::set_fault_handler(FaultHandler handler, std::chrono::milliseconds grace) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->on_fault = std::move(handler);
  impl_->grace = grace;
}

Status MpiCommunicator::barrier() {
  return impl_->guarded("MPI_Barrier", [&] { return MPI_Barrier(impl_->comm); });
}

}  // namespace arc
