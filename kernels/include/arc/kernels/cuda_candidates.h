// The sampling candidates (arc/kernels/candidates.h) on a CUDA stream. Plain C++ header.
#pragma once

#include "arc/kernels/candidates.h"
#include "arc/kernels/cuda_ops.h"

namespace arc::kernels::cuda {

// Enqueues kernels::TopCandidatesArgs (every pointer device memory) on ctx.stream: one block per
// row, no scratch, no host synchronisation. The results equal top_candidates_ref bit for bit
// (ids, values, max); the lse and the mass to the rounding of another summation order (~1e-15
// relative). `a.work` must be set when any row has penalties. False (nothing enqueued) for
// shapes out of range.
bool top_candidates(const Context& ctx, const TopCandidatesArgs& a);

}  // namespace arc::kernels::cuda
