// Runs a kernel's grid: each block on one OS thread, each CUDA thread of it a fiber that runs
// until its next barrier or warp collective. Between those points the runnable fibers go in a
// seeded, shuffled order; then barriers and collectives whose participants have all arrived are
// resolved, and anything that can never complete is a fault naming the kernel (emulator.h).
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/context/fiber.hpp>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "cuda_emu/emu_internal.h"

namespace ctx = boost::context;

namespace arc::cuda_emu {
namespace {

constexpr size_t kStackBytes = size_t{128} << 10;  // per CUDA thread, guard page below
constexpr size_t kSharedArena = size_t{256} << 10;
constexpr size_t kStaticSharedMax = size_t{48} << 10;

// Fiber stacks of one OS thread, reused from block to block.
class StackPool {
 public:
  ~StackPool() {
    for (void* p : all_) munmap(p, kStackBytes);
  }
  ctx::stack_context take() {
    void* base;
    if (!free_.empty()) {
      base = free_.back();
      free_.pop_back();
    } else {
      base = mmap(nullptr, kStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (base == MAP_FAILED) throw std::bad_alloc();
      mprotect(base, static_cast<size_t>(sysconf(_SC_PAGESIZE)), PROT_NONE);  // overflow guard
      all_.push_back(base);
    }
    ctx::stack_context sc;
    sc.size = kStackBytes;
    sc.sp = static_cast<char*>(base) + kStackBytes;
    return sc;
  }
  void give(ctx::stack_context& sc) noexcept {
    free_.push_back(static_cast<char*>(sc.sp) - kStackBytes);
  }

 private:
  std::vector<void*> free_, all_;
};

struct PoolAllocator {
  StackPool* pool;
  ctx::stack_context allocate() { return pool->take(); }
  void deallocate(ctx::stack_context& sc) noexcept { pool->give(sc); }
};

enum class LaneState { kRunnable, kBarrier, kWarp, kExited, kFaulted };

struct Lane {
  ThreadState ts;
  ctx::fiber fiber;  // the CUDA thread (empty before its first resume and after it ends)
  ctx::fiber sched;  // the scheduler, while this lane runs
  LaneState state = LaneState::kRunnable;
  bool started = false;
  const char* op = nullptr;  // warp collective it waits at
  unsigned mask = 0;
  void* data = nullptr;
  WarpResolver resolve = nullptr;
};

struct SharedSlot {
  const void* key;
  size_t offset;
};

// Everything one OS thread needs to run blocks; reused across kernels.
struct BlockRunner {
  StackPool stacks;
  std::vector<Lane> lanes;
  std::vector<int> order;
  alignas(128) unsigned char shared[kSharedArena];
  std::vector<SharedSlot> slots;
  size_t dynamic_bytes = 0, static_end = 0;
  size_t dynamic_allowed = 0;
  const KernelJob* job = nullptr;
  std::string fault;
};

thread_local BlockRunner* t_runner = nullptr;
thread_local Lane* t_lane = nullptr;
thread_local ThreadState t_host_thread;  // what threadIdx reads outside a kernel

BlockRunner& runner() {
  if (t_runner == nullptr) {
    // Owned by the thread for its lifetime: one per stream thread or block worker.
    static thread_local std::unique_ptr<BlockRunner> owned(new BlockRunner);
    t_runner = owned.get();
  }
  return *t_runner;
}

// Back to the scheduler; returns when the scheduler resumes this lane.
void yield_lane() {
  Lane* me = t_lane;
  me->sched = std::move(me->sched).resume();
  t_lane = me;
}

std::string block_name(const KernelJob& job, const uint3& b) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "kernel %s, block (%u,%u,%u)", job.spec.name, b.x, b.y, b.z);
  return buf;
}

std::string lanes_text(unsigned bits) {
  std::string s;
  for (int i = 0; i < 32;) {
    if (!((bits >> i) & 1u)) {
      ++i;
      continue;
    }
    int j = i;
    while (j + 1 < 32 && ((bits >> (j + 1)) & 1u)) ++j;
    if (!s.empty()) s += ",";
    s += j == i ? std::to_string(i) : std::to_string(i) + "-" + std::to_string(j);
    i = j + 1;
  }
  return s;
}

// Resolves what can complete; returns true when some lane became runnable. Sets r.fault when
// something can never complete.
bool resolve(BlockRunner& r, int n) {
  bool progress = false;
  const int n_warps = (n + 31) / 32;
  for (int w = 0; w < n_warps && r.fault.empty(); ++w) {
    const int first = 32 * w, count = std::min(32, n - first);
    unsigned handled = 0;
    for (int l = 0; l < count && r.fault.empty(); ++l) {
      Lane& a = r.lanes[first + l];
      if (a.state != LaneState::kWarp || ((handled >> l) & 1u)) continue;
      const unsigned mask = a.mask;
      bool ready = true;
      for (int m = 0; m < 32; ++m) {
        if (!((mask >> m) & 1u)) continue;
        if (m >= count) {
          r.fault = a.op + std::string(": lane ") + std::to_string(m) + " of warp " +
                    std::to_string(w) + " named in mask 0x" +
                    [&] {
                      char b[16];
                      std::snprintf(b, sizeof b, "%08x", mask);
                      return std::string(b);
                    }() +
                    " does not exist (the block has " + std::to_string(n) + " threads)";
          break;
        }
        Lane& b = r.lanes[first + m];
        if (b.state == LaneState::kExited) {
          char buf[200];
          std::snprintf(buf, sizeof buf,
                        "%s (mask 0x%08x) in warp %d: lane %d named in the mask has exited", a.op,
                        mask, w, m);
          r.fault = buf;
          break;
        }
        // Still running towards it, at a barrier, or at another collective (lanes of one warp
        // may wait at different collectives with disjoint masks, e.g. a __match_any_sync among
        // the lanes a __ballot_sync chose while the others went on): not ready yet. If it never
        // becomes ready, the round makes no progress and the deadlock report names every lane.
        if (b.state != LaneState::kWarp || b.op != a.op || b.mask != mask ||
            b.resolve != a.resolve) {
          ready = false;
        }
      }
      if (!r.fault.empty() || !ready) continue;
      void* data[32] = {};
      for (int m = 0; m < 32; ++m)
        if ((mask >> m) & 1u) data[m] = r.lanes[first + m].data;
      a.resolve(data, mask);
      for (int m = 0; m < 32; ++m) {
        if (!((mask >> m) & 1u)) continue;
        r.lanes[first + m].state = LaneState::kRunnable;
        r.lanes[first + m].op = nullptr;
      }
      handled |= mask;
      progress = true;
    }
  }
  if (!r.fault.empty()) return false;
  int at_barrier = 0, exited = 0;
  for (int i = 0; i < n; ++i) {
    at_barrier += r.lanes[i].state == LaneState::kBarrier;
    exited += r.lanes[i].state == LaneState::kExited;
  }
  if (at_barrier > 0 && at_barrier + exited == n) {
    if (exited > 0) {
      r.fault = "__syncthreads reached by " + std::to_string(at_barrier) + " of " +
                std::to_string(n) + " threads; the other " + std::to_string(exited) +
                " exited without reaching it";
      return false;
    }
    for (int i = 0; i < n; ++i) r.lanes[i].state = LaneState::kRunnable;
    progress = true;
  }
  return progress;
}

std::string deadlock_text(BlockRunner& r, int n) {
  std::string s =
      "no thread can continue (a barrier or warp collective that some named thread "
      "never reaches):";
  for (int w = 0; w < (n + 31) / 32; ++w) {
    unsigned barrier = 0, exited = 0;
    std::vector<std::pair<std::string, unsigned>> ops;  // "op (mask)" -> lanes
    for (int l = 0; l < 32 && 32 * w + l < n; ++l) {
      const Lane& a = r.lanes[32 * w + l];
      if (a.state == LaneState::kBarrier) barrier |= 1u << l;
      if (a.state == LaneState::kExited) exited |= 1u << l;
      if (a.state == LaneState::kWarp) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "%s (mask 0x%08x)", a.op, a.mask);
        auto it = std::find_if(ops.begin(), ops.end(), [&](auto& o) { return o.first == buf; });
        if (it == ops.end())
          ops.emplace_back(buf, 1u << l);
        else
          it->second |= 1u << l;
      }
    }
    if (barrier == 0 && ops.empty()) continue;
    s += " warp " + std::to_string(w) + ": ";
    if (barrier) s += "lanes " + lanes_text(barrier) + " at __syncthreads; ";
    for (auto& [op, lanes] : ops) s += "lanes " + lanes_text(lanes) + " at " + op + "; ";
    if (exited) s += "lanes " + lanes_text(exited) + " exited;";
  }
  return s;
}

