// CPU feature detection for runtime dispatch. A feature counts only when CPUID reports it AND the
// OS enabled the register state for it in XCR0 (XGETBV): a kernel without OS support for YMM/ZMM
// state would fault or corrupt registers on context switches. On aarch64 the kernel reports what
// the CPU (and itself) supports in the AT_HWCAP / AT_HWCAP2 auxiliary vector entries.
#include <string_view>
#include <vector>

#include "arc/kernels/cpu_dispatch.h"

#if defined(__x86_64__) || defined(_M_X64)
#include <cpuid.h>
#endif
#if defined(__aarch64__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

namespace arc::kernels::cpu {
namespace {

struct Features {
  bool avx2 = false;
  bool avx512 = false;
  bool avx512vnni = false;
  bool avx512gfni = false;  // avx512vnni + GFNI
  bool neon = false;
  bool neon_dotprod = false;  // SDOT / UDOT
  bool neon_i8mm = false;     // SMMLA / UMMLA / USMMLA
};

#if defined(__x86_64__) || defined(_M_X64)
uint64_t read_xcr0() {
  uint32_t eax, edx;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<uint64_t>(edx) << 32) | eax;
}

Features detect() {
  Features f;
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return f;
  const bool osxsave = ecx & (1u << 27);
  const bool avx = ecx & (1u << 28);
  const bool fma = ecx & (1u << 12);
  const bool f16c = ecx & (1u << 29);
  if (!osxsave || !avx) return f;
  const uint64_t xcr0 = read_xcr0();
  const bool ymm_state = (xcr0 & 0x6) == 0x6;    // SSE + AVX state
  const bool zmm_state = (xcr0 & 0xe6) == 0xe6;  // + opmask, ZMM_Hi256, Hi16_ZMM
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return f;
  const bool avx2 = ebx & (1u << 5);
  const bool avx512f = ebx & (1u << 16);
  const bool avx512dq = ebx & (1u << 17);
  const bool avx512bw = ebx & (1u << 30);
  const bool avx512vl = ebx & (1u << 31);
  const bool avx512vnni = ecx & (1u << 11);
  const bool gfni = ecx & (1u << 8);
  f.avx2 = ymm_state && avx2 && fma && f16c;
  f.avx512 = f.avx2 && zmm_state && avx512f && avx512dq && avx512bw && avx512vl;
  f.avx512vnni = f.avx512 && avx512vnni;
  f.avx512gfni = f.avx512vnni && gfni;
  return f;
}
#else
Features detect() {
  Features f;
#if defined(__aarch64__)
  f.neon = true;  // Advanced SIMD is mandatory on aarch64
  const unsigned long hwcap = getauxval(AT_HWCAP), hwcap2 = getauxval(AT_HWCAP2);
  f.neon_dotprod = (hwcap & HWCAP_ASIMDDP) != 0;
  // The i8mm kernels also use SDOT (matmul_neon_i8mm.cpp is built with +dotprod+i8mm).
  f.neon_i8mm = f.neon_dotprod && (hwcap2 & HWCAP2_I8MM) != 0;
#endif
  return f;
}
#endif

const Features& features() {
  static const Features f = detect();  // immutable after first use
  return f;
}

}  // namespace

std::string_view isa_name(IsaLevel level) {
  switch (level) {
    case IsaLevel::kScalar:
      return "scalar";
    case IsaLevel::kAvx2:
      return "avx2";
    case IsaLevel::kAvx512:
      return "avx512";
    case IsaLevel::kNeon:
      return "neon";
    case IsaLevel::kAvx512Vnni:
      return "avx512vnni";
    case IsaLevel::kAvx512Gfni:
      return "avx512gfni";
    case IsaLevel::kNeonDotprod:
      return "neon-dotprod";
    case IsaLevel::kNeonI8mm:
      return "neon-i8mm";
  }
  return "unknown";
}

bool isa_available(IsaLevel level) {
  switch (level) {
    case IsaLevel::kScalar:
      return true;
#if defined(ARC_KERNELS_X86)
    case IsaLevel::kAvx2:
      return features().avx2;
    case IsaLevel::kAvx512:
      return features().avx512;
    case IsaLevel::kAvx512Vnni:
      return features().avx512vnni;
    case IsaLevel::kAvx512Gfni:
      return features().avx512gfni;
#endif
#if defined(__aarch64__)
    case IsaLevel::kNeon:
      return features().neon;
    case IsaLevel::kNeonDotprod:
      return features().neon_dotprod;
    case IsaLevel::kNeonI8mm:
      return features().neon_i8mm;
#endif
    default:
      return false;
  }
}

IsaLevel best_isa() {
  static const IsaLevel best = available_isas().back();  // immutable after first use
  return best;
}

std::vector<IsaLevel> available_isas() {
  std::vector<IsaLevel> out;
  for (IsaLevel l : {IsaLevel::kScalar, IsaLevel::kNeon, IsaLevel::kAvx2, IsaLevel::kAvx512,
                     IsaLevel::kAvx512Vnni, IsaLevel::kAvx512Gfni}) {
    if (isa_available(l)) out.push_back(l);
  }
#if defined(__aarch64__)
  for (IsaLevel l : {IsaLevel::kNeonDotprod, IsaLevel::kNeonI8mm}) {
    if (isa_available(l)) out.push_back(l);
  }
#endif
  return out;
}

}  // namespace arc::kernels::cpu
