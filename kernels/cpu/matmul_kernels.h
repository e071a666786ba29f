// Internal interface between the matmul driver (matmul.cpp) and the per-ISA kernel files.
//
// Activations are prepared once per call, before the row loop: integer weight formats get x
// quantized on the fly to Q8_0 (Q8_0, Q4_0, MXFP4 weights) or Q8_K (K-quant weights) so the inner
// loop is an int8 dot product (maddubs / sdot style). Decode is memory-bound: every weight byte
// streams from DRAM once per token, and int8 dots keep the arithmetic per weight byte well below
// what the memory system delivers, where dequantizing each weight to float would not (llama.cpp
// makes the same choice). The error this adds is the activation's 8-bit rounding (relative 1/254
// of each block's largest magnitude). Float weights (F32, F16, BF16) keep F32 activations and F32
// accumulation: their bytes per weight are 2-4x higher, so bandwidth dominates anyway.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <utility>

#include "arc/kernels/cpu_dispatch.h"
#include "arc/kernels/dtype.h"
#include "arc/kernels/matmul.h"
#include "arc/kernels/parallel.h"

namespace arc::kernels::cpu {

enum class ActFormat { kF32, kQ8_0, kQ8_K };

// Prepared activations: n_tokens rows of xa_stride bytes (floats or Q8_0 / Q8_K blocks).
struct RowsArgs {
  const uint8_t* w = nullptr;  // [n_out] rows of w_row_bytes
  size_t w_row_bytes = 0;
  // The end of the matrix's bytes (null: unknown). Decode runs a thread's rows as several short
  // ranges; a kernel that prefetches ahead may run on past its range up to here, so the next
  // range does not start cold.
  const uint8_t* w_end = nullptr;
  int64_t n_in = 0;
  const uint8_t* xa = nullptr;  // [n_tokens] rows of xa_stride bytes
  size_t xa_stride = 0;
  int64_t n_tokens = 0;
  float* y = nullptr;  // [n_tokens, y_stride]
  int64_t y_stride = 0;
  bool accumulate = false;
};

// Computes y[t, o] for o in [o0, o1) and every token. Each (o, t) result depends only on row o
// and token t, never on the range bounds: output is independent of how rows are split.
using RowsFn = void (*)(const RowsArgs& args, int64_t o0, int64_t o1);

struct RowsKernel {
  RowsFn fn = nullptr;
  ActFormat act = ActFormat::kF32;
};

RowsKernel rows_kernel_scalar(DType w_type);
RowsKernel rows_kernel_avx2(DType w_type);        // defined only on x86-64 builds
RowsKernel rows_kernel_avx512(DType w_type);      // defined only on x86-64 builds
RowsKernel rows_kernel_avx512vnni(DType w_type);  // x86-64 only; kAvx512 kernels where no VNNI one
RowsKernel rows_kernel_avx512gfni(DType w_type);  // x86-64 only; kAvx512Vnni ones but the K-quants
RowsKernel rows_kernel_neon(DType w_type);        // defined only on aarch64 builds
// Q4_K_R16 and Q6_K_R16 rows (arc/kernels/repack.h) against Q8_K activations, Q8_0_R16 rows
// against Q8_0 activations; x86-64 only, need VNNI.
void rows_q4k_r16_avx512vnni(const RowsArgs& args, int64_t o0, int64_t o1);
void rows_q80_r16_avx512vnni(const RowsArgs& args, int64_t o0, int64_t o1);
void rows_q6k_r16_avx512vnni(const RowsArgs& args, int64_t o0, int64_t o1);
// MXFP4_R16 rows against Q8_0 activations (gpt-oss's experts); x86-64 only, needs VNNI.
void rows_mxfp4_r16_avx512vnni(const RowsArgs& args, int64_t o0, int64_t o1);
RowsKernel rows_kernel_neon_dotprod(DType w_type);  // aarch64 only, needs HWCAP_ASIMDDP
RowsKernel rows_kernel_neon_i8mm(DType w_type);     // aarch64 only, needs HWCAP2_I8MM too

// What matmul runs at `level` for `w_type`: the level's SIMD kernel, else the scalar one (fn null
// for an unsupported type).
RowsKernel rows_kernel_at(IsaLevel level, DType w_type);

// quantize_row(act, x, dst, n) for the activation formats (Q8_K, Q8_0), byte-identical, with
// AVX-512 where `level` has it. matmul_at / matmul_multi_at prepare activations through it.
void quantize_act(IsaLevel level, DType act, const float* x, void* dst, int64_t n);
bool quantize_act_avx512(DType act, const float* x, void* dst,
                         int64_t n);  // x86-64; false: not done

// The storage type of prepared activations: F32, Q8_0 or Q8_K.
inline DType act_dtype(ActFormat f) {
  return f == ActFormat::kQ8_K ? DType::Q8_K : f == ActFormat::kQ8_0 ? DType::Q8_0 : DType::F32;
}

// How far ahead of the row being computed decode prefetches weights (matmul_rows.inc).
constexpr size_t kPrefetchBytes = 2048;
// The K-quant kernels spend several times as many instructions per weight byte as Q8_0's, so
// the memory latency a prefetch must cover spans more bytes of their stream: 8 KiB ahead made a
// MoE decode step on Q4_K/Q6_K experts 7-14% faster than 2 KiB on the Zen 5 test machine
// (bench_kernels MoeDecode, 10 alternating rounds; 16 KiB was slower again, and Q8_0 got slower
// with 8 KiB: its stream is fast enough for the hardware prefetcher).
constexpr size_t kKQuantPrefetchBytes = 8192;

// Runs fn over the `n_items` work items of a product that reads `weight_bytes` of weights.
// Decode (one token) runs as per-thread shares (Parallel::for_shares): each thread streams one
// contiguous stretch of the weights in order, and a thread that runs slower (this test host's
// vCPUs differ by up to a third from minute to minute; GB10 mixes big and little cores) is
// relieved at the end of its share. Splitting a decode product into more ranges than threads,
// each restarting a cold stream, made it 10-20% slower (bench_kernels MatvecSmall); a share is
// claimed in pieces of about 256 KiB (64 KiB made a MoE step 10% slower: each claim restarts
// the kernel's prefetch), at most a quarter of a share, since a claimed piece cannot be stolen.
// Prefill keeps guided ranges of at least `grain` items.
inline void parallel_items(Parallel* pool, int64_t n_tokens, int64_t n_items, size_t weight_bytes,
                           int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n_tokens != 1) {
    parallel_for(pool, n_items, grain, fn);
    return;
  }
  constexpr size_t kClaimBytes = size_t{256} << 10;
  const int64_t n_threads = pool != nullptr ? pool->num_threads() : 1;
  const size_t item_bytes =
      std::max<size_t>(1, weight_bytes / static_cast<size_t>(std::max<int64_t>(1, n_items)));
  const int64_t by_bytes = static_cast<int64_t>((kClaimBytes + item_bytes - 1) / item_bytes);
  const int64_t quarter = (n_items + 4 * n_threads - 1) / (4 * n_threads);
  parallel_shares(pool, n_items, std::max<int64_t>(1, std::min(by_bytes, quarter)), fn);
}

