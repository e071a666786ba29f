// Emulated streams, events, stream capture and CUDA graphs. Each stream has its own thread that
// runs its work in order, so the host really runs ahead of the device and a missing
// synchronisation shows. The legacy default stream (nullptr) waits for, and is waited for by, the
// streams created without cudaStreamNonBlocking, as the CUDA runtime specifies.
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "cuda_emu/emu_internal.h"

struct CUgraph_st {
  std::vector<arc::cuda_emu::StreamItem> nodes;
};
struct CUgraphExec_st {
  std::vector<arc::cuda_emu::StreamItem> nodes;
};

struct CUstream_st {
  unsigned flags = 0;
  bool is_null = false;
  std::mutex mu;
  std::condition_variable cv, idle_cv;
  std::deque<arc::cuda_emu::StreamItem> queue;
  uint64_t submitted = 0, completed = 0;
  bool stop = false;
  std::thread worker;
  // Capture (guarded by the registry's mutex).
  bool capturing = false;
  bool capture_invalidated = false;
  cudaStreamCaptureMode capture_mode = cudaStreamCaptureModeGlobal;
  std::thread::id capture_thread;
  CUgraph_st* graph = nullptr;
};

struct CUevent_st {
  std::mutex mu;
  std::condition_variable cv;
  uint64_t recorded = 0, done = 0;
  std::chrono::steady_clock::time_point when;
  unsigned flags = 0;
};

namespace arc::cuda_emu {
namespace {

void stream_loop(CUstream_st* s) {
  std::unique_lock<std::mutex> lock(s->mu);
  for (;;) {
    s->cv.wait(lock, [&] { return s->stop || !s->queue.empty(); });
    if (s->queue.empty()) return;  // stopping and drained
    StreamItem item = std::move(s->queue.front());
    s->queue.pop_front();
    lock.unlock();
    item();
    lock.lock();
    ++s->completed;
    s->idle_cv.notify_all();
  }
}

// Every live stream (the emulated context's): for the default stream's implicit synchronisation,
// cudaDeviceSynchronize and capture rules. Never destroyed: stream threads may outlive main().
struct Registry {
  std::mutex mu;
  std::set<CUstream_st*> streams;
  CUstream_st* null_stream = nullptr;
};
Registry& registry() {
  static Registry* r = new Registry;
  return *r;
}

CUstream_st* start_stream(unsigned flags, bool is_null) {
  auto* s = new CUstream_st;
  s->flags = flags;
  s->is_null = is_null;
  s->worker = std::thread(stream_loop, s);
  return s;
}

CUstream_st* resolve_stream(cudaStream_t s) {
  if (s != nullptr) return s;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  if (r.null_stream == nullptr) {
    r.null_stream = start_stream(cudaStreamDefault, true);
    r.streams.insert(r.null_stream);
  }
  return r.null_stream;
}

uint64_t submitted_of(CUstream_st* s) {
  std::lock_guard<std::mutex> lock(s->mu);
  return s->submitted;
}

void wait_ticket(CUstream_st* s, uint64_t ticket) {
  std::unique_lock<std::mutex> lock(s->mu);
  s->idle_cv.wait(lock, [&] { return s->completed >= ticket; });
}

void push(CUstream_st* s, StreamItem item) {
  {
    std::lock_guard<std::mutex> lock(s->mu);
    s->queue.push_back(std::move(item));
    ++s->submitted;
  }
  s->cv.notify_one();
}

}  // namespace

cudaError_t enqueue(cudaStream_t handle, StreamItem item, bool capturable) {
  CUstream_st* s = resolve_stream(handle);
  Registry& r = registry();
  std::vector<std::pair<CUstream_st*, uint64_t>> waits;
  {
    std::lock_guard<std::mutex> lock(r.mu);
    if (s->capturing) {
      if (!capturable) {
        s->capture_invalidated = true;
        return cudaErrorStreamCaptureUnsupported;
      }
      if (s->capture_invalidated) return cudaErrorStreamCaptureInvalidated;
      s->graph->nodes.push_back(std::move(item));
      return cudaSuccess;
    }
    // The legacy default stream and the blocking streams wait for each other's earlier work.
    if (s->is_null) {
      for (CUstream_st* o : r.streams)
        if (o != s && !(o->flags & cudaStreamNonBlocking)) waits.emplace_back(o, 0);
    } else if (!(s->flags & cudaStreamNonBlocking) && r.null_stream != nullptr) {
      waits.emplace_back(r.null_stream, 0);
    }
  }
  for (auto& [o, ticket] : waits) ticket = submitted_of(o);
  std::erase_if(waits, [](const auto& w) { return w.second == 0; });
  if (!waits.empty()) {
    push(s, [waits] {
      for (const auto& [o, ticket] : waits) wait_ticket(o, ticket);
    });
  }
  push(s, std::move(item));
  return cudaSuccess;
}

cudaError_t stream_wait_idle(cudaStream_t handle) {
  CUstream_st* s = resolve_stream(handle);
  wait_ticket(s, submitted_of(s));
  return cudaSuccess;
}

void device_wait_idle() {
  std::vector<CUstream_st*> all;
  {
    std::lock_guard<std::mutex> lock(registry().mu);
    all.assign(registry().streams.begin(), registry().streams.end());
  }
  for (CUstream_st* s : all) wait_ticket(s, submitted_of(s));
}

bool capturing(cudaStream_t handle) {
  if (handle == nullptr) return false;
  std::lock_guard<std::mutex> lock(registry().mu);
  return handle->capturing;
}

bool forbidden_during_capture() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  const auto me = std::this_thread::get_id();
  bool forbidden = false;
  for (CUstream_st* s : r.streams) {
    if (!s->capturing || s->capture_mode == cudaStreamCaptureModeRelaxed) continue;
    if (s->capture_thread == me || s->capture_mode == cudaStreamCaptureModeGlobal) {
      s->capture_invalidated = true;
      forbidden = true;
    }
  }
  return forbidden;
}

}  // namespace arc::cuda_emu

