// Sampling helpers on device: greedy argmax per row and top-k with log-probabilities, so the host
// reads back a few ids instead of whole vocabulary rows.
#pragma once

#include "cuda/common.cuh"

namespace arc::kernels::cuda::detail {

inline constexpr int64_t kTopKChunk = 4096;  // vocabulary entries per first-stage block
inline constexpr int64_t kTopKMax = 256;     // largest k supported

size_t sampling_scratch_bytes(int64_t n_rows, int64_t n_vocab, int64_t k);

}  // namespace arc::kernels::cuda::detail
