// Scalar reference paged attention: per (token, head), gather the visible keys, a plain two-pass
// softmax in double, then the weighted sum of values. Slow and obvious on purpose.
#include <algorithm>
#include <cmath>
#include <vector>

#include "arc/kernels/attention.h"
#include "cpu/kv_rows.h"

namespace arc::kernels::ref {

void paged_attention(const PagedAttentionArgs& a) {
  if (a.n_kv_head <= 0 || a.n_head % a.n_kv_head != 0 || a.block_size <= 0 ||
      !detail::kv_type_ok(a.kv_type, a.head_dim) || !kv_layout_supports(a.layout, a.kv_type) ||
      (a.layout == KvLayout::kHeadBlocks && a.n_blocks <= 0))
    return;
  const int64_t d = a.head_dim;
  const int64_t n_rep = a.n_head / a.n_kv_head;
  const double scale = a.scale != 0.0f ? a.scale : 1.0 / std::sqrt(static_cast<double>(d));
  std::vector<float> k(d), v(d);
  std::vector<double> scores, acc(d);
  for (int64_t t = 0; t < a.n_tokens; ++t) {
    const int32_t* table = a.block_tables + a.token_seq[t] * a.max_blocks_per_seq;
    const int64_t pos = a.token_pos[t];
    const int64_t first =
        a.sliding_window > 0 ? std::max<int64_t>(0, pos - a.sliding_window + 1) : 0;
    for (int64_t h = 0; h < a.n_head; ++h) {
      const float* q = a.q + (t * a.n_head + h) * d;  // [head_dim]
      float* out = a.out + (t * a.n_head + h) * d;    // [head_dim]
      const int64_t g = h / n_rep;
      auto slot_of = [&](int64_t p) {
        return static_cast<int64_t>(table[p / a.block_size]) * a.block_size + p % a.block_size;
      };
      scores.clear();
      double mx = -INFINITY;
      for (int64_t p = first; p <= pos; ++p) {
        detail::kv_load_key(a.layout, a.kv_type, a.k_cache, slot_of(p), g, a.n_kv_head, d,
                            a.block_size, a.n_blocks, k.data());
        double s = 0.0;
        for (int64_t i = 0; i < d; ++i) s += static_cast<double>(q[i]) * k[i];
        scores.push_back(s * scale);
        mx = std::max(mx, scores.back());
      }
      std::fill(acc.begin(), acc.end(), 0.0);
      double sum = 0.0;
      for (int64_t p = first; p <= pos; ++p) {
        const double w = std::exp(scores[p - first] - mx);
        sum += w;
        const int64_t row =
            detail::kv_row_index(a.layout, slot_of(p), g, a.n_kv_head, a.block_size, a.n_blocks);
        detail::kv_load_row(a.kv_type, a.v_cache, row, d, v.data());
        for (int64_t i = 0; i < d; ++i) acc[i] += w * v[i];
      }
      // The sink joins the denominator at the same shift (no value).
      if (a.sinks != nullptr && sum > 0.0) sum += std::exp(static_cast<double>(a.sinks[h]) - mx);
      // No visible key (negative position): zeros rather than NaN.
      for (int64_t i = 0; i < d; ++i) out[i] = sum > 0.0 ? static_cast<float>(acc[i] / sum) : 0.0f;
    }
  }
}

}  // namespace arc::kernels::ref
