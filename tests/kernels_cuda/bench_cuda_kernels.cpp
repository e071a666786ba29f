// Speed of the hot CUDA kernels against the device's limits: decode matvec in GB/s of weight
// bytes per format (the bandwidth bound of batch-1 decode), prefill matmul in TFLOP/s on tensor
// cores, and split-K decode attention over a long F16 context in GB/s of KV bytes.
// Usage: bench_cuda_kernels [n_out n_in]   (defaults 8192 8192). Prints "skipped" without a device.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "arc/kernels/cuda_ops.h"
#include "arc/kernels/quant.h"

namespace {

using namespace arc;
using namespace arc::kernels;

#define BENCH_CHECK(expr)                                                         \
  do {                                                                            \
    const cudaError_t e_ = (expr);                                                \
    if (e_ != cudaSuccess) {                                                      \
      std::fprintf(stderr, "%s failed at %s:%d: %s\n", #expr, __FILE__, __LINE__, \
                   cudaGetErrorString(e_));                                       \
      std::exit(1);                                                               \
    }                                                                             \
  } while (0)

// Average milliseconds of fn() over iters launches after a warm-up.
template <typename F>
float time_ms(cudaStream_t s, int iters, F&& fn) {
  cudaEvent_t a, b;
  BENCH_CHECK(cudaEventCreate(&a));
  BENCH_CHECK(cudaEventCreate(&b));
  fn();
  BENCH_CHECK(cudaStreamSynchronize(s));
  BENCH_CHECK(cudaEventRecord(a, s));
  for (int i = 0; i < iters; ++i) fn();
  BENCH_CHECK(cudaEventRecord(b, s));
  BENCH_CHECK(cudaEventSynchronize(b));
  float ms = 0.0f;
  BENCH_CHECK(cudaEventElapsedTime(&ms, a, b));
  BENCH_CHECK(cudaGetLastError());
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return ms / static_cast<float>(iters);
}

}  // namespace

