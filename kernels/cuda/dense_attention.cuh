// Dense (non-causal, non-paged) attention within segments on device, the semantics of
// kernels::dense_attention (arc/kernels/vision_ops.h): the vision encoder's full attention per
// image or frame. One block per (group of kRowsPerBlock query rows, head); each warp owns one query
// row and keeps an online softmax; keys and values pass through shared memory kKeyTile rows at a
// time, one key per lane for the scores. F32 math. head_dim: even, up to kDenseMaxHeadDim.
#pragma once

#include "arc/kernels/vision_ops.h"
#include "cuda/common.cuh"

namespace arc::kernels::cuda::detail {

inline constexpr int kDenseRowsPerBlock = 4;
inline constexpr int kDenseKeyTile = 32;  // one key per lane
inline constexpr int64_t kDenseMaxHeadDim = 256;

}  // namespace arc::kernels::cuda::detail