using namespace arc::cuda_emu;

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned flags) {
  if (stream == nullptr) return api_result(cudaErrorInvalidValue);
  if (cudaError_t e = api_result(cudaSuccess); e != cudaSuccess) return e;
  CUstream_st* s = start_stream(flags, false);
  std::lock_guard<std::mutex> lock(registry().mu);
  registry().streams.insert(s);
  *stream = s;
  return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t* stream) {
  return cudaStreamCreateWithFlags(stream, cudaStreamDefault);
}

cudaError_t cudaStreamDestroy(cudaStream_t s) {
  if (s == nullptr) return api_result(cudaErrorInvalidResourceHandle);
  {
    std::lock_guard<std::mutex> lock(registry().mu);
    if (registry().streams.erase(s) == 0) return api_result(cudaErrorInvalidResourceHandle);
    delete s->graph;
  }
  // Work already enqueued completes first (as the runtime does); then the thread ends.
  {
    std::lock_guard<std::mutex> lock(s->mu);
    s->stop = true;
  }
  s->cv.notify_one();
  s->worker.join();
  delete s;
  return api_result(cudaSuccess);
}

cudaError_t cudaStreamSynchronize(cudaStream_t s) {
  if (capturing(s)) {
    forbidden_during_capture();
    return api_result(cudaErrorStreamCaptureUnsupported);
  }
  if (forbidden_during_capture()) return api_result(cudaErrorStreamCaptureUnsupported);
  stream_wait_idle(s);
  return api_result(cudaSuccess);
}

cudaError_t cudaStreamQuery(cudaStream_t handle) {
  if (capturing(handle)) return api_result(cudaErrorStreamCaptureUnsupported);
  CUstream_st* s = resolve_stream(handle);
  std::lock_guard<std::mutex> lock(s->mu);
  if (sticky_error() != cudaSuccess) return sticky_error();
  return s->completed >= s->submitted ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t cudaDeviceSynchronize() {
  if (forbidden_during_capture()) return api_result(cudaErrorStreamCaptureUnsupported);
  device_wait_idle();
  return api_result(cudaSuccess);
}

// ---- events ----
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned flags) {
  if (event == nullptr) return api_result(cudaErrorInvalidValue);
  auto* e = new CUevent_st;
  e->flags = flags;
  *event = e;
  return api_result(cudaSuccess);
}

cudaError_t cudaEventCreate(cudaEvent_t* event) {
  return cudaEventCreateWithFlags(event, cudaEventDefault);
}

cudaError_t cudaEventDestroy(cudaEvent_t e) {
  if (e == nullptr) return api_result(cudaErrorInvalidResourceHandle);
  {
    // Pending records still reference the event: wait for them (destroying early is allowed by
    // the API, which releases the event once its work completes).
    std::unique_lock<std::mutex> lock(e->mu);
    e->cv.wait(lock, [&] { return e->done >= e->recorded; });
  }
  delete e;
  return api_result(cudaSuccess);
}

cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) {
  if (e == nullptr) return api_result(cudaErrorInvalidResourceHandle);
  if (capturing(s)) return api_result(cudaSuccess);  // a dependency marker inside the capture
  uint64_t ticket;
  {
    std::lock_guard<std::mutex> lock(e->mu);
    ticket = ++e->recorded;
  }
  const cudaError_t err = enqueue(
      s,
      [e, ticket] {
        std::lock_guard<std::mutex> lock(e->mu);
        if (ticket > e->done) {
          e->done = ticket;
          e->when = std::chrono::steady_clock::now();
        }
        e->cv.notify_all();
      },
      true);
  return api_result(err);
}

