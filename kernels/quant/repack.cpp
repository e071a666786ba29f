// Q4_K <-> Q4_K_R16, Q6_K <-> Q6_K_R16, Q8_0 <-> Q8_0_R16 and MXFP4 <-> MXFP4_R16
// (arc/kernels/repack.h): a group of 16
// rows is gathered into scratch and written back interleaved, so the matrix is rearranged in its
// own memory.
#include "arc/kernels/repack.h"

#include <cstddef>
#include <cstring>
#include <vector>

#include "arc/kernels/cpu_dispatch.h"
#include "arc/kernels/parallel.h"
#include "quant/blocks.h"

namespace arc::kernels {
namespace {

using quant::BlockMxfp4;
using quant::BlockQ4K;
using quant::BlockQ6K;
using quant::BlockQ8_0;
constexpr size_t kQ4KGroup = kRepackRows * sizeof(BlockQ4K);      // one super-block of 16 rows
constexpr size_t kQ6KGroup = kRepackRows * sizeof(BlockQ6K);      // one super-block of 16 rows
constexpr size_t kQ80Group = kRepackRows * sizeof(BlockQ8_0);     // one block of 16 rows
constexpr size_t kMxfp4Group = kRepackRows * sizeof(BlockMxfp4);  // one block of 16 rows

// Copies a field of n bytes between its place in a row-major block and its interleaved place:
// into the interleaved one when packing, back when not. Flip (n == 4) flips every byte's sign
// bit on the way, Q8_0's +128 (the same operation both ways).
template <bool Pack, bool Flip = false>
inline void move(uint8_t* row_major, uint8_t* interleaved, size_t n) {
  uint8_t* dst = Pack ? interleaved : row_major;
  const uint8_t* src = Pack ? row_major : interleaved;
  if constexpr (!Flip) {
    std::memcpy(dst, src, n);
    return;
  }
  uint32_t v;
  std::memcpy(&v, src, 4);
  v ^= 0x80808080u;
  std::memcpy(dst, &v, 4);
}

// rows: [16][nb] row-major blocks; g: [nb][group block] interleaved. Packing reads rows and
// writes g; unpacking the reverse.
template <bool Pack>
void rearrange(BlockQ4K*, uint8_t* rows, uint8_t* g, int64_t nb) {
  for (int64_t b = 0; b < nb; ++b) {
    uint8_t* o = g + static_cast<size_t>(b) * kQ4KGroup;
    for (int r = 0; r < kRepackRows; ++r) {
      uint8_t* w = rows + static_cast<size_t>(r * nb + b) * sizeof(BlockQ4K);
      move<Pack>(w + offsetof(BlockQ4K, d), o + 2 * r, 2);
      move<Pack>(w + offsetof(BlockQ4K, dmin), o + 32 + 2 * r, 2);
      for (int k = 0; k < 12; ++k)
        move<Pack>(w + offsetof(BlockQ4K, scales) + k, o + 64 + 16 * k + r, 1);
      for (int c = 0; c < 32; ++c)
        move<Pack>(w + offsetof(BlockQ4K, qs) + 4 * c, o + 256 + 64 * c + 4 * r, 4);
    }
  }
}
template <bool Pack>
void rearrange(BlockQ6K*, uint8_t* rows, uint8_t* g, int64_t nb) {
  for (int64_t b = 0; b < nb; ++b) {
    uint8_t* o = g + static_cast<size_t>(b) * kQ6KGroup;
    for (int r = 0; r < kRepackRows; ++r) {
      uint8_t* w = rows + static_cast<size_t>(r * nb + b) * sizeof(BlockQ6K);
      move<Pack>(w + offsetof(BlockQ6K, d), o + 2 * r, 2);
      for (int j = 0; j < 16; ++j)
        move<Pack>(w + offsetof(BlockQ6K, scales) + j, o + 32 + 32 * (j / 2) + 2 * r + j % 2, 1);
      for (int c = 0; c < 32; ++c)
        move<Pack>(w + offsetof(BlockQ6K, ql) + 4 * c, o + 288 + 64 * c + 4 * r, 4);
      for (int c = 0; c < 16; ++c)
        move<Pack>(w + offsetof(BlockQ6K, qh) + 4 * c, o + 2336 + 64 * c + 4 * r, 4);
    }
  }
}
template <bool Pack>
void rearrange(BlockQ8_0*, uint8_t* rows, uint8_t* g, int64_t nb) {
  for (int64_t b = 0; b < nb; ++b) {
    uint8_t* o = g + static_cast<size_t>(b) * kQ80Group;
    for (int r = 0; r < kRepackRows; ++r) {
      uint8_t* w = rows + static_cast<size_t>(r * nb + b) * sizeof(BlockQ8_0);
      move<Pack>(w + offsetof(BlockQ8_0, d), o + 2 * r, 2);
      for (int c = 0; c < quant::kQK / 4; ++c) {
        move<Pack, true>(w + offsetof(BlockQ8_0, qs) + 4 * c, o + 32 + 64 * c + 4 * r, 4);
      }
    }
  }
}

template <bool Pack>
void rearrange(BlockMxfp4*, uint8_t* rows, uint8_t* g, int64_t nb) {
  for (int64_t b = 0; b < nb; ++b) {
    uint8_t* o = g + static_cast<size_t>(b) * kMxfp4Group;
    for (int r = 0; r < kRepackRows; ++r) {
      uint8_t* w = rows + static_cast<size_t>(r * nb + b) * sizeof(BlockMxfp4);
      move<Pack>(w + offsetof(BlockMxfp4, e), o + r, 1);
      for (int c = 0; c < 4; ++c)
        move<Pack>(w + offsetof(BlockMxfp4, qs) + 4 * c, o + 16 + 64 * c + 4 * r, 4);
    }
  }
}

// Rearranges every group of 16 rows of nb blocks of type Block through a scratch copy of the
// group; groups are independent, so they are spread over `pool` (a model's worth takes about a
// second on one core).
template <class Block>
void each_group(uint8_t* p, int64_t n_rows, int64_t nb, bool pack, Parallel* pool) {
  const size_t group_bytes = static_cast<size_t>(nb) * kRepackRows * sizeof(Block);
  parallel_for(pool, n_rows / kRepackRows, 16, [&](int64_t g0, int64_t g1) {
    std::vector<uint8_t> scratch(group_bytes);
    for (int64_t g = g0; g < g1; ++g) {
      uint8_t* q = p + static_cast<size_t>(g) * group_bytes;
      std::memcpy(scratch.data(), q, group_bytes);
      // Packing reads the row-major copy; unpacking reads the interleaved copy.
      if (pack) {
        rearrange<true>(static_cast<Block*>(nullptr), scratch.data(), q, nb);
      } else {
        rearrange<false>(static_cast<Block*>(nullptr), q, scratch.data(), nb);
      }
    }
  });
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
  if ((t != DType::Q4_K && t != DType::Q6_K && t != DType::Q8_0 && t != DType::MXFP4) ||
      n_rows <= 0 || n_rows % kRepackRows != 0 ||
      !dtype_row_bytes(t, static_cast<uint64_t>(n_in)) || n_in <= 0 || !has_r16_kernel()) {
    return std::nullopt;
  }
  switch (t) {
    case DType::Q4_K:
      return DType::Q4_K_R16;
    case DType::Q6_K:
      return DType::Q6_K_R16;
    case DType::MXFP4:
      return DType::MXFP4_R16;
    default:
      return DType::Q8_0_R16;
  }
}

DType row_major_type(DType t) {
  switch (t) {
    case DType::Q4_K_R16:
      return DType::Q4_K;
    case DType::Q6_K_R16:
      return DType::Q6_K;
    case DType::Q8_0_R16:
      return DType::Q8_0;
    case DType::MXFP4_R16:
      return DType::MXFP4;
    default:
      return t;
  }
}

bool repack_rows(DType from, DType to, void* w, int64_t n_rows, int64_t n_in, Parallel* pool) {
  const bool pack = dtype_is_internal(to) && row_major_type(to) == from && from != to;
  const bool unpack = dtype_is_internal(from) && row_major_type(from) == to && from != to;
  const auto row = dtype_row_bytes(pack ? from : to, static_cast<uint64_t>(n_in));
  if ((!pack && !unpack) || n_rows < 0 || n_rows % kRepackRows != 0 || n_in <= 0 || !row) {
    return false;
  }
  auto* p = static_cast<uint8_t*>(w);
  switch (row_major_type(pack ? to : from)) {
    case DType::Q4_K:
      each_group<BlockQ4K>(p, n_rows, n_in / quant::kQKK, pack, pool);
      break;
    case DType::Q6_K:
      each_group<BlockQ6K>(p, n_rows, n_in / quant::kQKK, pack, pool);
      break;
    case DType::MXFP4:
      each_group<BlockMxfp4>(p, n_rows, n_in / quant::kQK, pack, pool);
      break;
    default:
      each_group<BlockQ8_0>(p, n_rows, n_in / quant::kQK, pack, pool);
  }
  return true;
}

}  // namespace arc::kernels
