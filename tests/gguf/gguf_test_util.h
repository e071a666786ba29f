// Helpers shared by the GGUF tests: deterministic tensor bytes and small valid files.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "arc/gguf.h"

namespace arc::gguf::testing {

// n bytes of a fixed pseudo-random pattern (the reader never interprets tensor bytes).
inline std::vector<uint8_t> pattern_bytes(size_t n, uint32_t seed) {
  std::vector<uint8_t> out(n);
  uint32_t x = seed * 2654435761u + 1;
  for (auto& b : out) {
    x = x * 1664525u + 1013904223u;
    b = static_cast<uint8_t>(x >> 24);
  }
  return out;
}

// Bytes of a tensor of `shape` in `type` (shape[0] must be a block multiple).
inline size_t tensor_bytes(DType type, const std::vector<int64_t>& shape) {
  const DTypeInfo* info = dtype_info(type);
  size_t rows = 1;
  for (size_t i = 1; i < shape.size(); ++i) rows *= static_cast<size_t>(shape[i]);
  return static_cast<size_t>(shape[0]) / info->block_elems * info->block_bytes * rows;
}

// A small valid file: a few metadata entries and three tensors.
inline std::vector<uint8_t> small_valid_file() {
  Writer w;
  w.set("general.architecture", Value::str("llama"));
  w.set("llama.block_count", Value::u32(2));
  Array a;
  a.elem_type = ValueType::kString;
  a.items = {Value::str("a"), Value::str("bc")};
  w.set("tokenizer.ggml.tokens", Value::array(a));
  auto add = [&](const std::string& name, DType t, std::vector<int64_t> shape, uint32_t seed) {
    auto data = pattern_bytes(tensor_bytes(t, shape), seed);
    (void)w.add_tensor(name, t, shape, data);
  };
  add("token_embd.weight", DType::F32, {4, 3}, 1);
  add("blk.0.attn_q.weight", DType::Q8_0, {32, 2}, 2);
  add("output_norm.weight", DType::F16, {4}, 3);
  return w.to_bytes();
}

// A fresh empty directory under the system temp dir for files a test writes.
inline std::filesystem::path temp_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("arc_gguf_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace arc::gguf::testing
