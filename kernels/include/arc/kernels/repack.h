// Weight layouts rearranged at load for the CPU kernels. Decode streams every weight byte once
// per token, and the row-by-row kernels spend many instructions per byte (Q4_K about 40 per
// 144-byte super-block: scales unpacked per row, a horizontal sum per row; Q8_0 about 15 per two
// 34-byte blocks): one core then computes little faster than it reads DRAM, and the two do not
// fully overlap. The *_R16 layouts keep the same bytes but interleave 16 rows per block, so one
// 512-bit register holds the same 4 columns of 16 rows: the activations are broadcast, every
// lane is a row, and per-block scales of 16 rows load (and unpack) in one go.
//
// Both: rows in groups of 16; a group's blocks follow each other (group g at byte
// g * 16 * row_bytes, as for row-major rows).
//
// Q4_K_R16, each super-block b of a group in 2304 bytes:
//   [0, 32)       d of rows 0..15 (fp16)
//   [32, 64)      dmin of rows 0..15 (fp16)
//   [64, 256)     scales: byte k (0..11) of rows 0..15 at 64 + 16k + row
//   [256, 2304)   qs: 32 chunks of 4 bytes; chunk c of rows 0..15 at 256 + 64c + 4 * row
// (chunk c holds bytes 4c..4c+3 of the row's qs: the low nibbles are values 64(c/8) + 4(c%8) ..
// + 3, the high nibbles the same plus 32).
//
// Q8_0_R16, each block b of a group in 544 bytes:
//   [0, 32)       d of rows 0..15 (fp16)
//   [32, 544)     qs + 128 as unsigned bytes (vpdpbusd's unsigned operand): chunk c (values
//                 4c..4c+3) of rows 0..15 at 32 + 64c + 4 * row
//
// Q6_K_R16, each super-block b of a group in 3360 bytes:
//   [0, 32)       d of rows 0..15 (fp16)
//   [32, 288)     scales in pairs: scales 2p, 2p + 1 of rows 0..15 at 32 + 32p + 2 * row (+ 1)
//   [288, 2336)   ql: 32 chunks of 4 bytes; chunk c of rows 0..15 at 288 + 64c + 4 * row
//   [2336, 3360)  qh: 16 chunks of 4 bytes; chunk c of rows 0..15 at 2336 + 64c + 4 * row
// (chunks hold bytes 4c..4c+3 of the row's ql / qh, unchanged).
//
// MXFP4_R16, each block b of a group in 272 bytes:
//   [0, 16)       e (E8M0 scale) of rows 0..15
//   [16, 272)     qs: 4 chunks of 4 bytes; chunk c of rows 0..15 at 16 + 64c + 4 * row
// (chunk c holds bytes 4c..4c+3 of the row's qs: the low nibbles are values 4c..4c+3, the high
// nibbles values 16 + 4c .. 16 + 4c + 3).
#pragma once

#include <cstdint>
#include <optional>

#include "arc/kernels/dtype.h"

namespace arc::kernels {

class Parallel;

constexpr int64_t kRepackRows = 16;

// The layout `t` is rearranged into on this CPU for matrices of n_rows rows of n_in values
// (n_rows counts the rows of one expert for stacked experts), or nullopt to keep it: Q4_K, Q6_K,
// Q8_0 and MXFP4, with rows a multiple of 16, on CPUs with the kernels (AVX-512 VNNI).
std::optional<DType> repacked_type(DType t, int64_t n_rows, int64_t n_in);

// Rearranges n_rows rows (a multiple of 16) of n_in values from `from` into `to` in place,
// group by group (16 rows of scratch), on `pool` when given. Q4_K <-> Q4_K_R16, Q6_K <->
// Q6_K_R16, Q8_0 <-> Q8_0_R16 and MXFP4 <-> MXFP4_R16; false for anything else.
bool repack_rows(DType from, DType to, void* w, int64_t n_rows, int64_t n_in,
                 Parallel* pool = nullptr);

// The file type an internal layout was rearranged from (t itself for a file type).
DType row_major_type(DType t);

}  // namespace arc::kernels
