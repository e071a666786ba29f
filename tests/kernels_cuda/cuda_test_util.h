// Helpers of the CUDA kernel tests: device buffers, a stream with scratch, random data and the
// skip when no device is present.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "arc/kernels/attention.h"
#include "arc/kernels/cuda_errors.h"
#include "arc/kernels/cuda_ops.h"

namespace arc::kernels::cuda::test {

// Device copy of a host vector; freed on destruction.
template <typename T>
class Dev {
 public:
  explicit Dev(size_t n) : n_(n) {
    if (n_ > 0) {
      EXPECT_EQ(cudaMalloc(&p_, n_ * sizeof(T)), cudaSuccess);
    }
    if (p_ != nullptr) {
      EXPECT_EQ(cudaMemset(p_, 0, n_ * sizeof(T)), cudaSuccess);
    }
  }
  explicit Dev(const std::vector<T>& host) : Dev(host.size()) { upload(host); }
  ~Dev() {
    if (p_ != nullptr) cudaFree(p_);
  }
  Dev(const Dev&) = delete;
  Dev& operator=(const Dev&) = delete;
  void upload(const std::vector<T>& host) {
    ASSERT_EQ(host.size(), n_);
    if (n_ > 0) {
      ASSERT_EQ(cudaMemcpy(p_, host.data(), n_ * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
    }
  }
  std::vector<T> download() const {
    std::vector<T> h(n_);
    if (n_ > 0) {
      EXPECT_EQ(cudaMemcpy(h.data(), p_, n_ * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    }
    return h;
  }
  T* get() const { return p_; }

 private:
  T* p_ = nullptr;
  size_t n_ = 0;
};

// Fixture: skips without a device; owns a stream and a generous scratch.
class CudaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (device_count() == 0) {
      GTEST_SKIP() << "no CUDA device (device_count() == 0): GPU kernels not run";
    }
    ASSERT_EQ(cudaStreamCreate(&stream_), cudaSuccess);
    scratch_size_ = size_t{512} << 20;
    ASSERT_EQ(cudaMalloc(&scratch_, scratch_size_), cudaSuccess);
    ctx_.stream = stream_;
    ctx_.scratch = scratch_;
    ctx_.scratch_size = scratch_size_;
  }
  void TearDown() override {
    if (stream_ == nullptr) return;
    EXPECT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    EXPECT_EQ(cudaGetLastError(), cudaSuccess) << last_error();
    cudaFree(scratch_);
    cudaStreamDestroy(stream_);
  }
  // Waits for the stream; fails the test on a launch or execution error.
  void sync() {
    ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  }

  // Runs ref::paged_attention on `a` (host memory; the reference goes to a.out) and the CUDA
  // kernel on device copies of its queries and token lists with the device caches and block
  // tables given. Returns the device output [n_tokens, n_head * head_dim], empty on failure.
  std::vector<float> device_paged_attention(PagedAttentionArgs a, const void* k_cache,
                                            const void* v_cache, const int32_t* block_tables) {
    ref::paged_attention(a);
    const size_t n_q = static_cast<size_t>(a.n_tokens * a.n_head * a.head_dim);
    Dev<float> dq(std::vector<float>(a.q, a.q + n_q)), dout(n_q);
    Dev<int32_t> dseq(std::vector<int32_t>(a.token_seq, a.token_seq + a.n_tokens));
    Dev<int32_t> dpos(std::vector<int32_t>(a.token_pos, a.token_pos + a.n_tokens));
    Dev<float> dsinks(a.sinks != nullptr ? std::vector<float>(a.sinks, a.sinks + a.n_head)
                                         : std::vector<float>(1));
    if (a.sinks != nullptr) a.sinks = dsinks.get();
    a.q = dq.get();
    a.out = dout.get();
    a.k_cache = k_cache;
    a.v_cache = v_cache;
    a.token_seq = dseq.get();
    a.token_pos = dpos.get();
    a.block_tables = block_tables;
    if (!paged_attention(ctx_, a)) {
      ADD_FAILURE() << "paged_attention refused the arguments";
      return {};
    }
    sync();
    return dout.download();
  }

  cudaStream_t stream_ = nullptr;
  void* scratch_ = nullptr;
  size_t scratch_size_ = 0;
  Context ctx_;
};

inline std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.0f,
                                        float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// Largest |a - b| over the vectors.
inline double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double m = 0.0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    m = std::max(m, std::fabs(double{a[i]} - b[i]));
  return m;
}

inline double max_abs(const std::vector<float>& a) {
  double m = 0.0;
  for (float x : a) m = std::max(m, std::fabs(double{x}));
  return m;
}

}  // namespace arc::kernels::cuda::test
