// Per-ISA variants of the non-matmul ops, each defined in its own translation unit built with that
// ISA's flags (see kernels/CMakeLists.txt). Only ops_dispatch.cpp picks among them.
#pragma once

#include <cstdint>

#include "arc/kernels/attention.h"
#include "arc/kernels/mla.h"
#include "arc/kernels/ops_isa.h"

namespace arc::kernels {

namespace scalar {
extern const OpsTable kOps;
void paged_attention(const PagedAttentionArgs& args, Parallel* pool);
}  // namespace scalar

#if defined(ARC_KERNELS_X86)
namespace avx2 {
extern const OpsTable kOps;
void paged_attention(const PagedAttentionArgs& args, Parallel* pool);
// MLA attention (cpu/mla_kernel.h); false: a shape it does not vectorise (nothing written).
bool mla_attention(const MlaAttentionArgs& args, Parallel* pool);
// dst[i] = fp32_to_fp16(src[i]) with F16C (kv_store's F16 rows).
void fp32_to_fp16_row(const float* src, uint16_t* dst, int64_t n);
}  // namespace avx2
namespace avx512 {
extern const OpsTable kOps;
void paged_attention(const PagedAttentionArgs& args, Parallel* pool);
bool mla_attention(const MlaAttentionArgs& args, Parallel* pool);
}  // namespace avx512
#endif

#if defined(__aarch64__)
namespace neon {
extern const OpsTable kOps;
void paged_attention(const PagedAttentionArgs& args, Parallel* pool);
}  // namespace neon
#endif

}  // namespace arc::kernels
