// The MLA attention kernel (kernels/mla.h) over the paged-attention kernel's vector helpers
// (cpu/attention_kernel.h), compiled in the AVX2 and AVX-512 translation units. MLA in the
// absorbed form is attention with one wide KV head: the key of position j is its whole cache row
// [latent | rope key] (kv_lora_rank + rope_dim values) and the value its latent, so a head's query
// is [q_lat | q_pe] and scores and weighted sums are the paged kernel's group_scores /
// group_accumulate over the rows, read in place (F16 widened in registers).
//
// Work item = (token, group of up to kMaxGroup heads), as the portable kernel (cpu/mla.cpp): the
// group shares every row load, positions are visited block by block with an online softmax, and
// an item never splits a head's positions, so results do not depend on the thread count.
// Needs kv_lora_rank and rope_dim multiples of T::W (DeepSeek-V3: 512 and 64); the caller falls
// back to the portable kernel otherwise.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "arc/kernels/mla.h"
#include "cpu/attention_kernel.h"

namespace arc::kernels::detail {
namespace {

template <class T>
bool mla_shape_ok(const MlaAttentionArgs& a) {
  return a.kv_lora_rank % T::W == 0 && a.rope_dim % T::W == 0;
}

struct MlaScratch {
  std::vector<float> q;       // [kMaxGroup, kv_lora_rank + rope_dim] the group's whole queries
  std::vector<float> acc;     // [kMaxGroup, kv_lora_rank]
  std::vector<float> scores;  // [kMaxGroup, block_size]
};

// out[t, h0 .. h0 + g) of one token and head group.
template <class T, class KvT>
void mla_item(const MlaAttentionArgs& a, int64_t t, int64_t h0, int g, MlaScratch& s) {
  const int64_t r = a.kv_lora_rank, w = r + a.rope_dim, bs = a.block_size;
  const int32_t* table = a.block_tables + a.token_seq[t] * a.max_blocks_per_seq;
  const int64_t pos = a.token_pos[t];
  const float* q[kMaxGroup];
  float* acc[kMaxGroup];
  float m[kMaxGroup], l[kMaxGroup];
  for (int j = 0; j < g; ++j) {
    float* qj = s.q.data() + j * w;
    const float* ql = a.q_lat + (t * a.n_head + h0 + j) * r;
    const float* qp = a.q_pe + t * a.q_pe_token_stride + (h0 + j) * a.q_pe_head_stride;
    std::copy(ql, ql + r, qj);
    std::copy(qp, qp + a.rope_dim, qj + r);
    q[j] = qj;
    acc[j] = s.acc.data() + j * r;
    std::fill(acc[j], acc[j] + r, 0.0f);
    m[j] = -INFINITY;
    l[j] = 0.0f;
  }
  const auto seq = std::make_integer_sequence<int, kMaxGroup>{};
  const KvT* cache = static_cast<const KvT*>(a.cache);
  for (int64_t b = 0; b <= pos / bs; ++b) {
    const int64_t n = std::min(bs, pos + 1 - b * bs);
    const KvT* rows = cache + static_cast<int64_t>(table[b]) * bs * w;  // [n, w]
    if (b + 1 <= pos / bs) {  // the next block's rows (scattered: no hardware guess)
      const int64_t n_next = std::min(bs, pos + 1 - (b + 1) * bs);
      prefetch_bytes(cache + static_cast<int64_t>(table[b + 1]) * bs * w,
                     static_cast<size_t>(n_next * w) * sizeof(KvT));
    }
    scores_fn<T, KvT>(g, seq)(q, rows, w, n, w, a.scale, s.scores.data(), bs);
    for (int j = 0; j < g; ++j) {
      float* sj = s.scores.data() + j * bs;
      float mx = m[j];
      for (int64_t i = 0; i < n; ++i) mx = std::max(mx, sj[i]);
      // 0 on the first block; exactly 1 when the block did not raise the maximum.
      const float corr = mx == m[j] ? 1.0f : std::exp(m[j] - mx);
      const float sum = exp_shift_sum<T>(sj, n, mx);
      if (corr != 1.0f) {
        const typename T::R c = T::set1(corr);
        for (int64_t i = 0; i < r; i += T::W) T::store(acc[j] + i, T::mul(T::load(acc[j] + i), c));
      }
      l[j] = l[j] * corr + sum;
      m[j] = mx;
    }
    accumulate_fn<T, KvT>(g, seq)(acc, rows, w, n, r, s.scores.data(), bs);
  }
  for (int j = 0; j < g; ++j) {
    float* out = a.out + (t * a.n_head + h0 + j) * r;
    const float inv = l[j] > 0.0f ? 1.0f / l[j] : 0.0f;
    for (int64_t i = 0; i < r; ++i) out[i] = acc[j][i] * inv;
  }
}

// The caller checked the arguments (mla_attention's checks) and mla_shape_ok<T>.
template <class T>
void mla_attention_impl(const MlaAttentionArgs& a, Parallel* pool) {
  const int64_t groups = (a.n_head + kMaxGroup - 1) / kMaxGroup;
  const int64_t w = a.kv_lora_rank + a.rope_dim;
  parallel_for(pool, a.n_tokens * groups, 1, [&](int64_t begin, int64_t end) {
    MlaScratch s;
    s.q.resize(static_cast<size_t>(kMaxGroup * w));
    s.acc.resize(static_cast<size_t>(kMaxGroup * a.kv_lora_rank));
    s.scores.resize(static_cast<size_t>(kMaxGroup * a.block_size));
    for (int64_t it = begin; it < end; ++it) {
      const int64_t t = it / groups, h0 = it % groups * kMaxGroup;
      const int g = static_cast<int>(std::min<int64_t>(kMaxGroup, a.n_head - h0));
      if (a.kv_type == DType::F16) {
        mla_item<T, uint16_t>(a, t, h0, g, s);
      } else {
        mla_item<T, float>(a, t, h0, g, s);
      }
    }
  });
}

}  // namespace
}  // namespace arc::kernels::detail