cudaError_t cudaEventSynchronize(cudaEvent_t e) {
  if (e == nullptr) return api_result(cudaErrorInvalidResourceHandle);
  if (forbidden_during_capture()) return api_result(cudaErrorStreamCaptureUnsupported);
  std::unique_lock<std::mutex> lock(e->mu);
  const uint64_t target = e->recorded;
  e->cv.wait(lock, [&] { return e->done >= target; });
  lock.unlock();
  return api_result(cudaSuccess);
}

cudaError_t cudaEventQuery(cudaEvent_t e) {
  if (e == nullptr) return api_result(cudaErrorInvalidResourceHandle);
  std::lock_guard<std::mutex> lock(e->mu);
  return e->done >= e->recorded ? api_result(cudaSuccess) : cudaErrorNotReady;
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t a, cudaEvent_t b) {
  if (ms == nullptr || a == nullptr || b == nullptr) return api_result(cudaErrorInvalidValue);
  if ((a->flags | b->flags) & cudaEventDisableTiming) {
    return api_result(cudaErrorInvalidResourceHandle);
  }
  std::scoped_lock lock(a->mu, b->mu);
  if (a->done == 0 || b->done == 0) return api_result(cudaErrorInvalidResourceHandle);
  if (a->done < a->recorded || b->done < b->recorded) return cudaErrorNotReady;
  *ms = std::chrono::duration<float, std::milli>(b->when - a->when).count();
  return api_result(cudaSuccess);
}

cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned) {
  if (e == nullptr) return api_result(cudaErrorInvalidResourceHandle);
  if (capturing(s)) return api_result(cudaSuccess);
  uint64_t target;
  {
    std::lock_guard<std::mutex> lock(e->mu);
    target = e->recorded;
  }
  if (target == 0) return api_result(cudaSuccess);
  return api_result(enqueue(
      s,
      [e, target] {
        std::unique_lock<std::mutex> lock(e->mu);
        e->cv.wait(lock, [&] { return e->done >= target; });
      },
      true));
}

// ---- capture and graphs ----
cudaError_t cudaStreamBeginCapture(cudaStream_t s, cudaStreamCaptureMode mode) {
  if (s == nullptr) return api_result(cudaErrorStreamCaptureUnsupported);  // legacy stream
  if (cudaError_t e = api_result(cudaSuccess); e != cudaSuccess) return e;
  std::lock_guard<std::mutex> lock(registry().mu);
  if (s->capturing) return api_result(cudaErrorInvalidValue);
  s->capturing = true;
  s->capture_invalidated = false;
  s->capture_mode = mode;
  s->capture_thread = std::this_thread::get_id();
  s->graph = new CUgraph_st;
  return cudaSuccess;
}

cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t* graph) {
  if (s == nullptr || graph == nullptr) return api_result(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lock(registry().mu);
  *graph = nullptr;
  if (!s->capturing) return api_result(cudaErrorInvalidValue);
  if (s->capture_mode != cudaStreamCaptureModeRelaxed &&
      s->capture_thread != std::this_thread::get_id()) {
    return api_result(cudaErrorStreamCaptureWrongThread);
  }
  s->capturing = false;
  CUgraph_st* g = s->graph;
  s->graph = nullptr;
  if (s->capture_invalidated) {
    delete g;
    return api_result(cudaErrorStreamCaptureInvalidated);
  }
  *graph = g;
  return api_result(cudaSuccess);
}

cudaError_t cudaStreamIsCapturing(cudaStream_t s, cudaStreamCaptureStatus* status) {
  if (status == nullptr) return api_result(cudaErrorInvalidValue);
  *status = cudaStreamCaptureStatusNone;
  if (s == nullptr) return api_result(cudaSuccess);
  std::lock_guard<std::mutex> lock(registry().mu);
  if (s->capturing) {
    *status =
        s->capture_invalidated ? cudaStreamCaptureStatusInvalidated : cudaStreamCaptureStatusActive;
  }
  return api_result(cudaSuccess);
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long) {
  if (exec == nullptr || graph == nullptr) return api_result(cudaErrorInvalidValue);
  auto* x = new CUgraphExec_st;
  x->nodes = graph->nodes;
  *exec = x;
  return api_result(cudaSuccess);
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t s) {
  if (exec == nullptr) return api_result(cudaErrorInvalidResourceHandle);
  if (cudaError_t e = api_result(cudaSuccess); e != cudaSuccess) return e;
  for (const StreamItem& node : exec->nodes) {
    if (cudaError_t e = enqueue(s, node, true); e != cudaSuccess) return api_result(e);
  }
  return cudaSuccess;
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  delete graph;
  return cudaSuccess;
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
  delete exec;
  return cudaSuccess;
}
