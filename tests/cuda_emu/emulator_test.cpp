// The CUDA emulator's own tests: that it executes what the kernels use with CUDA's semantics
// (mma.sync and wmma against scalar products, shuffles, graphs, limits), and above all that it
// fails when a GPU would, or when a kernel only works by luck: a missing barrier, a barrier not
// every thread reaches, a lane outside a shuffle's mask, a write past an allocation, too much
// shared memory for GB10, a synchronous call inside a stream capture.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <mma.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "arc_cuda_emu/emulator.h"

namespace {

using arc::cuda_emu::last_fault;
using arc::cuda_emu::reset_device;

class Emulator : public ::testing::Test {
 protected:
  void SetUp() override { reset_device(); }
  void TearDown() override { reset_device(); }
};

template <typename T>
T* dev_alloc(size_t n) {
  T* p = nullptr;
  EXPECT_EQ(cudaMalloc(&p, n * sizeof(T)), cudaSuccess);
  return p;
}

template <typename T>
std::vector<T> download(const T* p, size_t n) {
  std::vector<T> h(n);
  EXPECT_EQ(cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  return h;
}

// ---- barriers ----
// Warp 0 writes the shared values, warp 1 reads them: only correct with the barrier.
__global__ void handoff_kernel(float* out, bool barrier) {
  ARC_EMU_SHARED(float, vals, [32]);
  const int t = static_cast<int>(threadIdx.x);
  if (t < 32) vals[t] = static_cast<float>(t) + 1.0f;
  if (barrier) __syncthreads();
  if (t >= 32) out[t - 32] = vals[t - 32];
}

TEST_F(Emulator, MissingBarrierGivesWrongResults) {
  float* out = dev_alloc<float>(32);
  ARC_EMU_LAUNCH(1, 64, 0, nullptr, handoff_kernel)(out, true);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  auto good = download(out, 32);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(good[i], i + 1.0f);
  // Without it, the shuffled lane order lets readers run before the writer: they see the 0xFF
  // pattern (NaN) the shared memory starts with.
  ARC_EMU_LAUNCH(1, 64, 0, nullptr, handoff_kernel)(out, false);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  auto bad = download(out, 32);
  int wrong = 0;
  for (int i = 0; i < 32; ++i) wrong += !(bad[i] == i + 1.0f);
  EXPECT_GT(wrong, 0) << "a kernel without its barrier passed";
  cudaFree(out);
}

__global__ void partial_barrier_kernel(int* out) {
  if (threadIdx.x < 64) __syncthreads();  // the other 64 threads exit without it
  out[threadIdx.x] = 1;
}

TEST_F(Emulator, BarrierNotReachedByEveryThreadIsAnError) {
  int* out = dev_alloc<int>(128);
  ARC_EMU_LAUNCH(1, 128, 0, nullptr, partial_barrier_kernel)(out);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
  EXPECT_NE(last_fault().find("partial_barrier_kernel"), std::string::npos) << last_fault();
  EXPECT_NE(last_fault().find("__syncthreads reached by 64 of 128"), std::string::npos)
      << last_fault();
}

__global__ void deadlock_kernel(float* out) {
  // Lanes 0-15 wait in a shuffle for lanes 16-31, which wait at the block barrier.
  float v = static_cast<float>(threadIdx.x);
  if (threadIdx.x < 16)
    v = __shfl_xor_sync(0xffffffffu, v, 16);
  else
    __syncthreads();
  out[threadIdx.x] = v;
}

TEST_F(Emulator, DeadlockIsReportedNotHung) {
  float* out = dev_alloc<float>(32);
  ARC_EMU_LAUNCH(1, 32, 0, nullptr, deadlock_kernel)(out);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
  EXPECT_NE(last_fault().find("no thread can continue"), std::string::npos) << last_fault();
  EXPECT_NE(last_fault().find("lanes 0-15 at __shfl_xor_sync"), std::string::npos) << last_fault();
}

// ---- warp collectives ----
__global__ void shuffle_kernel(int* out) {
  const int lane = static_cast<int>(threadIdx.x);
  out[lane] = __shfl_xor_sync(0xffffffffu, lane, 5);
  out[32 + lane] = __shfl_up_sync(0xffffffffu, lane, 3);
  out[64 + lane] = __shfl_down_sync(0xffffffffu, lane, 2, 8);
  out[96 + lane] = __shfl_sync(0xffffffffu, lane * 10, 7);
  out[128 + lane] = static_cast<int>(__ballot_sync(0xffffffffu, lane % 3 == 0));
  out[160 + lane] = static_cast<int>(__match_any_sync(0xffffffffu, lane / 4));
}

TEST_F(Emulator, ShufflesFollowTheProgrammingGuide) {
  int* out = dev_alloc<int>(192);
  ARC_EMU_LAUNCH(1, 32, 0, nullptr, shuffle_kernel)(out);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  auto h = download(out, 192);
  unsigned every_third = 0;
  for (int l = 0; l < 32; l += 3) every_third |= 1u << l;
  for (int l = 0; l < 32; ++l) {
    EXPECT_EQ(h[l], l ^ 5);
    EXPECT_EQ(h[32 + l], l >= 3 ? l - 3 : l);
    EXPECT_EQ(h[64 + l], l % 8 + 2 < 8 ? l + 2 : l);  // width 8: no reads from the next group
    EXPECT_EQ(h[96 + l], 70);
    EXPECT_EQ(static_cast<unsigned>(h[128 + l]), every_third);
    EXPECT_EQ(static_cast<unsigned>(h[160 + l]), 0xFu << (l / 4 * 4));
  }
}

__global__ void outside_mask_kernel(int* out) {
  // Lane 3 names only lanes 0-1 in its mask.
  const unsigned mask = threadIdx.x == 3 ? 0x3u : 0xffffffffu;
  out[threadIdx.x] = __shfl_sync(mask, static_cast<int>(threadIdx.x), 0);
}

TEST_F(Emulator, ShuffleFromALaneOutsideItsMaskIsAnError) {
  int* out = dev_alloc<int>(32);
  ARC_EMU_LAUNCH(1, 32, 0, nullptr, outside_mask_kernel)(out);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
  EXPECT_NE(last_fault().find("lane 3 calls it with mask 0x00000003 that leaves it out"),
            std::string::npos)
      << last_fault();
}

__global__ void exited_lane_kernel(float* out) {
  if (threadIdx.x == 31) return;  // lane 31 leaves, the others still name it
  float v = static_cast<float>(threadIdx.x);
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  out[threadIdx.x] = v;
}

TEST_F(Emulator, ShuffleNamingAnExitedLaneIsAnError) {
  float* out = dev_alloc<float>(32);
  ARC_EMU_LAUNCH(1, 32, 0, nullptr, exited_lane_kernel)(out);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
  EXPECT_NE(last_fault().find("lane 31 named in the mask has exited"), std::string::npos)
      << last_fault();
}

// ---- tensor cores ----
// mma.sync.m16n8k16 with the PTX fragment layouts (arc_cuda_emu/mma_ptx.h), loaded the way a
// kernel loads them: A [16][16] row-major, B given as B^T [8][16] row-major (.col), C [16][8].
__global__ void mma16816_kernel(const __half* a, const __half* bt, float* c) {
  const int lane = static_cast<int>(threadIdx.x), g = lane >> 2, t = lane % 4;
  auto pair = [](const __half* p) {
    uint32_t r;
    std::memcpy(&r, p, 4);
    return r;
  };
  const uint32_t af[4] = {pair(a + g * 16 + 2 * t), pair(a + (g + 8) * 16 + 2 * t),
                          pair(a + g * 16 + 2 * t + 8), pair(a + (g + 8) * 16 + 2 * t + 8)};
  float acc[4] = {1.0f, 1.0f, 1.0f, 1.0f};  // C = 1 everywhere
  arc::cuda_emu::mma_m16n8k16_row_col_f32_f16(acc, af, pair(bt + g * 16 + 2 * t),
                                              pair(bt + g * 16 + 2 * t + 8));
  for (int i = 0; i < 4; ++i) c[(i < 2 ? g : g + 8) * 8 + 2 * t + (i & 1)] = acc[i];
}

TEST_F(Emulator, MmaSyncM16n8k16MatchesTheScalarProduct) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> small(-4, 4);  // exact in half and in float sums
  std::vector<__half> a(256), bt(128);
  std::vector<float> af(256), btf(128);
  for (int i = 0; i < 256; ++i) af[i] = static_cast<float>(small(rng)), a[i] = __float2half(af[i]);
  for (int i = 0; i < 128; ++i)
    btf[i] = static_cast<float>(small(rng)), bt[i] = __float2half(btf[i]);
  __half *da = dev_alloc<__half>(256), *db = dev_alloc<__half>(128);
  float* dc = dev_alloc<float>(128);
  cudaMemcpy(da, a.data(), 256 * sizeof(__half), cudaMemcpyHostToDevice);
  cudaMemcpy(db, bt.data(), 128 * sizeof(__half), cudaMemcpyHostToDevice);
  ARC_EMU_LAUNCH(1, 32, 0, nullptr, mma16816_kernel)(da, db, dc);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  auto c = download(dc, 128);
  for (int m = 0; m < 16; ++m) {
    for (int n = 0; n < 8; ++n) {
      float want = 1.0f;
      for (int k = 0; k < 16; ++k) want += af[m * 16 + k] * btf[n * 16 + k];
      EXPECT_EQ(c[m * 8 + n], want) << "m " << m << " n " << n;
    }
  }
}

__global__ void wmma_kernel(const __half* a, const __half* b, float* c) {
  using namespace nvcuda;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::fill_fragment(acc, 0.5f);
  wmma::load_matrix_sync(fa, a, 16);
  wmma::load_matrix_sync(fb, b, 16);
  wmma::mma_sync(acc, fa, fb, acc);
  wmma::store_matrix_sync(c, acc, 16, wmma::mem_row_major);
}

TEST_F(Emulator, WmmaMatchesTheScalarProduct) {
  std::mt19937 rng(4);
  std::uniform_int_distribution<int> small(-4, 4);
  std::vector<__half> a(256), b(256);
  std::vector<float> af(256), bf(256);
  for (int i = 0; i < 256; ++i) af[i] = static_cast<float>(small(rng)), a[i] = __float2half(af[i]);
  for (int i = 0; i < 256; ++i) bf[i] = static_cast<float>(small(rng)), b[i] = __float2half(bf[i]);
  __half *da = dev_alloc<__half>(256), *db = dev_alloc<__half>(256);
  float* dc = dev_alloc<float>(256);
  cudaMemcpy(da, a.data(), 512, cudaMemcpyHostToDevice);
  cudaMemcpy(db, b.data(), 512, cudaMemcpyHostToDevice);
  ARC_EMU_LAUNCH(1, 32, 0, nullptr, wmma_kernel)(da, db, dc);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  auto c = download(dc, 256);
  for (int m = 0; m < 16; ++m) {
    for (int n = 0; n < 16; ++n) {
      float want = 0.5f;  // b is col-major: element (k, n) at b[n * 16 + k]
      for (int k = 0; k < 16; ++k) want += af[m * 16 + k] * bf[n * 16 + k];
      EXPECT_EQ(c[m * 16 + n], want) << "m " << m << " n " << n;
    }
  }
}

// ---- memory ----
__global__ void write_past_kernel(float* p, int n, int past) {
  if (threadIdx.x == 0) p[n + past] = 1.0f;
}

TEST_F(Emulator, WritePastAnAllocationIsAnIllegalAddress) {
  float* p = dev_alloc<float>(10);  // 40 bytes: 216 bytes of canary up to the 256-byte rounding
  ARC_EMU_LAUNCH(1, 32, 0, nullptr, write_past_kernel)(p, 10, 3);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
  EXPECT_NE(last_fault().find("write_past_kernel wrote past the end of a device allocation of 40"),
            std::string::npos)
      << last_fault();
}

TEST_F(Emulator, WriteFarPastAnAllocationStopsTheProcessWithAMessage) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        float* p = dev_alloc<float>(64);  // 256 bytes: the next page is the guard
        ARC_EMU_LAUNCH(1, 1, 0, nullptr, write_past_kernel)(p, 64, 100);
        cudaDeviceSynchronize();
      },
      "illegal address in kernel write_past_kernel: .* past the end of a device allocation of "
      "256 bytes");
}

