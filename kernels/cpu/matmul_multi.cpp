// matmul_multi(): several products of one activation (attention's Q, K and V) in ONE parallel
// loop. In decode each projection is a short matrix-vector product, and a separate thread-pool
// dispatch and activation quantization per projection cost about as much as the product itself.
#include <algorithm>
#include <array>

#include "arc/kernels/cpu_dispatch.h"
#include "arc/kernels/matmul.h"
#include "arc/kernels/quant.h"
#include "cpu/matmul_kernels.h"

namespace arc::kernels::cpu {
namespace {

constexpr size_t kMaxMulti = 4;
constexpr int64_t kItemRows = 32;  // weight rows per work item

bool same_input(const MatmulArgs& a, const MatmulArgs& b) {
  const int64_t sa = a.x_stride != 0 ? a.x_stride : a.n_in;
  const int64_t sb = b.x_stride != 0 ? b.x_stride : b.n_in;
  return a.x == b.x && a.n_in == b.n_in && a.n_tokens == b.n_tokens && sa == sb;
}

}  // namespace

bool matmul_multi_at(IsaLevel level, std::span<const MatmulArgs> args, Parallel* pool,
                     Workspace* ws) {
  // Prefill products are compute-bound and long: one loop each, as matmul() runs them.
  bool fuse = args.size() <= kMaxMulti;
  for (const MatmulArgs& a : args) fuse = fuse && same_input(a, args[0]) && a.n_tokens <= 4;
  if (!fuse) {
    for (const MatmulArgs& a : args) {
      if (!matmul_at(level, a, pool, ws)) return false;
    }
    return true;
  }
  if (!isa_available(level)) return false;
  const size_t n = args.size();
  std::array<RowsKernel, kMaxMulti> k;
  std::array<RowsArgs, kMaxMulti> r;
  std::array<int64_t, kMaxMulti + 1> first_item{};  // prefix sums of items per product
  // Prepared activations per format (one quantization shared by all products of that format).
  std::array<const uint8_t*, 3> act{};
  std::array<size_t, 3> act_stride{};
  constexpr Workspace::Slot kActSlot[3] = {Workspace::kMatmulAct, Workspace::kMatmulAct,
                                           Workspace::kMatmulAct2};
  for (size_t m = 0; m < n; ++m) {
    const MatmulArgs& a = args[m];
    k[m] = rows_kernel_at(level, a.w_type);
    if (k[m].fn == nullptr || a.n_out < 0 || a.n_in < 0 || a.n_tokens < 0) return false;
    const auto row_bytes = dtype_row_bytes(a.w_type, static_cast<uint64_t>(a.n_in));
    if (!row_bytes) return false;
    const int f = static_cast<int>(k[m].act);
    const int64_t xs = a.x_stride != 0 ? a.x_stride : a.n_in;
    if (act[f] == nullptr) {
      if (k[m].act == ActFormat::kF32) {
        act[f] = reinterpret_cast<const uint8_t*>(a.x);
        act_stride[f] = static_cast<size_t>(xs) * sizeof(float);
      } else {
        const DType at = act_dtype(k[m].act);
        const auto ab = dtype_row_bytes(at, static_cast<uint64_t>(a.n_in));
        if (!ab) return false;  // n_in not a multiple of the activation block
        act_stride[f] = static_cast<size_t>(*ab);
        auto* q = ws->get<uint8_t>(kActSlot[f], act_stride[f] * static_cast<size_t>(a.n_tokens));
        if (q == nullptr) return false;
        for (int64_t t = 0; t < a.n_tokens; ++t) {
          quantize_act(level, at, a.x + t * xs, q + t * act_stride[f], a.n_in);
        }
        act[f] = q;
      }
    }
    RowsArgs& ra = r[m];
    ra = rows_args_for(a, static_cast<size_t>(*row_bytes));
    ra.xa = act[f];
    ra.xa_stride = act_stride[f];
    first_item[m + 1] =
        first_item[m] + (a.n_tokens > 0 ? (a.n_out + kItemRows - 1) / kItemRows : 0);
  }
  // Decode: the products together (the attention projections) as per-thread shares.
  size_t total_bytes = 0;
  int64_t n_tokens = 1;
  for (size_t m = 0; m < n; ++m) {
    total_bytes += r[m].w_row_bytes * static_cast<size_t>(args[m].n_out);
    n_tokens = std::max(n_tokens, args[m].n_tokens);
  }
  parallel_items(pool, n_tokens, first_item[n], total_bytes, 1, [&](int64_t i0, int64_t i1) {
    run_product_items(std::span(k.data(), n), std::span(r.data(), n), args,
                      std::span(first_item.data(), n + 1), kItemRows, i0, i1);
  });
  return true;
}

}  // namespace arc::kernels::cpu

namespace arc::kernels {

bool matmul_multi(std::span<const MatmulArgs> args, Parallel* pool, Workspace* ws) {
  return cpu::matmul_multi_at(cpu::best_isa(), args, pool, ws);
}

}  // namespace arc::kernels
