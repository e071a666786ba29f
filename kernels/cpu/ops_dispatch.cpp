// Runtime choice among the op variants, and the plain entry points of ops.h / attention.h.
// The CPU is probed once by cpu_dispatch (isa.cpp); the list of usable variants is a
// function-local constant; nothing else is global.
#include <algorithm>
#include <vector>

#include "arc/kernels/ops_isa.h"
#include "cpu/kv_rows.h"
#include "cpu/ops_variants.h"

namespace arc::kernels {

namespace {

// The variants compiled into this binary (ARC_KERNELS_X86 / __aarch64__ gate the ISA files).
bool built(OpsIsa isa) {
  switch (isa) {
    case OpsIsa::kScalar:
      return true;
#if defined(ARC_KERNELS_X86)
    case OpsIsa::kAvx2:
    case OpsIsa::kAvx512:
      return true;
#endif
#if defined(__aarch64__)
    case OpsIsa::kNeon:
      return true;
#endif
    default:
      return false;
  }
}

const std::vector<OpsIsa>& available() {
  static const std::vector<OpsIsa> isas = [] {
    std::vector<OpsIsa> v;
    for (OpsIsa isa : {OpsIsa::kScalar, OpsIsa::kNeon, OpsIsa::kAvx2, OpsIsa::kAvx512}) {
      if (built(isa) && cpu::isa_available(isa)) v.push_back(isa);
    }
    return v;
  }();
  return isas;
}

bool is_available(OpsIsa isa) {
  for (OpsIsa a : available()) {
    if (a == isa) return true;
  }
  return false;
}

}  // namespace

std::string_view ops_isa_name(OpsIsa isa) {
  return cpu::isa_name(isa);
}

std::vector<OpsIsa> ops_isas_available() {
  return available();
}
OpsIsa ops_isa_best() {
  return available().back();
}

const OpsTable& ops_table(OpsIsa isa) {
  if (is_available(isa)) {
    switch (isa) {
#if defined(ARC_KERNELS_X86)
      case OpsIsa::kAvx2:
        return avx2::kOps;
      case OpsIsa::kAvx512:
        return avx512::kOps;
#endif
#if defined(__aarch64__)
      case OpsIsa::kNeon:
        return neon::kOps;
#endif
      default:
        break;
    }
  }
  return scalar::kOps;
}

void paged_attention_isa(OpsIsa isa, const PagedAttentionArgs& args, Parallel* pool) {
  if (is_available(isa)) {
    switch (isa) {
#if defined(ARC_KERNELS_X86)
      case OpsIsa::kAvx2:
        return avx2::paged_attention(args, pool);
      case OpsIsa::kAvx512:
        return avx512::paged_attention(args, pool);
#endif
#if defined(__aarch64__)
      case OpsIsa::kNeon:
        return neon::paged_attention(args, pool);
#endif
      default:
        break;
    }
  }
  scalar::paged_attention(args, pool);
}

bool kv_cache_supported(DType kv_type, int64_t head_dim) {
  return detail::kv_type_ok(kv_type, head_dim);
}

namespace {
const OpsTable& best() {
  static const OpsTable& t = ops_table(ops_isa_best());
  return t;
}
}  // namespace

void rms_norm(const float* x, const float* w, float* y, int64_t n_rows, int64_t d, float eps) {
  best().rms_norm(x, w, y, n_rows, d, eps);
}
void softmax_rows(float* x, int64_t n_rows, int64_t n) {
  best().softmax_rows(x, n_rows, n);
}
void silu(const float* x, float* y, int64_t n) {
  best().silu(x, y, n);
}
void gelu(const float* x, float* y, int64_t n) {
  best().gelu(x, y, n);
}
void swiglu(const float* gate, const float* up, float* y, int64_t n) {
  best().swiglu(gate, up, y, n);
}
// g sigmoid(alpha g) (u + 1) = silu(alpha g) (u + 1) / alpha: the clamps and scales here (the
// compiler vectorizes them), the sigmoid through the ISA's vector SwiGLU, a chunk at a time so y
// may alias gate or up.
void swiglu_oai(const float* gate, const float* up, float* y, int64_t n, float alpha, float limit) {
  constexpr int64_t kChunk = 256;
  float g[kChunk], u[kChunk];
  const float inv_alpha = 1.0f / alpha;
  for (int64_t i0 = 0; i0 < n; i0 += kChunk) {
    const int64_t m = std::min(kChunk, n - i0);
    for (int64_t i = 0; i < m; ++i) {
      g[i] = alpha * std::min(gate[i0 + i], limit);
      u[i] = (std::clamp(up[i0 + i], -limit, limit) + 1.0f) * inv_alpha;
    }
    best().swiglu(g, u, y + i0, m);
  }
}
void add(const float* a, const float* b, float* y, int64_t n) {
  best().add(a, b, y, n);
}
void scale(float* x, float s, int64_t n) {
  best().scale(x, s, n);
}

void paged_attention(const PagedAttentionArgs& args, Parallel* pool) {
  paged_attention_isa(ops_isa_best(), args, pool);
}

namespace {

// dst[i] = fp32_to_fp16(src[i]): F16C where the CPU has it (the portable conversion cost about
// 1% of a decode step), the same bits either way.
void to_fp16(const float* src, uint16_t* dst, int64_t n) {
#if defined(ARC_KERNELS_X86)
  if (is_available(OpsIsa::kAvx2)) return avx2::fp32_to_fp16_row(src, dst, n);
#endif
  for (int64_t i = 0; i < n; ++i) dst[i] = fp32_to_fp16(src[i]);
}

// kHeadBlocks: V rows as in kTokenRows but numbered head-major within a block; a key's values go
// block_size apart, into the lane of its row. A key touches a cache line per dimension or two,
// and those misses cost most of the time (0.8 us for a decode token of 4 kv heads of 64 against
// 0.2 us in kTokenRows, bench_ops kv_store_decode_f16; asking for the lines first with prefetchw
// gained nothing). The attention that follows then finds them in cache.
void kv_store_head_blocks(const KvStoreArgs& a) {
  const int64_t d = a.head_dim, bs = a.block_size;
  constexpr int64_t kChunk = 64;  // K values converted at a time (no allocation per call)
  uint16_t h[kChunk];
  for (int64_t t = 0; t < a.n_tokens; ++t) {
    if (a.slots[t] < 0) continue;  // padding token: nothing to store
    const int64_t slot = a.slots[t];
    for (int64_t g = 0; g < a.n_kv_head; ++g) {
      const float* k = a.k + (t * a.n_kv_head + g) * d;  // [head_dim]
      const float* v = a.v + (t * a.n_kv_head + g) * d;  // [head_dim]
      const int64_t row = detail::kv_row_index(a.layout, slot, g, a.n_kv_head, bs, a.n_blocks);
      const int64_t k0 = detail::kv_head_blocks_key_index(slot, g, 0, d, bs, a.n_blocks);
      if (a.kv_type == DType::F16) {
        to_fp16(v, static_cast<uint16_t*>(a.v_cache) + row * d, d);
        uint16_t* kc = static_cast<uint16_t*>(a.k_cache) + k0;
        for (int64_t c0 = 0; c0 < d; c0 += kChunk) {
          const int64_t n = std::min(kChunk, d - c0);
          to_fp16(k + c0, h, n);
          for (int64_t c = 0; c < n; ++c) kc[(c0 + c) * bs] = h[c];
        }
      } else {
        std::copy(v, v + d, static_cast<float*>(a.v_cache) + row * d);
        float* kc = static_cast<float*>(a.k_cache) + k0;
        for (int64_t c = 0; c < d; ++c) kc[c * bs] = k[c];
      }
    }
  }
}

}  // namespace

void kv_store(const KvStoreArgs& a) {
  if (!detail::kv_type_ok(a.kv_type, a.head_dim) || !kv_layout_supports(a.layout, a.kv_type)) {
    return;
  }
  if (a.layout == KvLayout::kHeadBlocks) {
    if (a.block_size > 0 && a.n_blocks > 0) kv_store_head_blocks(a);
    return;
  }
  // F16 rows: a token's kv heads are one contiguous run in k / v and in the cache slot.
  if (a.kv_type == DType::F16) {
    const int64_t n = a.n_kv_head * a.head_dim;  // values per token
    for (int64_t t = 0; t < a.n_tokens; ++t) {
      if (a.slots[t] < 0) continue;  // padding token: nothing to store
      const int64_t row = static_cast<int64_t>(a.slots[t]) * n;
      to_fp16(a.k + t * n, static_cast<uint16_t*>(a.k_cache) + row, n);
      to_fp16(a.v + t * n, static_cast<uint16_t*>(a.v_cache) + row, n);
    }
    return;
  }
  for (int64_t t = 0; t < a.n_tokens; ++t) {
    if (a.slots[t] < 0) continue;  // padding token: nothing to store
    for (int64_t g = 0; g < a.n_kv_head; ++g) {
      const int64_t row = static_cast<int64_t>(a.slots[t]) * a.n_kv_head + g;
      const int64_t src = (t * a.n_kv_head + g) * a.head_dim;
      detail::kv_store_row(a.kv_type, a.k_cache, row, a.head_dim, a.k + src);
      detail::kv_store_row(a.kv_type, a.v_cache, row, a.head_dim, a.v + src);
    }
  }
}

}  // namespace arc::kernels
