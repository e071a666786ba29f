// Plain-form MLA attention on the CPU (arc/kernels/mla.h): work items are (token, head), each an
// online softmax over the token's rows in blocks of kBlock positions (scores of a block first,
// then one pass over their values). An item never splits a head's positions, so results do not
// depend on the thread count.
#include <algorithm>
#include <cmath>
#include <vector>

#include "arc/kernels/mla.h"

namespace arc::kernels {

namespace {

constexpr int64_t kBlock = 64;

// Sum of a[i] * b[i] in eight interleaved partial sums (vectorisable without reassociation).
inline float dot(const float* a, const float* b, int64_t n) {
  float s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int l = 0; l < 8; ++l) s[l] += a[i + l] * b[i + l];
  }
  float tail = 0.0f;
  for (; i < n; ++i) tail += a[i] * b[i];
  return ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7])) + tail;
}

void attend_plain(const MlaPlainAttentionArgs& a, int64_t t, int64_t h, std::vector<float>& acc) {
  const int64_t nh = a.n_head, dn = a.nope_dim, dr = a.rope_dim, dv = a.v_dim;
  const int64_t row0 = a.token_row0[t], pos = a.token_pos[t];
  const float* q = a.q + t * a.q_token_stride + h * a.q_head_stride;
  acc.assign(static_cast<size_t>(dv), 0.0f);
  float m = -INFINITY, sum = 0.0f, s[kBlock];
  for (int64_t p0 = 0; p0 <= pos; p0 += kBlock) {
    const int64_t n = std::min(kBlock, pos + 1 - p0);
    float bm = m;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t j = row0 + p0 + i;
      float x = dn > 0 ? dot(q, a.k_nope + (j * nh + h) * dn, dn) : 0.0f;
      if (dr > 0) x += dot(q + dn, a.kpe + j * a.kpe_stride, dr);
      s[i] = x * a.scale;
      bm = std::max(bm, s[i]);
    }
    const float corr = std::exp(m - bm);  // m = -inf: 0
    sum *= corr;
    for (float& o : acc) o *= corr;
    for (int64_t i = 0; i < n; ++i) {
      const float e = std::exp(s[i] - bm);
      sum += e;
      const float* v = a.v + ((row0 + p0 + i) * nh + h) * dv;
      for (int64_t d = 0; d < dv; ++d) acc[static_cast<size_t>(d)] += e * v[d];
    }
    m = bm;
  }
  float* out = a.out + (t * nh + h) * dv;
  for (int64_t d = 0; d < dv; ++d) out[d] = sum > 0.0f ? acc[static_cast<size_t>(d)] / sum : 0.0f;
}

}  // namespace

bool mla_plain_attention(const MlaPlainAttentionArgs& a, Parallel* pool) {
  if (!mla_plain_args_ok(a)) return false;
  parallel_for(pool, a.n_tokens * a.n_head, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> acc;
    for (int64_t it = begin; it < end; ++it) attend_plain(a, it / a.n_head, it % a.n_head, acc);
  });
  return true;
}

}  // namespace arc::kernels