__global__ void read_kernel(const float* in, float* out) {
  out[threadIdx.x] = in[threadIdx.x];
}

TEST_F(Emulator, NewAllocationsHoldTheNanPattern) {
  float* in = dev_alloc<float>(32);
  float* out = dev_alloc<float>(32);
  ARC_EMU_LAUNCH(1, 32, 0, nullptr, read_kernel)(in, out);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  for (float v : download(out, 32)) EXPECT_TRUE(std::isnan(v));
  cudaFree(in);
  cudaFree(out);
}

// ---- launch limits ----
__global__ void dynamic_shared_kernel(float* out) {
  ARC_EMU_DYNAMIC_SHARED(float, sh);
  sh[threadIdx.x] = 2.0f;
  __syncthreads();
  out[threadIdx.x] = sh[31 - threadIdx.x];
}

TEST_F(Emulator, SharedMemoryLimitsOfTheEmulatedDevice) {
  float* out = dev_alloc<float>(32);
  const bool gb10 = arc::cuda_emu::device_kind() == arc::cuda_emu::DeviceKind::kGB10;
  // Above 48 KB only after opting in.
  ARC_EMU_LAUNCH(1, 32, 64 << 10, nullptr, dynamic_shared_kernel)(out);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  ASSERT_EQ(cudaFuncSetAttribute(dynamic_shared_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 64 << 10),
            cudaSuccess);
  ARC_EMU_LAUNCH(1, 32, 64 << 10, nullptr, dynamic_shared_kernel)(out);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  for (float v : download(out, 32)) EXPECT_EQ(v, 2.0f);
  // 120 KB: more than GB10's 99 KB per block, within H200's 227 KB.
  const cudaError_t set = cudaFuncSetAttribute(
      dynamic_shared_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 120 << 10);
  ARC_EMU_LAUNCH(1, 32, 120 << 10, nullptr, dynamic_shared_kernel)(out);
  const cudaError_t launched = cudaGetLastError();
  if (gb10) {
    EXPECT_EQ(set, cudaErrorInvalidValue);
    EXPECT_EQ(launched, cudaErrorInvalidValue);
  } else {
    EXPECT_EQ(set, cudaSuccess);
    EXPECT_EQ(launched, cudaSuccess);
  }
  // A block of 2048 threads does not exist on either.
  ARC_EMU_LAUNCH(1, 2048, 0, nullptr, dynamic_shared_kernel)(out);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

__global__ void too_much_static_kernel(float* out) {
  ARC_EMU_SHARED(float, big, [16 << 10]);  // 64 KB of static shared memory
  big[threadIdx.x] = 1.0f;
  out[threadIdx.x] = big[threadIdx.x];
}

TEST_F(Emulator, TooMuchStaticSharedMemoryIsRefused) {
  float* out = dev_alloc<float>(32);
  ARC_EMU_LAUNCH(1, 32, 0, nullptr, too_much_static_kernel)(out);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
  EXPECT_NE(last_fault().find("more than the 48 KB"), std::string::npos) << last_fault();
}

// ---- streams and graphs ----
__global__ void add_one_kernel(float* x, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) x[i] += 1.0f;
}