// Runs one block; false when it faulted (r.fault says why).
bool run_block(BlockRunner& r, const KernelJob& job, uint64_t block_linear) {
  const dim3 g = job.spec.grid, b = job.spec.block;
  const int n = static_cast<int>(b.x * b.y * b.z);
  uint3 bi;
  bi.x = static_cast<unsigned>(block_linear % g.x);
  bi.y = static_cast<unsigned>(block_linear / g.x % g.y);
  bi.z = static_cast<unsigned>(block_linear / (static_cast<uint64_t>(g.x) * g.y));
  r.job = &job;
  r.fault.clear();
  r.slots.clear();
  r.dynamic_bytes = job.spec.shared_bytes;
  r.static_end = (r.dynamic_bytes + 127) & ~size_t{127};
  std::memset(r.shared, 0xFF, std::min(r.dynamic_bytes, kSharedArena));
  if (r.lanes.size() < static_cast<size_t>(n)) r.lanes.resize(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    Lane& l = r.lanes[i];
    l.ts.thread_idx = {static_cast<unsigned>(i % b.x), static_cast<unsigned>(i / b.x % b.y),
                       static_cast<unsigned>(i / (b.x * b.y))};
    l.ts.block_idx = bi;
    l.ts.block_dim = b;
    l.ts.grid_dim = g;
    l.ts.linear = i;
    l.state = LaneState::kRunnable;
    l.started = false;
    l.op = nullptr;
  }
  std::mt19937_64 rng(settings().seed ^ (job.launch_id * 0x9E3779B97F4A7C15ull) ^
                      (block_linear * 0xBF58476D1CE4E5B9ull));
  const auto body = &job.body;
  for (;;) {
    r.order.clear();
    for (int i = 0; i < n; ++i)
      if (r.lanes[i].state == LaneState::kRunnable) r.order.push_back(i);
    std::shuffle(r.order.begin(), r.order.end(), rng);
    for (int i : r.order) {
      Lane& l = r.lanes[i];
      if (!l.started) {
        l.started = true;
        l.fiber = ctx::fiber(std::allocator_arg, PoolAllocator{&r.stacks},
                             [&l, body](ctx::fiber&& sched) {
                               l.sched = std::move(sched);
                               t_lane = &l;
                               (*body)();
                               l.state = LaneState::kExited;
                               return std::move(l.sched);
                             });
      }
      t_lane = &l;
      l.fiber = std::move(l.fiber).resume();
      t_lane = nullptr;
      if (!r.fault.empty()) break;
    }
    bool all_exited = r.fault.empty();
    for (int i = 0; i < n && all_exited; ++i) all_exited = r.lanes[i].state == LaneState::kExited;
    if (all_exited) return true;
    if (r.fault.empty() && !resolve(r, n) && r.fault.empty()) r.fault = deadlock_text(r, n);
    if (!r.fault.empty()) {
      r.fault = block_name(job, bi) + ": " + r.fault;
      for (int i = 0; i < n; ++i) r.lanes[i].fiber = ctx::fiber();  // unwinds what is suspended
      return false;
    }
  }
}

