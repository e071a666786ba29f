// MLA attention on the CPU: the AVX2 / AVX-512 kernels (cpu/mla_kernel.h) where the shapes are
// whole vectors, else this portable one. Work items are (token, group of kHeadGroup heads): an item
// walks the token's visible positions block by block, widens each block's latent rows to F32 once,
// and runs every head of its group over them with an online softmax. The heads of a decode step
// share the rows, so the cache is read once per group instead of once per head. Each head's
// arithmetic is the same whatever the thread count (items never split a head's positions), so
// results do not depend on it.
#include <algorithm>
#include <cmath>
#include <vector>

#include "arc/kernels/fp16.h"
#include "arc/kernels/mla.h"
#include "arc/kernels/ops_isa.h"
#include "cpu/ops_variants.h"

namespace arc::kernels {

namespace {

constexpr int64_t kHeadGroup = 8;

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

// y = y * c + e * x, [n].
inline void scale_add(float* y, float c, float e, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = y[i] * c + e * x[i];
}

void attend_item(const MlaAttentionArgs& a, int64_t t, int64_t h0, int64_t h1,
                 std::vector<float>& rows, std::vector<float>& acc) {
  const int64_t r = a.kv_lora_rank, w = r + a.rope_dim, bs = a.block_size;
  const int32_t* table = a.block_tables + a.token_seq[t] * a.max_blocks_per_seq;
  const int64_t pos = a.token_pos[t];
  const int64_t nh = h1 - h0;
  rows.resize(static_cast<size_t>(bs * w));
  acc.assign(static_cast<size_t>(nh * r), 0.0f);
  float mx[kHeadGroup], sum[kHeadGroup], s[256];
  std::fill(mx, mx + kHeadGroup, -INFINITY);
  std::fill(sum, sum + kHeadGroup, 0.0f);
  for (int64_t p0 = 0; p0 <= pos; p0 += bs) {
    const int64_t n = std::min(bs, pos + 1 - p0);
    const int64_t slot0 = static_cast<int64_t>(table[p0 / bs]) * bs;
    if (a.kv_type == DType::F32) {
      const float* src = static_cast<const float*>(a.cache) + slot0 * w;
      std::copy(src, src + n * w, rows.begin());
    } else {
      fp16_to_fp32_row(static_cast<const uint16_t*>(a.cache) + slot0 * w, rows.data(), n * w);
    }
    for (int64_t h = h0; h < h1; ++h) {
      const int64_t j = h - h0;
      const float* ql = a.q_lat + (t * a.n_head + h) * r;
      const float* qp = a.q_pe + t * a.q_pe_token_stride + h * a.q_pe_head_stride;
      float m = mx[j];
      for (int64_t i = 0; i < n; ++i) {
        const float* row = rows.data() + i * w;
        s[i] = (dot(ql, row, r) + dot(qp, row + r, a.rope_dim)) * a.scale;
        m = std::max(m, s[i]);
      }
      float* o = acc.data() + j * r;
      const float c = std::exp(mx[j] - m);  // 0 on the first block (mx = -inf)
      float l = sum[j] * c;
      for (int64_t i = 0; i < n; ++i) {
        const float e = std::exp(s[i] - m);
        l += e;
        scale_add(o, i == 0 ? c : 1.0f, e, rows.data() + i * w, r);
      }
      mx[j] = m;
      sum[j] = l;
    }
  }
  for (int64_t h = h0; h < h1; ++h) {
    const int64_t j = h - h0;
    float* out = a.out + (t * a.n_head + h) * r;
    const float inv = sum[j] > 0.0f ? 1.0f / sum[j] : 0.0f;
    for (int64_t i = 0; i < r; ++i) out[i] = acc[j * r + i] * inv;
  }
}

}  // namespace

void mla_kv_store(const MlaKvStoreArgs& a) {
  ref::mla_kv_store(a);  // a copy per token: the reference is the kernel
}

bool mla_attention(const MlaAttentionArgs& a, Parallel* pool) {
  return mla_attention_isa(ops_isa_best(), a, pool);
}

bool mla_attention_isa(OpsIsa isa, const MlaAttentionArgs& a, Parallel* pool) {
  // Scores of one block live on the stack: blocks up to 256 positions.
  if (!mla_kv_type_ok(a.kv_type) || a.block_size <= 0 || a.block_size > 256 ||
      a.kv_lora_rank <= 0 || a.rope_dim < 0 || a.n_head <= 0)
    return false;
  const bool available = [&] {
    for (OpsIsa i : ops_isas_available()) {
      if (i == isa) return true;
    }
    return false;
  }();
#if defined(ARC_KERNELS_X86)
  if (available && isa == OpsIsa::kAvx512 && avx512::mla_attention(a, pool)) return true;
  if (available && isa == OpsIsa::kAvx2 && avx2::mla_attention(a, pool)) return true;
#endif
  // The portable kernel (scalar code the compiler may vectorise).
  const int64_t groups = (a.n_head + kHeadGroup - 1) / kHeadGroup;
  parallel_for(pool, a.n_tokens * groups, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> rows, acc;
    for (int64_t it = begin; it < end; ++it) {
      const int64_t t = it / groups, g = it % groups;
      const int64_t h0 = g * kHeadGroup, h1 = std::min(a.n_head, h0 + kHeadGroup);
      attend_item(a, t, h0, h1, rows, acc);
    }
  });
  return true;
}

}  // namespace arc::kernels
