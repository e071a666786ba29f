// Helpers shared by the kernel tests: random data, quantized weight buffers with a deliberate
// misalignment, and per-level naming.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "arc/kernels/quant.h"

namespace arc::kernels::testing {

inline std::vector<float> random_floats(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = nd(rng);
  return v;
}

// Weights [n_out, n_in] quantized to t, stored `offset` bytes into the returned buffer (so the
// kernels see rows at unaligned addresses).
struct QuantMatrix {
  std::vector<uint8_t> storage;
  size_t offset = 0;
  size_t row_bytes = 0;
  const uint8_t* data() const { return storage.data() + offset; }
};

inline QuantMatrix quantize_matrix(DType t, const std::vector<float>& w, int64_t n_out,
                                   int64_t n_in, size_t offset) {
  QuantMatrix m;
  m.row_bytes = *dtype_row_bytes(t, n_in);
  m.offset = offset;
  m.storage.resize(offset + m.row_bytes * n_out + 64);
  for (int64_t o = 0; o < n_out; ++o) {
    quantize_row(t, &w[o * n_in], m.storage.data() + offset + o * m.row_bytes, n_in);
  }
  return m;
}

}  // namespace arc::kernels::testing