// The weight and output side of the RowsArgs of product `a` whose rows are `row_bytes` long
// (unless a.w_row_bytes says otherwise); the activations (xa, xa_stride) are the caller's.
inline RowsArgs rows_args_for(const MatmulArgs& a, size_t row_bytes) {
  RowsArgs r;
  r.w = static_cast<const uint8_t*>(a.w);
  r.w_row_bytes = a.w_row_bytes != 0 ? a.w_row_bytes : row_bytes;
  r.w_end = r.w + r.w_row_bytes * static_cast<size_t>(a.n_out);
  r.n_in = a.n_in;
  r.n_tokens = a.n_tokens;
  r.y = a.y;
  r.y_stride = a.y_stride != 0 ? a.y_stride : a.n_out;
  r.accumulate = a.accumulate;
  return r;
}

// Several products as one list of work items of `item_rows` weight rows each (matmul_multi,
// matmul_batch): product m owns items [first_item[m], first_item[m + 1]). Runs items [i0, i1)
// as one kernel call per product they cover, so consecutive items of a product are one row
// range, streamed in order.
inline void run_product_items(std::span<const RowsKernel> k, std::span<const RowsArgs> r,
                              std::span<const MatmulArgs> args, std::span<const int64_t> first_item,
                              int64_t item_rows, int64_t i0, int64_t i1) {
  auto m = static_cast<size_t>(std::upper_bound(first_item.begin(), first_item.end(), i0) -
                               first_item.begin() - 1);
  for (int64_t i = i0; i < i1;) {
    while (i >= first_item[m + 1]) ++m;
    const int64_t j = std::min(i1, first_item[m + 1]);  // items [i, j) of product m
    const int64_t o0 = (i - first_item[m]) * item_rows;
    const int64_t o1 = std::min(args[m].n_out, (j - first_item[m]) * item_rows);
    k[m].fn(r[m], o0, o1);
    i = j;
  }
}

}  // namespace arc::kernels::cpu