TEST_F(Emulator, GraphsRecordAndReplay) {
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  const int n = 1000;
  float* x = dev_alloc<float>(n);
  ASSERT_EQ(cudaMemsetAsync(x, 0, n * sizeof(float), s), cudaSuccess);
  ASSERT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  ARC_EMU_LAUNCH((n + 127) / 128, 128, 0, s, add_one_kernel)(x, n);
  ARC_EMU_LAUNCH((n + 127) / 128, 128, 0, s, add_one_kernel)(x, n);
  cudaGraph_t g = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(s, &g), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  EXPECT_EQ(download(x, 1)[0], 0.0f) << "a capture must record, not run";
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, g, 0), cudaSuccess);
  for (int r = 0; r < 3; ++r) ASSERT_EQ(cudaGraphLaunch(exec, s), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  for (float v : download(x, n)) ASSERT_EQ(v, 6.0f);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(g);

  // A synchronous call inside a capture spoils it, as on a GPU.
  ASSERT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  float* y = nullptr;
  EXPECT_EQ(cudaMalloc(&y, 64), cudaErrorStreamCaptureUnsupported);
  g = nullptr;
  EXPECT_EQ(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
  EXPECT_EQ(g, nullptr);
  cudaGetLastError();
  cudaStreamDestroy(s);
  cudaFree(x);
}

TEST_F(Emulator, PageableCopiesAreStagedAndPinnedOnesAreAsynchronous) {
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  float* d = dev_alloc<float>(4);
  std::vector<float> src = {1, 2, 3, 4};
  ASSERT_EQ(cudaMemcpyAsync(d, src.data(), 16, cudaMemcpyHostToDevice, s), cudaSuccess);
  src.assign(4, -1.0f);  // a pageable source may be reused as soon as the call returns
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  const auto got = download(d, 4);
  EXPECT_EQ(got, (std::vector<float>{1, 2, 3, 4}));
  // Copies from outside any allocation are refused.
  std::vector<float> host(4);
  EXPECT_EQ(cudaMemcpyAsync(host.data(), d + 2, 16, cudaMemcpyDeviceToHost, s),
            cudaErrorInvalidValue);
  cudaGetLastError();
  cudaStreamDestroy(s);
  cudaFree(d);
}

}  // namespace