// Block workers shared by every stream: a grid is offered to them and the stream's own thread
// works on it too.
class WorkerPool {
 public:
  explicit WorkerPool(int helpers) {
    for (int i = 0; i < helpers; ++i) threads_.emplace_back([this] { loop(); });
  }
  ~WorkerPool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
  }
  // Runs fn on the calling thread and on up to `helpers` workers; returns when all are done.
  void run(const std::function<void()>& fn) {
    auto task = std::make_shared<Task>();
    task->fn = &fn;
    const int offers = static_cast<int>(threads_.size());
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (int i = 0; i < offers; ++i) queue_.push_back(task);
    }
    cv_.notify_all();
    fn();
    std::unique_lock<std::mutex> lock(mu_);
    // Offers nobody took yet are withdrawn; wait only for the workers that joined.
    queue_.erase(std::remove(queue_.begin(), queue_.end(), task), queue_.end());
    done_cv_.wait(lock, [&] { return task->active == 0; });
  }

 private:
  struct Task {
    const std::function<void()>* fn = nullptr;
    int active = 0;
  };
  void loop() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      auto task = queue_.front();
      queue_.pop_front();
      ++task->active;
      lock.unlock();
      (*task->fn)();
      lock.lock();
      --task->active;
      done_cv_.notify_all();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_, done_cv_;
  std::deque<std::shared_ptr<Task>> queue_;
  std::vector<std::thread> threads_;
  bool stop_ = false;
};

WorkerPool& workers() {
  // The emulated device's execution units: one pool per process, as there is one device.
  static WorkerPool pool(std::max(0, settings().threads - 1));
  return pool;
}

}  // namespace

ThreadState& current_thread() {
  return t_lane != nullptr ? t_lane->ts : t_host_thread;
}

