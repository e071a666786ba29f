// Gated DeltaNet ops on device (semantics, state slots and snapshots of arc/kernels/delta_net.h).
//
// Sequences are found on the device: a block is launched per token and returns at once unless
// its token starts a run (t == 0 or token_state[t - 1] differs); the block that starts a run walks
// that sequence's tokens in order, so the launch needs no host-side list of sequences.
//  - conv: grid (n_tokens, channel blocks), one thread per channel holding its K-wide window in
//    registers; kernel width up to kDeltaConvMaxKernel.
//  - delta rule: grid (n_tokens, n_v_heads), a lane pair per v column j holding S[:, j] (half of
//    head_k_dim each) in registers for the whole run; q and k of the token are staged in shared
//    memory.
//    head_k_dim up to kDeltaMaxKeyDim, head_v_dim up to kDeltaMaxValueDim.
#pragma once

#include "arc/kernels/delta_net.h"
#include "cuda/common.cuh"

namespace arc::kernels::cuda::detail {

inline constexpr int64_t kDeltaConvMaxKernel = 8;
inline constexpr int64_t kDeltaMaxKeyDim = 128;
inline constexpr int64_t kDeltaMaxValueDim = 256;

}  // namespace arc::kernels::cuda::detail
