// Q4_K <-> Q4_K_R16 (arc/kernels/repack.h): a group of 16 rows is gathered into scratch and
// written back interleaved, so the matrix is rearranged in its own memory.
#include "arc/kernels/repack.h"

#include <cstring>
#include <vector>

#include "arc/kernels/cpu_dispatch.h"
#include "quant/blocks.h"

namespace arc::kernels {
namespace {

using quant::BlockQ4K;
constexpr size_t kGroupBlock = kRepackRows * sizeof(BlockQ4K);  // one super-block of 16 rows

// rows: [16][nb] row-major blocks; g: [nb][2304] interleaved.
void interleave(const BlockQ4K* rows, uint8_t* g, int64_t nb) {
  for (int64_t b = 0; b < nb; ++b) {
    uint8_t* o = g + static_cast<size_t>(b) * kGroupBlock;
    for (int r = 0; r < kRepackRows; ++r) {
      const BlockQ4K& w = rows[r * nb + b];
      std::memcpy(o + 2 * r, &w.d, 2);
      std::memcpy(o + 32 + 2 * r, &w.dmin, 2);
      for (int k = 0; k < 12; ++k) o[64 + 16 * k + r] = w.scales[k];
      for (int c = 0; c < 32; ++c) std::memcpy(o + 256 + 64 * c + 4 * r, w.qs + 4 * c, 4);
    }
  }
}

void deinterleave(const uint8_t* g, BlockQ4K* rows, int64_t nb) {
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* o = g + static_cast<size_t>(b) * kGroupBlock;
    for (int r = 0; r < kRepackRows; ++r) {
      BlockQ4K& w = rows[r * nb + b];
      std::memcpy(&w.d, o + 2 * r, 2);
      std::memcpy(&w.dmin, o + 32 + 2 * r, 2);
      for (int k = 0; k < 12; ++k) w.scales[k] = o[64 + 16 * k + r];
      for (int c = 0; c < 32; ++c) std::memcpy(w.qs + 4 * c, o + 256 + 64 * c + 4 * r, 4);
    }
  }
}

bool has_r16_kernel() {
#if defined(ARC_KERNELS_X86)
  const cpu::IsaLevel best = cpu::best_isa();
  return best == cpu::IsaLevel::kAvx512Vnni || best == cpu::IsaLevel::kAvx512Gfni;
#else
  return false;
#endif
}

}  // namespace

std::optional<DType> repacked_type(DType t, int64_t n_rows, int64_t n_in) {
  if (t != DType::Q4_K || n_rows <= 0 || n_rows % kRepackRows != 0 || n_in <= 0 ||
      n_in % quant::kQKK != 0 || !has_r16_kernel()) {
    return std::nullopt;
  }
  return DType::Q4_K_R16;
}

bool repack_rows(DType from, DType to, void* w, int64_t n_rows, int64_t n_in) {
  const bool pack = from == DType::Q4_K && to == DType::Q4_K_R16;
  const bool unpack = from == DType::Q4_K_R16 && to == DType::Q4_K;
  if ((!pack && !unpack) || n_rows < 0 || n_rows % kRepackRows != 0 || n_in <= 0 ||
      n_in % quant::kQKK != 0) {
    return false;
  }
  const int64_t nb = n_in / quant::kQKK;
  const size_t group_bytes = static_cast<size_t>(nb) * kGroupBlock;
  std::vector<uint8_t> scratch(group_bytes);
  auto* p = static_cast<uint8_t*>(w);
  for (int64_t g = 0; g < n_rows / kRepackRows; ++g, p += group_bytes) {
    if (pack) {
      std::memcpy(scratch.data(), p, group_bytes);
      interleave(reinterpret_cast<const BlockQ4K*>(scratch.data()), p, nb);
    } else {
      std::memcpy(scratch.data(), p, group_bytes);
      deinterleave(scratch.data(), reinterpret_cast<BlockQ4K*>(p), nb);
    }
  }
  return true;
}

}  // namespace arc::kernels
