// Tensor element types with the numeric ids GGUF files use (ggml_type). Values are serialized in
// files: never renumber, only add.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace arc {

enum class DType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  IQ2_XXS = 16,
  IQ2_XS = 17,
  IQ3_XXS = 18,
  IQ1_S = 19,
  IQ4_NL = 20,
  IQ3_S = 21,
  IQ2_S = 22,
  IQ4_XS = 23,
  I8 = 24,
  I16 = 25,
  I32 = 26,
  I64 = 27,
  F64 = 28,
  IQ1_M = 29,
  BF16 = 30,
  TQ1_0 = 34,
  TQ2_0 = 35,
  MXFP4 = 39,
  // Internal layouts, never in a file (the GGUF parser refuses them): the same bytes as their
  // base type, rearranged at load for the CPU kernels (arc/kernels/repack.h).
  Q8_0_R16 = 0x10000 + 8,    // Q8_0 in groups of 16 rows, interleaved per block
  Q4_K_R16 = 0x10000 + 12,   // Q4_K in groups of 16 rows, interleaved per super-block
  Q6_K_R16 = 0x10000 + 14,   // Q6_K in groups of 16 rows, interleaved per super-block
  MXFP4_R16 = 0x10000 + 39,  // MXFP4 in groups of 16 rows, interleaved per block
};

// Layout of one type: `block_elems` values are stored in `block_bytes` bytes. A row of n values
// (n a multiple of block_elems) takes n / block_elems * block_bytes bytes.
struct DTypeInfo {
  DType type;
  std::string_view name;  // as GGUF tools print it: "Q4_K", "F16", ...
  uint32_t block_elems;
  uint32_t block_bytes;
  bool quantized;
};

// Every type GGUF defines that a file may contain (for sizes); nullptr for an unknown id.
const DTypeInfo* dtype_info(uint32_t id);
inline const DTypeInfo* dtype_info(DType t) {
  return dtype_info(static_cast<uint32_t>(t));
}

// Whether t is one of the internal layouts above (not a GGUF type).
constexpr bool dtype_is_internal(DType t) {
  return static_cast<uint32_t>(t) >= 0x10000;
}

std::optional<DType> dtype_from_name(std::string_view name);
std::string_view dtype_name(DType t);

// Bytes of a row of n elements; nullopt when n is not a multiple of the block size or the
// type is unknown.
std::optional<uint64_t> dtype_row_bytes(DType t, uint64_t n);

}  // namespace arc
