// Loading one rank's shard of a tensor into device memory (tensor parallelism): the rows or the
// column range of every row that the rank holds are read from the file with pread() and packed
// into two pinned 32 MiB staging buffers in turn, each copied to the device while the next is
// filled; the page cache is dropped behind the reader. The host never holds more than the
// staging buffers (and one 32 MiB read buffer for narrow column ranges), so a rank loads its
// shard without a second copy of it, as whole-model loads do (cuda_weights.cpp). The staging
// buffers stay with the backend (a shard load makes thousands of calls, and pinning memory is
// slow); small tensors share 256 MiB device slabs instead of one allocation each.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "arc/backend_factory.h"
#include "runtime/cuda_backend.h"

namespace arc {
namespace {

constexpr size_t kChunk = size_t{32} << 20;
// Parts under kOwn bytes share kSlab device blocks (a block's unused tail is at most kOwn);
// larger ones get a block each.
constexpr uint64_t kSlab = uint64_t{256} << 20;
constexpr uint64_t kOwn = uint64_t{16} << 20;
// Column ranges at least this wide are read on their own; narrower ones come from whole rows
// read in batches (one pread per row would be millions of calls for expert tensors).
constexpr uint64_t kDirectRead = uint64_t{64} << 10;

Status pread_full(int fd, uint8_t* dst, size_t len, uint64_t at, const std::string& path) {
  size_t got = 0;
  while (got < len) {
    const ssize_t n = pread(fd, dst + got, len - got, static_cast<off_t>(at + got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return data_loss("reading " + path + " at byte " + std::to_string(at + got) + ": " +
                       (n < 0 ? std::strerror(errno) : "the file ends early"));
    }
    got += static_cast<size_t>(n);
  }
  return ok_status();
}

// Packs bytes into the staging buffers and copies each full one to `dst` on `stream`.
// `staging`, `copied`: two pinned kChunk buffers and their copy events, owned by the caller.
class Stager {
 public:
  Stager(uint8_t* dst, uint64_t total, cudaStream_t stream, void* const* staging,
         const cudaEvent_t* copied, const LoadProgressFn& progress)
      : dst_(dst),
        total_(total),
        stream_(stream),
        progress_(progress),
        staging_{staging[0], staging[1]},
        copied_{copied[0], copied[1]} {}
  // The buffers are reused by the next load: no copy may still read them.
  ~Stager() {
    for (int i = 0; i < 2; ++i) cudaEventSynchronize(copied_[i]);
  }

  // Room left in the current staging buffer.
  uint8_t* room(size_t& avail) {
    avail = kChunk - fill_;
    return static_cast<uint8_t*>(staging_[slot_]) + fill_;
  }
  Status commit(size_t n) {
    fill_ += n;
    return fill_ == kChunk ? flush() : ok_status();
  }
  Status put(const uint8_t* src, size_t n) {
    while (n > 0) {
      size_t avail = 0;
      uint8_t* p = room(avail);
      const size_t k = std::min(avail, n);
      std::memcpy(p, src, k);
      src += k;
      n -= k;
      ARC_RETURN_IF_ERROR(commit(k));
    }
    return ok_status();
  }
  // Copies what is staged, then waits for the other buffer's copy before it is refilled.
  Status flush() {
    if (fill_ > 0) {
      if (!ARC_CUDA_CHECK(errors_, cudaMemcpyAsync(dst_ + done_, staging_[slot_], fill_,
                                                   cudaMemcpyHostToDevice, stream_)) ||
          !ARC_CUDA_CHECK(errors_, cudaEventRecord(copied_[slot_], stream_))) {
        return errors_.take();
      }
      done_ += fill_;
      fill_ = 0;
      if (progress_ && !progress_(done_, total_)) return cancelled("the load was cancelled");
      slot_ ^= 1;
    }
    if (!ARC_CUDA_CHECK(errors_, cudaEventSynchronize(copied_[slot_]))) return errors_.take();
    return ok_status();
  }
  Status finish() {
    ARC_RETURN_IF_ERROR(flush());
    if (!ARC_CUDA_CHECK(errors_, cudaStreamSynchronize(stream_))) return errors_.take();
    return ok_status();
  }

 private:
  uint8_t* dst_;
  uint64_t total_;
  cudaStream_t stream_;
  const LoadProgressFn& progress_;
  cuda_detail::CudaErrors errors_;
  void* staging_[2];
  cudaEvent_t copied_[2];
  int slot_ = 0;
  size_t fill_ = 0;
  uint64_t done_ = 0;
};

}  // namespace

struct CudaBackend::ShardStaging {
  void* staging[2] = {nullptr, nullptr};
  cudaEvent_t copied[2] = {nullptr, nullptr};
  uint8_t* slab = nullptr;  // device memory for small tensors
  uint64_t slab_left = 0;
};

void CudaBackend::ShardStagingFree::operator()(ShardStaging* s) const {
  for (int i = 0; i < 2; ++i) {
    if (s->copied[i] != nullptr) {
      cudaEventSynchronize(s->copied[i]);
      cudaEventDestroy(s->copied[i]);
    }
    if (s->staging[i] != nullptr) cudaFreeHost(s->staging[i]);
  }
  delete s;  // slabs are in weight_blocks_, freed by the backend
}

namespace {

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

}  // namespace

int cuda_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

Result<const void*> CudaBackend::stream_file_rows(const std::string& path, uint64_t offset,
                                                  uint64_t n_rows, uint64_t stride,
                                                  uint64_t take_offset, uint64_t take_bytes,
                                                  const LoadProgressFn& progress) {
  if (take_offset + take_bytes > stride || take_bytes == 0) {
    return invalid_argument("stream_file_rows: bytes [" + std::to_string(take_offset) + ", " +
                            std::to_string(take_offset + take_bytes) + ") of " +
                            std::to_string(stride) + "-byte rows");
  }
  if (take_bytes == stride) {  // whole rows: one contiguous range
    take_bytes = stride = n_rows * stride;
    n_rows = 1;
  }
  const uint64_t total = n_rows * take_bytes;
  cudaSetDevice(device_);
  if (!shard_staging_) {
    std::unique_ptr<ShardStaging, ShardStagingFree> st(new ShardStaging());
    for (int i = 0; i < 2; ++i) {
      if (!ARC_CUDA_CHECK(errors_, cudaMallocHost(&st->staging[i], kChunk)) ||
          !ARC_CUDA_CHECK(errors_,
                          cudaEventCreateWithFlags(&st->copied[i], cudaEventDisableTiming))) {
        return errors_.take().with_context("preparing to load " + path);
      }
    }
    shard_staging_ = std::move(st);
  }
  // Device memory: large parts on their own, small ones packed into slabs (256-byte aligned).
  ShardStaging& ss = *shard_staging_;
  const uint64_t aligned = (std::max<uint64_t>(total, 1) + 255) / 256 * 256;
  const bool own = aligned >= kOwn;
  void* p = nullptr;
  if (own || ss.slab_left < aligned) {
    const uint64_t bytes = own ? aligned : kSlab;
    if (cudaError_t e = cudaMalloc(&p, bytes); e != cudaSuccess) {
      cudaGetLastError();
      size_t free_b = 0, total_b = 0;
      cudaMemGetInfo(&free_b, &total_b);
      return resource_exhausted(
          "cannot allocate " + std::to_string(bytes) + " bytes of weights on " + info_.name + " (" +
          std::to_string(free_b >> 20) + " MiB free): " + cuda_detail::describe(e));
    }
    weight_blocks_.push_back(p);
    if (!own) {
      ss.slab = static_cast<uint8_t*>(p);
      ss.slab_left = kSlab;
    }
  }
  if (!own) {
    p = ss.slab;
    ss.slab += aligned;
    ss.slab_left -= aligned;
  }

  Fd f;
  f.fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (f.fd < 0) return not_found("cannot open " + path + ": " + std::strerror(errno));
  posix_fadvise(f.fd, static_cast<off_t>(offset), static_cast<off_t>(n_rows * stride),
                POSIX_FADV_SEQUENTIAL);
  Stager st(static_cast<uint8_t*>(p), total, stream_, ss.staging, ss.copied, progress);

  if (take_bytes >= kDirectRead || stride > kChunk || n_rows == 1) {
    // Wide ranges: read exactly what this rank takes, straight into the staging buffers.
    for (uint64_t r = 0; r < n_rows; ++r) {
      uint64_t at = offset + r * stride + take_offset;
      uint64_t left = take_bytes;
      while (left > 0) {
        size_t avail = 0;
        uint8_t* dst = st.room(avail);
        const size_t n = static_cast<size_t>(std::min<uint64_t>(avail, left));
        ARC_RETURN_IF_ERROR(pread_full(f.fd, dst, n, at, path));
        ARC_RETURN_IF_ERROR(st.commit(n));
        // In the staging buffer now: the page cache need not keep it.
        posix_fadvise(f.fd, static_cast<off_t>(at), static_cast<off_t>(n), POSIX_FADV_DONTNEED);
        at += n;
        left -= n;
      }
    }
  } else {
    // Narrow ranges: whole rows in batches of up to 32 MiB, this rank's bytes picked out.
    const uint64_t per_read = std::max<uint64_t>(1, kChunk / stride);
    std::vector<uint8_t> rows(static_cast<size_t>(std::min(per_read, n_rows) * stride));
    for (uint64_t r0 = 0; r0 < n_rows; r0 += per_read) {
      const uint64_t k = std::min(per_read, n_rows - r0);
      const uint64_t at = offset + r0 * stride;
      ARC_RETURN_IF_ERROR(pread_full(f.fd, rows.data(), static_cast<size_t>(k * stride), at, path));
      for (uint64_t i = 0; i < k; ++i) {
        ARC_RETURN_IF_ERROR(st.put(rows.data() + i * stride + take_offset, take_bytes));
      }
      posix_fadvise(f.fd, static_cast<off_t>(at), static_cast<off_t>(k * stride),
                    POSIX_FADV_DONTNEED);
    }
  }
  ARC_RETURN_IF_ERROR(st.finish().with_context("loading " + path));
  return static_cast<const void*>(p);
}

}  // namespace arc
