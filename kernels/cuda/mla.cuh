// Multi-head latent attention on device (semantics and cache layout of arc/kernels/mla.h): the
// latent store, and attention over the latent rows with one block per (head, token) whose warps
// take interleaved positions with an online softmax each, merged at the end. Latent width up to
// kMlaMaxRank, rope part up to kMlaMaxRope.
#pragma once

#include "arc/kernels/mla.h"
#include "cuda/common.cuh"

namespace arc::kernels::cuda::detail {

inline constexpr int64_t kMlaMaxRank = 512;
inline constexpr int64_t kMlaMaxRope = 64;
inline constexpr int kMlaWarps = 4;

}  // namespace arc::kernels::cuda::detail