int main(int argc, char** argv) {
  if (cuda::device_count() == 0) {
    std::printf("skipped: no CUDA device\n");
    return 0;
  }
  cuda::DeviceInfo info;
  cuda::device_info(0, &info);
  int mem_clock_khz = 0, bus_bits = 0;
  cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, 0);
  cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, 0);
  const double peak_gbs = 2.0 * mem_clock_khz * 1e3 * (bus_bits / 8) / 1e9;
  std::printf("%s sm_%d%d, %.0f GiB, nominal DRAM %.0f GB/s\n", info.name, info.sm_major,
              info.sm_minor, info.total_bytes / 1073741824.0, peak_gbs);

  const int64_t n_out = argc > 2 ? std::atoll(argv[1]) : 8192;
  const int64_t n_in = argc > 2 ? std::atoll(argv[2]) : 8192;
  cudaStream_t s;
  BENCH_CHECK(cudaStreamCreate(&s));
  cuda::ScratchShape shape;
  shape.max_tokens = 2048;
  shape.max_dim = n_in;
  shape.n_head = 32;
  shape.head_dim = 128;
  shape.max_context = 32768;
  const size_t scratch_size = cuda::scratch_bytes(shape);
  void* scratch = nullptr;
  BENCH_CHECK(cudaMalloc(&scratch, scratch_size));
  cuda::Context ctx{s, scratch, scratch_size};

  float *x = nullptr, *y = nullptr;
  BENCH_CHECK(cudaMalloc(&x, sizeof(float) * 2048 * n_in));
  BENCH_CHECK(cudaMalloc(&y, sizeof(float) * 2048 * n_out));
  BENCH_CHECK(cudaMemset(x, 0, sizeof(float) * 2048 * n_in));

  std::printf("\n%-6s %12s %10s %8s %14s\n", "format", "weights MB", "matvec us", "GB/s",
              "mma TFLOP/s");
  const DType types[] = {DType::Q4_K,  DType::Q5_K, DType::Q6_K, DType::Q8_0, DType::Q4_0,
                         DType::MXFP4, DType::F16,  DType::BF16, DType::F32};
  std::vector<float> row(static_cast<size_t>(n_in), 0.01f);
  for (DType t : types) {
    const size_t rb = *dtype_row_bytes(t, static_cast<uint64_t>(n_in));
    std::vector<uint8_t> host(rb);
    quantize_row(t, row.data(), host.data(), n_in);
    uint8_t* w = nullptr;
    BENCH_CHECK(cudaMalloc(&w, rb * n_out));
    for (int64_t o = 0; o < n_out; o += 1024) {
      // Fill with copies of one row (contents do not change the speed).
      for (int64_t r = o; r < std::min<int64_t>(n_out, o + 1024); ++r)
        BENCH_CHECK(cudaMemcpyAsync(w + r * rb, host.data(), rb, cudaMemcpyHostToDevice, s));
    }
    MatmulArgs a;
    a.w = w;
    a.w_type = t;
    a.n_out = n_out;
    a.n_in = n_in;
    a.x = x;
    a.y = y;
    a.n_tokens = 1;
    const float mv = time_ms(s, 50, [&] { cuda::matmul(ctx, a); });
    a.n_tokens = 2048;
    const float mm = time_ms(s, 5, [&] { cuda::matmul(ctx, a); });
    const double bytes = static_cast<double>(rb) * n_out;
    std::printf("%-6s %12.1f %10.1f %8.0f %14.1f\n", std::string(dtype_name(t)).c_str(),
                bytes / 1e6, mv * 1e3, bytes / (mv * 1e-3) / 1e9,
                2.0 * n_out * n_in * 2048 / (mm * 1e-3) / 1e12);
    cudaFree(w);
  }

  // Decode attention: 4 sequences x 32k positions, 32 query heads, 8 KV heads, head_dim 128, F16.
  {
    const int64_t n_seq = 4, ctx_len = 32768, bs = 16, n_kv = 8, d = 128;
    const int64_t blocks = ctx_len / bs;
    const size_t cache_bytes = static_cast<size_t>(n_seq * ctx_len * n_kv * d * 2);
    void *kc = nullptr, *vc = nullptr;
    BENCH_CHECK(cudaMalloc(&kc, cache_bytes));
    BENCH_CHECK(cudaMalloc(&vc, cache_bytes));
    BENCH_CHECK(cudaMemset(kc, 0, cache_bytes));
    BENCH_CHECK(cudaMemset(vc, 0, cache_bytes));
    std::vector<int32_t> tables(static_cast<size_t>(n_seq * blocks)), seq(n_seq), pos(n_seq);
    for (size_t i = 0; i < tables.size(); ++i) tables[i] = static_cast<int32_t>(i);
    for (int64_t i = 0; i < n_seq; ++i) seq[i] = static_cast<int32_t>(i), pos[i] = ctx_len - 1;
    int32_t *dt = nullptr, *ds = nullptr, *dp = nullptr;
    BENCH_CHECK(cudaMalloc(&dt, tables.size() * 4));
    BENCH_CHECK(cudaMalloc(&ds, n_seq * 4));
    BENCH_CHECK(cudaMalloc(&dp, n_seq * 4));
    BENCH_CHECK(cudaMemcpy(dt, tables.data(), tables.size() * 4, cudaMemcpyHostToDevice));
    BENCH_CHECK(cudaMemcpy(ds, seq.data(), n_seq * 4, cudaMemcpyHostToDevice));
    BENCH_CHECK(cudaMemcpy(dp, pos.data(), n_seq * 4, cudaMemcpyHostToDevice));
    PagedAttentionArgs a;
    a.q = x;
    a.out = y;
    a.n_tokens = n_seq;
    a.n_head = 32;
    a.n_kv_head = n_kv;
    a.head_dim = d;
    a.k_cache = kc;
    a.v_cache = vc;
    a.kv_type = DType::F16;
    a.block_size = bs;
    a.token_seq = ds;
    a.token_pos = dp;
    a.block_tables = dt;
    a.max_blocks_per_seq = blocks;
    const float ms = time_ms(s, 20, [&] { cuda::paged_attention(ctx, a); });
    std::printf("\ndecode attention, 4 x 32k F16 context: %.1f us, %.0f GB/s of KV\n", ms * 1e3,
                2.0 * cache_bytes / (ms * 1e-3) / 1e9);
    cudaFree(kc);
    cudaFree(vc);
    cudaFree(dt);
    cudaFree(ds);
    cudaFree(dp);
  }
  cudaFree(x);
  cudaFree(y);
  cudaFree(scratch);
  cudaStreamDestroy(s);
  return 0;
}
