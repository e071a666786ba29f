// Scalar reference of the plain-form MLA attention (arc/kernels/mla.h): double precision, a
// two-pass softmax per (token, head). Slow and obvious on purpose.
#include <algorithm>
#include <cmath>
#include <vector>

#include "arc/kernels/mla.h"

namespace arc::kernels {

bool mla_plain_args_ok(const MlaPlainAttentionArgs& a) {
  return a.n_tokens >= 0 && a.n_head > 0 && a.nope_dim >= 0 && a.rope_dim >= 0 && a.v_dim > 0 &&
         a.nope_dim + a.rope_dim > 0 && a.scale != 0.0f && a.q != nullptr && a.v != nullptr &&
         a.out != nullptr && a.token_row0 != nullptr && a.token_pos != nullptr &&
         (a.nope_dim == 0 || a.k_nope != nullptr) && (a.rope_dim == 0 || a.kpe != nullptr);
}

namespace ref {

bool mla_plain_attention(const MlaPlainAttentionArgs& a) {
  if (!mla_plain_args_ok(a)) return false;
  const int64_t nh = a.n_head, dn = a.nope_dim, dr = a.rope_dim, dv = a.v_dim;
  std::vector<double> scores, acc(static_cast<size_t>(dv));
  for (int64_t t = 0; t < a.n_tokens; ++t) {
    const int64_t row0 = a.token_row0[t], pos = a.token_pos[t];
    for (int64_t h = 0; h < nh; ++h) {
      const float* q = a.q + t * a.q_token_stride + h * a.q_head_stride;  // [nope | rope]
      scores.clear();
      double mx = -INFINITY;
      for (int64_t p = 0; p <= pos; ++p) {
        const int64_t j = row0 + p;
        const float* kn = a.k_nope + (j * nh + h) * dn;
        const float* kp = a.kpe + j * a.kpe_stride;
        double s = 0.0;
        for (int64_t i = 0; i < dn; ++i) s += static_cast<double>(q[i]) * kn[i];
        for (int64_t i = 0; i < dr; ++i) s += static_cast<double>(q[dn + i]) * kp[i];
        scores.push_back(s * a.scale);
        mx = std::max(mx, scores.back());
      }
      std::fill(acc.begin(), acc.end(), 0.0);
      double sum = 0.0;
      for (int64_t p = 0; p <= pos; ++p) {
        const double e = std::exp(scores[static_cast<size_t>(p)] - mx);
        sum += e;
        const float* v = a.v + ((row0 + p) * nh + h) * dv;
        for (int64_t i = 0; i < dv; ++i) acc[static_cast<size_t>(i)] += e * v[i];
      }
      float* out = a.out + (t * nh + h) * dv;
      for (int64_t i = 0; i < dv; ++i)
        out[i] = sum > 0.0 ? static_cast<float>(acc[static_cast<size_t>(i)] / sum) : 0.0f;
    }
  }
  return true;
}

}  // namespace ref
}  // namespace arc::kernels
