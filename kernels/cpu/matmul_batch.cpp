// matmul_batch(): many small products, each of its own activations, in ONE parallel loop. Multi-
// head latent attention takes every head's query into latent space and every head's output out
// of it through a matrix of its own (k_b, v_b: DeepSeek-V3 128 heads x [128 -> 512] and
// [512 -> 128] per layer). In decode each is a matrix-vector product of a few hundred KiB, and a
// thread-pool dispatch per head cost more than the product (512 dispatches per token on a
// 16-layer, 16-head model: 40% of a decode step). Here the products' activations are prepared
// first, then all their rows are one list of work items streamed as per-thread shares, as
// matmul_multi does for Q, K and V.
#include <algorithm>
#include <vector>

#include "arc/kernels/cpu_dispatch.h"
#include "arc/kernels/matmul.h"
#include "arc/kernels/quant.h"
#include "cpu/matmul_kernels.h"

namespace arc::kernels::cpu {
namespace {

constexpr int64_t kItemRows = 32;  // weight rows per work item (whole groups of repacked rows)
constexpr int64_t kMaxTokens = 4;  // more tokens: compute-bound, each product on its own

}  // namespace

bool matmul_batch_at(IsaLevel level, std::span<const MatmulArgs> args, Parallel* pool,
                     Workspace* ws) {
  bool fuse = args.size() > 1;
  for (const MatmulArgs& a : args) fuse = fuse && a.n_tokens <= kMaxTokens;
  if (!fuse) {
    for (const MatmulArgs& a : args) {
      if (!matmul_at(level, a, pool, ws)) return false;
    }
    return true;
  }
  if (!isa_available(level)) return false;
  const size_t n = args.size();
  std::vector<RowsKernel> k(n);
  std::vector<RowsArgs> r(n);
  std::vector<int64_t> first_item(n + 1, 0);  // prefix sums of items per product
  std::vector<size_t> act_offset(n, 0);       // prepared activations of product m in `act`
  size_t act_bytes = 0, weight_bytes = 0;
  int64_t n_tokens = 1;
  for (size_t m = 0; m < n; ++m) {
    const MatmulArgs& a = args[m];
    k[m] = rows_kernel_at(level, a.w_type);
    if (k[m].fn == nullptr || a.n_out < 0 || a.n_in < 0 || a.n_tokens < 0) return false;
    const auto row_bytes = dtype_row_bytes(a.w_type, static_cast<uint64_t>(a.n_in));
    if (!row_bytes) return false;
    RowsArgs& ra = r[m];
    ra = rows_args_for(a, static_cast<size_t>(*row_bytes));
    if (k[m].act == ActFormat::kF32) {
      const int64_t xs = a.x_stride != 0 ? a.x_stride : a.n_in;
      ra.xa = reinterpret_cast<const uint8_t*>(a.x);
      ra.xa_stride = static_cast<size_t>(xs) * sizeof(float);
    } else {
      const auto ab = dtype_row_bytes(act_dtype(k[m].act), static_cast<uint64_t>(a.n_in));
      if (!ab) return false;  // n_in not a multiple of the activation block
      ra.xa_stride = static_cast<size_t>(*ab);
      act_offset[m] = act_bytes;
      act_bytes += ra.xa_stride * static_cast<size_t>(a.n_tokens);
    }
    first_item[m + 1] =
        first_item[m] + (a.n_tokens > 0 ? (a.n_out + kItemRows - 1) / kItemRows : 0);
    weight_bytes += ra.w_row_bytes * static_cast<size_t>(a.n_out);
    n_tokens = std::max(n_tokens, a.n_tokens);
  }
  if (act_bytes > 0) {
    // Every product's activations quantized up front (a few KiB in decode: cheaper on one thread
    // than a dispatch).
    auto* act = ws->get<uint8_t>(Workspace::kMatmulAct, act_bytes);
    if (act == nullptr) return false;
    for (size_t m = 0; m < n; ++m) {
      if (k[m].act == ActFormat::kF32) continue;
      const MatmulArgs& a = args[m];
      const int64_t xs = a.x_stride != 0 ? a.x_stride : a.n_in;
      uint8_t* q = act + act_offset[m];
      for (int64_t t = 0; t < a.n_tokens; ++t) {
        quantize_act(level, act_dtype(k[m].act), a.x + t * xs,
                     q + static_cast<size_t>(t) * r[m].xa_stride, a.n_in);
      }
      r[m].xa = q;
    }
  }
  parallel_items(pool, n_tokens, first_item[n], weight_bytes, 1, [&](int64_t i0, int64_t i1) {
    run_product_items(k, r, args, first_item, kItemRows, i0, i1);
  });
  return true;
}

}  // namespace arc::kernels::cpu

namespace arc::kernels {

bool matmul_batch(std::span<const MatmulArgs> args, Parallel* pool, Workspace* ws) {
  return cpu::matmul_batch_at(cpu::best_isa(), args, pool, ws);
}

}  // namespace arc::kernels
