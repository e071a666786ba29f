// MoE on device. Routing: one warp per token (softmax, or sigmoid + selection bias), top-k by
// repeated warp argmax (ties to the lower expert id, as the reference's stable sort),
// renormalisation and scale.
// Expert FFN, decode (n_tokens <= kMatvecMaxTokens): every (token, expert) pair in one matvec
// launch per projection, reading only the selected experts' rows. Prefill: pairs bucketed by
// expert in scratch (counts, offsets, a table of 64-row tiles), then grouped tensor-core matmuls
// so each expert's weights are read once per tile of its tokens; a combine kernel sums the k
// outputs of each token in a fixed order (deterministic).
#pragma once

#include "cuda/common.cuh"

namespace arc::kernels::cuda::detail {

inline constexpr int64_t kMoeChunkTokens = 1024;  // prefill tokens per pass (bounds scratch)

size_t moe_scratch_bytes(int64_t max_tokens, int64_t n_embd, int64_t n_ff, int64_t n_expert,
                         int64_t k);

}  // namespace arc::kernels::cuda::detail
