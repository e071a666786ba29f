// Streaming weights from a file into device memory without a second copy: pread() into two pinned
// 64 MiB staging buffers in turn, an asynchronous copy of each to the device while the next chunk
// is read, and posix_fadvise(DONTNEED) behind the reader so the page cache does not keep the file
// (on a unified-memory box it would otherwise double the load's footprint).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "arc/log.h"
#include "runtime/cuda_backend.h"

namespace arc {
namespace {

constexpr size_t kChunk = size_t{64} << 20;

// Closes what it holds on every return path.
struct LoadResources {
  int fd = -1;
  void* staging[2] = {nullptr, nullptr};
  cudaEvent_t copied[2] = {nullptr, nullptr};
  ~LoadResources() {
    for (int i = 0; i < 2; ++i) {
      if (copied[i] != nullptr) {
        cudaEventSynchronize(copied[i]);
        cudaEventDestroy(copied[i]);
      }
      if (staging[i] != nullptr) cudaFreeHost(staging[i]);
    }
    if (fd >= 0) close(fd);
  }
};

}  // namespace

Status stream_file_to_device(const std::string& path, uint64_t offset, uint64_t size, void* dst,
                             cudaStream_t stream, const LoadProgressFn& progress) {
  cuda_detail::CudaErrors errors;
  LoadResources r;
  r.fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (r.fd < 0) return not_found("cannot open " + path + ": " + std::strerror(errno));
  // The kernel may read ahead aggressively: the whole range is read once, front to back.
  posix_fadvise(r.fd, static_cast<off_t>(offset), static_cast<off_t>(size), POSIX_FADV_SEQUENTIAL);
  for (int i = 0; i < 2; ++i) {
    if (!ARC_CUDA_CHECK(errors, cudaMallocHost(&r.staging[i], kChunk)) ||
        !ARC_CUDA_CHECK(errors, cudaEventCreateWithFlags(&r.copied[i], cudaEventDisableTiming))) {
      return errors.take().with_context("preparing to load " + path);
    }
  }
  auto log = logger("cuda");
  const auto t0 = std::chrono::steady_clock::now();
  int last_tenth = 0;
  uint64_t done = 0;
  for (uint64_t chunk = 0; done < size; ++chunk) {
    const int slot = static_cast<int>(chunk % 2);
    // The copy that last used this staging buffer must be finished before it is refilled.
    if (!ARC_CUDA_CHECK(errors, cudaEventSynchronize(r.copied[slot]))) break;
    const size_t len = static_cast<size_t>(std::min<uint64_t>(kChunk, size - done));
    auto* buf = static_cast<uint8_t*>(r.staging[slot]);
    size_t got = 0;
    while (got < len) {
      const ssize_t n = pread(r.fd, buf + got, len - got, static_cast<off_t>(offset + done + got));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        return data_loss("reading " + path + " at byte " + std::to_string(offset + done + got) +
                         ": " + (n < 0 ? std::strerror(errno) : "the file ends early"));
      }
      got += static_cast<size_t>(n);
    }
    if (!ARC_CUDA_CHECK(errors, cudaMemcpyAsync(static_cast<uint8_t*>(dst) + done, buf, len,
                                                cudaMemcpyHostToDevice, stream)) ||
        !ARC_CUDA_CHECK(errors, cudaEventRecord(r.copied[slot], stream))) {
      break;
    }
    // The bytes are in the staging buffer now: the page cache need not keep them.
    posix_fadvise(r.fd, static_cast<off_t>(offset + done), static_cast<off_t>(len),
                  POSIX_FADV_DONTNEED);
    done += len;
    if (progress && !progress(done, size)) {
      ARC_CUDA_CHECK(errors, cudaStreamSynchronize(stream));  // staging is freed on return
      return cancelled("loading " + path + " was cancelled");
    }
    const int tenth = static_cast<int>(10 * done / std::max<uint64_t>(size, 1));
    if (tenth > last_tenth) {
      last_tenth = tenth;
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      log->info("loading {}: {}% ({:.2f} of {:.2f} GiB, {:.2f} GB/s)", path, 10 * tenth,
                static_cast<double>(done) / (1 << 30), static_cast<double>(size) / (1 << 30),
                s > 0 ? static_cast<double>(done) / s / 1e9 : 0.0);
    }
  }
  ARC_CUDA_CHECK(errors, cudaStreamSynchronize(stream));
  if (errors.failed()) return errors.take().with_context("loading " + path);
  return ok_status();
}

}  // namespace arc
