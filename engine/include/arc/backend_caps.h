// Optional capabilities of a Backend, queried with dynamic_cast (the CPU backend has none of
// them). Kept apart from arc/backend.h so the core interface stays small:
//   - StepGraphs: record a step's ops once and replay them (CUDA graphs);
//   - WeightStreamer: copy weight bytes from a file into backend memory in chunks (a backend whose
//     ops cannot read the host mapping);
//   - DeviceReport: what the device is and how fast its memory is (bench, logs).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "arc/kernels/dtype.h"
#include "arc/status.h"

namespace arc {

class Backend;

// Records the ops enqueued between begin_capture() and end_capture() under a key and replays them
// later. Everything the recorded ops read or write must stay at the same addresses (fixed device
// buffers): step inputs are uploaded into those buffers before a replay. Uploads and downloads are
// never recorded.
class StepGraphs {
 public:
  virtual ~StepGraphs() = default;
  // Launches the graph stored under `key`; false when there is none (nothing is enqueued).
  virtual bool replay(uint64_t key) = 0;
  // Starts recording the ops enqueued from now on instead of running them. False when it does
  // not record (graphs are off): the ops enqueued next simply run.
  virtual bool begin_capture() = 0;
  // Stops recording, stores the graph under `key` and launches it once. Returns false when the
  // recording could not be used (an op needed more scratch, the driver refused the capture): then
  // nothing ran and the caller enqueues the same ops again without capture.
  virtual bool end_capture(uint64_t key) = 0;
  // Forgets every stored graph (the buffers they use were reallocated).
  virtual void clear_graphs() = 0;
  virtual bool graphs_enabled() const = 0;
};

// done / total bytes of a weight load. Returning false stops the load: the streamer returns
// kCancelled (the user cancelled it) and the caller drops what was placed.
using LoadProgressFn = std::function<bool(uint64_t done, uint64_t total)>;

class WeightStreamer {
 public:
  virtual ~WeightStreamer() = default;
  // Copies bytes [offset, offset + size) of the file at `path` into one block of backend memory,
  // reading it in chunks and dropping what the page cache holds of each chunk once copied, so the
  // load never holds the file twice (unified memory: page cache and device buffers share the
  // same DRAM). Returns the backend address of byte `offset`; the memory lives as long as the
  // backend. `progress` (may be empty) is called after every chunk.
  virtual Result<const void*> stream_file_range(const std::string& path, uint64_t offset,
                                                uint64_t size, const LoadProgressFn& progress) = 0;
  // A strided part of the file (one rank's shard of a tensor, arc/shard_plan.h): from each of
  // `n_rows` rows of `stride` bytes starting at `offset`, bytes [take_offset, take_offset +
  // take_bytes); they land one after another in one block of backend memory (n_rows *
  // take_bytes), read in chunks with the page cache dropped behind the reader as above. Returns
  // the block's backend address. The default refuses (a backend that cannot stream parts).
  virtual Result<const void*> stream_file_rows(const std::string& path, uint64_t offset,
                                               uint64_t n_rows, uint64_t stride,
                                               uint64_t take_offset, uint64_t take_bytes,
                                               const LoadProgressFn& progress) {
    return unimplemented("this backend cannot load parts of tensors (tensor parallelism)");
  }
  // Rearranges, in place, a matrix that this streamer placed in backend memory into the layout
  // the backend's kernels read fastest (arc/kernels/repack.h): n_rows rows of n_in values in
  // `type`, slice_rows rows per expert of stacked experts (n_rows for a plain matrix). Returns
  // the type the matrix has afterwards: `type` when it stays as it is (the default).
  virtual DType arrange_rows(const void* data, DType type, int64_t n_rows, int64_t slice_rows,
                             int64_t n_in) {
    (void)data, (void)n_rows, (void)slice_rows, (void)n_in;
    return type;
  }
};

// The native queue of a GPU backend: NCCL collectives are enqueued on it so they are ordered with
// the backend's ops (tensor parallelism, arc/nccl_communicator.h).
class NativeStream {
 public:
  virtual ~NativeStream() = default;
  virtual void* native_stream() const = 0;  // a cudaStream_t
  virtual int native_device() const = 0;    // the CUDA device index
};

// How much one kernel did on an emulated device (arc_cuda_emu/emulator.h: kernel_work): launches,
// CUDA threads, and operations = basic blocks its threads executed. Counts, not times.
struct DeviceKernelWork {
  std::string kernel;
  uint64_t launches = 0;
  uint64_t threads = 0;
  uint64_t ops = 0;
};

class DeviceReport {
 public:
  virtual ~DeviceReport() = default;
  // "NVIDIA H200 (sm_90, 139.8 GiB, device 0)".
  virtual std::string device_description() const = 0;
  // Memory bandwidth measured by device-to-device copies of a `bytes` buffer, counting bytes read
  // plus bytes written per copy, in bytes/s.
  virtual Result<double> measure_copy_bandwidth(size_t bytes) = 0;
  // Device memory free now (the memory guard's budget for weights and KV).
  virtual Result<uint64_t> free_memory_bytes() const = 0;
  // True on the CPU emulation of CUDA (kernels/cuda_emu): its timings say nothing about a GPU.
  virtual bool emulated() const { return false; }
  // Emulated devices that count operations: the work per kernel since the last reset, most
  // operations first (empty elsewhere). reset waits for the device to be idle first.
  virtual std::vector<DeviceKernelWork> kernel_work() const { return {}; }
  virtual void reset_kernel_work() {}
};

}  // namespace arc
