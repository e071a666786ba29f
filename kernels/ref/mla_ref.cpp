// Scalar reference MLA: per (token, head) every visible latent row read back, scores and the
// softmax in double, the weighted sum of latents.
#include <algorithm>
#include <cmath>
#include <vector>

#include "arc/kernels/fp16.h"
#include "arc/kernels/mla.h"

namespace arc::kernels::ref {

namespace {

// Row `slot` of the cache ([kv_lora_rank + rope_dim] values) as floats.
void load_row(DType t, const void* cache, int64_t slot, int64_t width, float* out) {
  if (t == DType::F32) {
    const float* r = static_cast<const float*>(cache) + slot * width;
    std::copy(r, r + width, out);
  } else {
    fp16_to_fp32_row(static_cast<const uint16_t*>(cache) + slot * width, out, width);
  }
}

}  // namespace

void mla_kv_store(const MlaKvStoreArgs& a) {
  if (!mla_kv_type_ok(a.kv_type)) return;
  const int64_t w = a.kv_lora_rank + a.rope_dim;
  std::vector<float> row(static_cast<size_t>(w));
  for (int64_t t = 0; t < a.n_tokens; ++t) {
    const int64_t slot = a.slots[t];
    if (slot < 0) continue;
    std::copy(a.latent + t * a.kv_lora_rank, a.latent + (t + 1) * a.kv_lora_rank, row.begin());
    std::copy(a.kpe + t * a.rope_dim, a.kpe + (t + 1) * a.rope_dim, row.begin() + a.kv_lora_rank);
    if (a.kv_type == DType::F32) {
      std::copy(row.begin(), row.end(), static_cast<float*>(a.cache) + slot * w);
    } else {
      fp32_to_fp16_row(row.data(), static_cast<uint16_t*>(a.cache) + slot * w, w);
    }
  }
}

bool mla_attention(const MlaAttentionArgs& a) {
  if (!mla_kv_type_ok(a.kv_type) || a.block_size <= 0 || a.kv_lora_rank <= 0 || a.rope_dim < 0)
    return false;
  const int64_t r = a.kv_lora_rank, w = r + a.rope_dim;
  std::vector<float> row(static_cast<size_t>(w));
  std::vector<double> scores, acc(static_cast<size_t>(r));
  for (int64_t t = 0; t < a.n_tokens; ++t) {
    const int32_t* table = a.block_tables + a.token_seq[t] * a.max_blocks_per_seq;
    const int64_t pos = a.token_pos[t];
    auto slot_of = [&](int64_t p) {
      return static_cast<int64_t>(table[p / a.block_size]) * a.block_size + p % a.block_size;
    };
    for (int64_t h = 0; h < a.n_head; ++h) {
      const float* ql = a.q_lat + (t * a.n_head + h) * r;  // [kv_lora_rank]
      const float* qp = a.q_pe + t * a.q_pe_token_stride + h * a.q_pe_head_stride;  // [rope]
      scores.clear();
      double mx = -INFINITY;
      for (int64_t p = 0; p <= pos; ++p) {
        load_row(a.kv_type, a.cache, slot_of(p), w, row.data());
        double s = 0.0;
        for (int64_t i = 0; i < r; ++i) s += static_cast<double>(ql[i]) * row[i];
        for (int64_t i = 0; i < a.rope_dim; ++i) s += static_cast<double>(qp[i]) * row[r + i];
        scores.push_back(s * a.scale);
        mx = std::max(mx, scores.back());
      }
      std::fill(acc.begin(), acc.end(), 0.0);
      double sum = 0.0;
      for (int64_t p = 0; p <= pos; ++p) {
        const double e = std::exp(scores[p] - mx);
        sum += e;
        load_row(a.kv_type, a.cache, slot_of(p), w, row.data());
        for (int64_t i = 0; i < r; ++i) acc[i] += e * row[i];
      }
      float* out = a.out + (t * a.n_head + h) * r;
      for (int64_t i = 0; i < r; ++i) out[i] = sum > 0.0 ? static_cast<float>(acc[i] / sum) : 0.0f;
    }
  }
  return true;
}

}  // namespace arc::kernels::ref
