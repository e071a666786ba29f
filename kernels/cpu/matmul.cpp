// matmul(): validates arguments, prepares activations in the format the chosen kernel wants and
// splits output rows over the pool. Also the portable scalar kernel (level kScalar).
#include "arc/kernels/matmul.h"

#include <algorithm>
#include <vector>

#include "arc/kernels/cpu_dispatch.h"
#include "arc/kernels/quant.h"
#include "arc/kernels/repack.h"
#include "cpu/matmul_kernels.h"

namespace arc::kernels::cpu {
namespace {

// Scalar level: dequantize each weight row once and dot it with every token.
void rows_scalar(const RowsArgs& a, int64_t o0, int64_t o1, DType t) {
  std::vector<float> w(static_cast<size_t>(a.n_in));  // [n_in]
  for (int64_t o = o0; o < o1; ++o) {
    dequantize_row(t, a.w + static_cast<size_t>(o) * a.w_row_bytes, w.data(), a.n_in);
    for (int64_t tok = 0; tok < a.n_tokens; ++tok) {
      const auto* x = reinterpret_cast<const float*>(a.xa + static_cast<size_t>(tok) * a.xa_stride);
      float acc[4] = {0, 0, 0, 0};
      int64_t i = 0;
      for (; i + 4 <= a.n_in; i += 4) {
        for (int k = 0; k < 4; ++k) acc[k] += w[i + k] * x[i + k];
      }
      for (; i < a.n_in; ++i) acc[0] += w[i] * x[i];
      const float s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
      float* y = a.y + tok * a.y_stride + o;
      *y = a.accumulate ? *y + s : s;
    }
  }
}

template <DType T>
void rows_scalar_t(const RowsArgs& a, int64_t o0, int64_t o1) {
  rows_scalar(a, o0, o1, T);
}

RowsKernel simd_kernel_for(IsaLevel level, DType t) {
  switch (level) {
#if defined(ARC_KERNELS_X86)
    case IsaLevel::kAvx2:
      return rows_kernel_avx2(t);
    case IsaLevel::kAvx512:
      return rows_kernel_avx512(t);
    case IsaLevel::kAvx512Vnni:
      return rows_kernel_avx512vnni(t);
    case IsaLevel::kAvx512Gfni:
      return rows_kernel_avx512gfni(t);
#endif
#if defined(__aarch64__)
    case IsaLevel::kNeon:
      return rows_kernel_neon(t);
    case IsaLevel::kNeonDotprod:
      return rows_kernel_neon_dotprod(t);
    case IsaLevel::kNeonI8mm:
      return rows_kernel_neon_i8mm(t);
#endif
    default:
      return {};
  }
}

}  // namespace

// A format without a SIMD kernel at this level runs the scalar kernel.
RowsKernel rows_kernel_at(IsaLevel level, DType t) {
  const RowsKernel k = simd_kernel_for(level, t);
  return k.fn != nullptr ? k : rows_kernel_scalar(t);
}

RowsKernel rows_kernel_scalar(DType t) {
  switch (t) {
    case DType::F32:
      return {rows_scalar_t<DType::F32>, ActFormat::kF32};
    case DType::F16:
      return {rows_scalar_t<DType::F16>, ActFormat::kF32};
    case DType::BF16:
      return {rows_scalar_t<DType::BF16>, ActFormat::kF32};
    case DType::Q8_0:
      return {rows_scalar_t<DType::Q8_0>, ActFormat::kF32};
    case DType::Q4_0:
      return {rows_scalar_t<DType::Q4_0>, ActFormat::kF32};
    case DType::Q4_K:
      return {rows_scalar_t<DType::Q4_K>, ActFormat::kF32};
    case DType::Q5_K:
      return {rows_scalar_t<DType::Q5_K>, ActFormat::kF32};
    case DType::Q6_K:
      return {rows_scalar_t<DType::Q6_K>, ActFormat::kF32};
    case DType::MXFP4:
      return {rows_scalar_t<DType::MXFP4>, ActFormat::kF32};
    default:
      return {};
  }
}

void quantize_act(IsaLevel level, DType act, const float* x, void* dst, int64_t n) {
#if defined(ARC_KERNELS_X86)
  if (has_avx512(level) && quantize_act_avx512(act, x, dst, n)) {
    return;
  }
#endif
  quantize_row(act, x, dst, n);
}

bool matmul_at(IsaLevel level, const MatmulArgs& a, Parallel* pool) {
  Workspace ws;
  return matmul_at(level, a, pool, &ws);
}

bool matmul_at(IsaLevel level, const MatmulArgs& a, Parallel* pool, Workspace* ws) {
  if (!isa_available(level)) return false;
  const RowsKernel k = rows_kernel_at(level, a.w_type);
  if (k.fn == nullptr || a.n_out < 0 || a.n_in < 0 || a.n_tokens < 0) return false;
  const auto row_bytes = dtype_row_bytes(a.w_type, static_cast<uint64_t>(a.n_in));
  if (!row_bytes) return false;
  if (a.n_out == 0 || a.n_tokens == 0) return true;
  RowsArgs r;
  r.w = static_cast<const uint8_t*>(a.w);
  r.w_row_bytes = a.w_row_bytes != 0 ? a.w_row_bytes : static_cast<size_t>(*row_bytes);
  r.w_end = r.w + r.w_row_bytes * static_cast<size_t>(a.n_out);
  r.n_in = a.n_in;
  r.n_tokens = a.n_tokens;
  r.y = a.y;
  r.y_stride = a.y_stride != 0 ? a.y_stride : a.n_out;
  r.accumulate = a.accumulate;
  const int64_t xs = a.x_stride != 0 ? a.x_stride : a.n_in;

  if (k.act == ActFormat::kF32) {
    r.xa = reinterpret_cast<const uint8_t*>(a.x);
    r.xa_stride = static_cast<size_t>(xs) * sizeof(float);
  } else {
    const DType at = act_dtype(k.act);
    const auto act_bytes = dtype_row_bytes(at, static_cast<uint64_t>(a.n_in));
    if (!act_bytes) return false;  // n_in not a multiple of the activation block (256 or 32)
    r.xa_stride = static_cast<size_t>(*act_bytes);
    uint8_t* prepared =
        ws->get<uint8_t>(Workspace::kMatmulAct, r.xa_stride * static_cast<size_t>(a.n_tokens));
    if (prepared == nullptr) return false;
    parallel_for(pool, a.n_tokens, 16, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        quantize_act(level, at, a.x + t * xs, prepared + static_cast<size_t>(t) * r.xa_stride,
                     a.n_in);
      }
    });
    r.xa = prepared;
  }
  // Rows are the unit of work (groups of 16 for the interleaved layouts, whose kernels compute
  // a group at a time); prefill ranges of at least 16 rows keep the per-range overhead small.
  const int64_t unit = dtype_is_internal(a.w_type) ? kRepackRows : 1;
  parallel_items(pool, a.n_tokens, (a.n_out + unit - 1) / unit,
                 r.w_row_bytes * static_cast<size_t>(a.n_out), (16 + unit - 1) / unit,
                 [&](int64_t i0, int64_t i1) { k.fn(r, i0 * unit, std::min(a.n_out, i1 * unit)); });
  return true;
}

}  // namespace arc::kernels::cpu

namespace arc::kernels {

bool matmul(const MatmulArgs& args, Parallel* pool) {
  return cpu::matmul_at(cpu::best_isa(), args, pool);
}

bool matmul(const MatmulArgs& args, Parallel* pool, Workspace* ws) {
  return cpu::matmul_at(cpu::best_isa(), args, pool, ws);
}

}  // namespace arc::kernels