void sync_threads() {
  Lane* me = t_lane;
  if (me == nullptr) return;  // host code
  me->state = LaneState::kBarrier;
  yield_lane();
}

void warp_collective(const char* what, unsigned mask, void* data, WarpResolver resolve) {
  Lane* me = t_lane;
  if (me == nullptr) return;
  const unsigned lane = static_cast<unsigned>(me->ts.linear) % 32u;
  if (!((mask >> lane) & 1u)) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s: lane %u calls it with mask 0x%08x that leaves it out", what,
                  lane, mask);
    kernel_fault(buf);
  }
  me->state = LaneState::kWarp;
  me->op = what;
  me->mask = mask;
  me->data = data;
  me->resolve = resolve;
  yield_lane();
}

void* shared_static(const void* key, size_t bytes, size_t align) {
  BlockRunner& r = runner();
  for (const SharedSlot& s : r.slots)
    if (s.key == key) return r.shared + s.offset;
  const size_t offset = (r.static_end + align - 1) / align * align;
  const size_t end = offset + bytes;
  const size_t static_total = end - ((r.dynamic_bytes + 127) & ~size_t{127});
  const DeviceSpec& d = device_spec();
  if (static_total > kStaticSharedMax) {
    kernel_fault("static shared memory of " + std::to_string(static_total) +
                 " bytes is more than the 48 KB a kernel may declare");
  }
  if (end > d.shared_per_block_optin || end > kSharedArena) {
    kernel_fault(std::to_string(end) + " bytes of shared memory (static and dynamic) exceed the " +
                 std::to_string(d.shared_per_block_optin) + " bytes per block of " + d.name);
  }
  r.static_end = end;
  r.slots.push_back({key, offset});
  std::memset(r.shared + offset, 0xFF, bytes);
  return r.shared + offset;
}

void* shared_dynamic() {
  return runner().shared;
}

void kernel_fault(const std::string& message) {
  BlockRunner& r = runner();
  Lane* me = t_lane;
  if (me == nullptr) {
    std::fprintf(stderr, "arclight CUDA emulator: %s (outside a kernel)\n", message.c_str());
    std::terminate();
  }
  if (r.fault.empty()) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "thread (%u,%u,%u): ", me->ts.thread_idx.x, me->ts.thread_idx.y,
                  me->ts.thread_idx.z);
    r.fault = buf + message;
  }
  me->state = LaneState::kFaulted;
  for (;;) yield_lane();  // never resumed: the scheduler unwinds this fiber
}

void run_kernel(const KernelJob& job) {
  const dim3 g = job.spec.grid;
  const uint64_t n_blocks = static_cast<uint64_t>(g.x) * g.y * g.z;
  // Blocks in a shuffled order too: a grid may not rely on block order.
  std::vector<uint64_t> order(n_blocks);
  for (uint64_t i = 0; i < n_blocks; ++i) order[i] = i;
  std::mt19937_64 rng(settings().seed ^ job.launch_id);
  std::shuffle(order.begin(), order.end(), rng);
  std::atomic<uint64_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex fault_mu;
  std::string fault;
  std::atomic<uint64_t> ops{0};
  const std::function<void()> work = [&] {
    BlockRunner& r = runner();
    set_running_kernel(job.spec.name);
    // Every fiber of the blocks this OS thread runs counts into its thread-local counter.
    const uint64_t ops_before = t_kernel_ops;
    for (;;) {
      if (failed.load(std::memory_order_relaxed)) break;
      const uint64_t i = next.fetch_add(1);
      if (i >= n_blocks) break;
      if (!run_block(r, job, order[i])) {
        std::lock_guard<std::mutex> lock(fault_mu);
        if (!failed.exchange(true)) fault = r.fault;
      }
    }
    ops.fetch_add(t_kernel_ops - ops_before, std::memory_order_relaxed);
    set_running_kernel(nullptr);
  };
  if (n_blocks > 1 && settings().threads > 1) {
    workers().run(work);
  } else {
    work();
  }
  const dim3 b = job.spec.block;
  record_kernel_work(job.spec.name, n_blocks * b.x * b.y * b.z, ops.load());
  if (failed) {
    set_sticky(cudaErrorLaunchFailure, fault);
    return;
  }
  const std::string overrun = check_canaries();
  if (!overrun.empty()) {
    set_sticky(cudaErrorIllegalAddress,
               std::string("kernel ") + job.spec.name + " wrote past the end of " + overrun);
  }
}

}  // namespace arc::cuda_emu
