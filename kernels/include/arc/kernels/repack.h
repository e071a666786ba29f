// Weight layouts rearranged at load for the CPU kernels. Decode streams every weight byte once
// per token, and a Q4_K row-by-row kernel spends about 40 instructions per 144-byte super-block
// (scales unpacked per row, a horizontal sum per row): one core computes no faster than it
// reads DRAM. Q4_K_R16 keeps the same bytes but interleaves 16 rows per super-block, so one
// 512-bit register holds the same 4 columns of 16 rows: the activations are broadcast, every
// lane is a row, and the scales of 16 rows unpack in one go (about 15 instructions per row and
// super-block).
//
// Q4_K_R16 layout: rows in groups of 16; a group's super-blocks follow each other (group g at
// byte g * 16 * row_bytes, as for row-major rows), each super-block b of a group in 2304 bytes:
//   [0, 32)       d of rows 0..15 (fp16)
//   [32, 64)      dmin of rows 0..15 (fp16)
//   [64, 256)     scales: byte k (0..11) of rows 0..15 at 64 + 16k + row
//   [256, 2304)   qs: 32 chunks of 4 bytes; chunk c of rows 0..15 at 256 + 64c + 4 * row
// (chunk c holds bytes 4c..4c+3 of the row's qs: the low nibbles are values 64(c/8) + 4(c%8) ..
// + 3, the high nibbles the same plus 32).
#pragma once

#include <cstdint>
#include <optional>

#include "arc/kernels/dtype.h"

namespace arc::kernels {

constexpr int64_t kRepackRows = 16;

// The layout `t` is rearranged into on this CPU for matrices of n_rows rows of n_in values
// (n_rows counts the rows of one expert for stacked experts), or nullopt to keep it: only
// Q4_K, with rows a multiple of 16, on CPUs with the kernel (AVX-512 VNNI).
std::optional<DType> repacked_type(DType t, int64_t n_rows, int64_t n_in);

// Rearranges n_rows rows (a multiple of 16) of n_in values from `from` into `to` in place,
// group by group (16 rows of scratch). Only Q4_K <-> Q4_K_R16; false for anything else.
bool repack_rows(DType from, DType to, void* w, int64_t n_rows, int64_t n_in);

}  // namespace arc::kernels
