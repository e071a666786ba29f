// get_rows: one block per id; quantized rows are read 16 elements per thread.
#include "cuda/get_rows.cuh"
#include "cuda/matmul.cuh"
#include "cuda/quant_blocks.cuh"

namespace arc::kernels::cuda {
namespace detail {
namespace {

// table: [n_rows] rows of row_bytes; out: [n_ids, d].
template <int T>
__global__ void get_rows_kernel(const uint8_t* __restrict__ table, size_t row_bytes, int64_t n_rows,
                                int64_t d, const int32_t* __restrict__ ids, float* out) {
  const int32_t id = ids[blockIdx.x];
  float* dst = out + static_cast<int64_t>(blockIdx.x) * d;
  if (id < 0 || id >= n_rows) {
    for (int64_t i = threadIdx.x; i < d; i += blockDim.x) dst[i] = 0.0f;
    return;
  }
  const uint8_t* row = table + static_cast<size_t>(id) * row_bytes;
  if constexpr (T == kF32 || T == kF16 || T == kBF16) {
    for (int64_t i = threadIdx.x; i < d; i += blockDim.x) dst[i] = load_float_elem<T>(row, i);
  } else {
    for (int64_t c = threadIdx.x; c < d / 16; c += blockDim.x) {
      float v[16];
      dequant16<T>(row, c, v);
#pragma unroll
      for (int i = 0; i < 16; ++i) dst[16 * c + i] = v[i];
    }
  }
}

}  // namespace
}  // namespace detail

bool get_rows(const Context& ctx, DType t, const void* table, int64_t n_rows, int64_t d,
              const int32_t* ids, int64_t n_ids, float* out) {
  using namespace detail;
  if (d < 0 || n_ids < 0 || n_ids > 0x7fffffff) return false;
  if (!is_float_format(t) && !is_quant_format(t)) return false;
  const auto row_bytes = dtype_row_bytes(t, static_cast<uint64_t>(d));
  if (!row_bytes || !weights_aligned(t, table, *row_bytes, 0)) return false;
  if (n_ids == 0 || d == 0) return true;
  return dispatch_format(t, [&](auto tc) {
    constexpr int T = decltype(tc)::value;
    ARC_LAUNCH(static_cast<unsigned>(n_ids), 128, 0, ctx.stream, get_rows_kernel<T>)
    (static_cast<const uint8_t*>(table), *row_bytes, n_rows, d, ids, out);
  });
}

}  // namespace arc::kernels::cuda
