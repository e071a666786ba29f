// Runtime dispatch of the CPU kernels: which instruction-set level this machine runs, and entry
// points that force one level (tests compare every available level with kernels/ref).
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "arc/kernels/matmul.h"
#include "arc/kernels/moe.h"
#include "arc/kernels/parallel.h"

namespace arc::kernels::cpu {

enum class IsaLevel : int {
  kScalar = 0,  // portable C++: dequantize a row, float dot products
  kAvx2 = 1,    // AVX2 + FMA + F16C
  kAvx512 = 2,  // AVX-512 F/BW/VL/DQ (and the OS saving ZMM state)
  kNeon = 3,    // aarch64 Advanced SIMD
  // x86: AVX-512 level plus AVX512_VNNI (vpdpbusd / vpdpwssd); integer matvec kernels only, the
  // other kernels (and ops) are the kAvx512 ones.
  kAvx512Vnni = 4,
  // x86: kAvx512Vnni plus GFNI (vgf2p8affineqb); the K-quant matvec kernels only.
  kAvx512Gfni = 5,
  // aarch64 levels above the baseline, numbered apart so x86 levels can be added below them.
  kNeonDotprod = 16,  // + SDOT (ARMv8.2 dotprod; HWCAP_ASIMDDP)
  kNeonI8mm = 17,     // + SMMLA (ARMv8.6 i8mm; HWCAP2_I8MM), and dotprod
};

// The x86 levels that include AVX-512 (kAvx512 and the levels above it): the ones that run the
// kAvx512 ops, activation quantization and sampling helpers.
constexpr bool has_avx512(IsaLevel level) {
  return level == IsaLevel::kAvx512 || level == IsaLevel::kAvx512Vnni ||
         level == IsaLevel::kAvx512Gfni;
}

std::string_view isa_name(IsaLevel level);
// CPUID feature bits and XGETBV (the OS saves the vector state) on x86-64, the kernel's
// AT_HWCAP / AT_HWCAP2 bits on aarch64; detected once.
bool isa_available(IsaLevel level);
IsaLevel best_isa();
std::vector<IsaLevel> available_isas();  // kScalar first, best last

// As matmul() / moe_ffn() but on `level`; false when the level is not available here or the
// weight type is unsupported.
bool matmul_at(IsaLevel level, const MatmulArgs& args, Parallel* pool);
bool moe_ffn_at(IsaLevel level, const MoeFfnArgs& args, Parallel* pool);
// With scratch memory kept in `ws` between calls.
bool matmul_at(IsaLevel level, const MatmulArgs& args, Parallel* pool, Workspace* ws);
bool moe_ffn_at(IsaLevel level, const MoeFfnArgs& args, Parallel* pool, Workspace* ws);
bool matmul_multi_at(IsaLevel level, std::span<const MatmulArgs> args, Parallel* pool,
                     Workspace* ws);
bool matmul_batch_at(IsaLevel level, std::span<const MatmulArgs> args, Parallel* pool,
                     Workspace* ws);

}  // namespace arc::kernels::cpu
