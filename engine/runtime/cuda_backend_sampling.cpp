// CudaBackend as a CandidateSelector: the sampling candidates of a step's logit rows selected on
// the stream (kernels/cuda/candidates.cu), so a step downloads k ids and values per row.
#include <string>

#include "arc/kernels/cuda_candidates.h"
#include "runtime/cuda_backend.h"

namespace arc {

void CudaBackend::top_candidates(const kernels::TopCandidatesArgs& a) {
  // No scratch: the kernel works in shared memory and the caller's `work` rows.
  if (!prepare({}, a.n_rows)) return;
  finish("top_candidates", kernels::cuda::top_candidates(ctx(), a),
         std::to_string(a.n_rows) + " rows of " + std::to_string(a.n_vocab) + " logits, k " +
             std::to_string(a.k_stride));
}

}  // namespace arc
