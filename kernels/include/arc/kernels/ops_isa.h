// Instruction-set variants of the non-matmul ops (ops.h, attention.h) and their runtime choice.
// The plain entry points in ops.h / attention.h use the best variant this CPU supports; tests and
// benchmarks call each available variant through ops_table() / paged_attention_isa().
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "arc/kernels/attention.h"
#include "arc/kernels/cpu_dispatch.h"
#include "arc/kernels/mla.h"
#include "arc/kernels/ops.h"

namespace arc::kernels {

// The same levels as the matmul dispatch (cpu_dispatch.h), detected there once.
using OpsIsa = cpu::IsaLevel;

std::string_view ops_isa_name(OpsIsa isa);
// Variants built into this binary that this CPU can run, scalar first, best last.
std::vector<OpsIsa> ops_isas_available();
OpsIsa ops_isa_best();

// One variant's elementwise and row-wise ops; same contracts as in ops.h.
struct OpsTable {
  void (*rms_norm)(const float* x, const float* w, float* y, int64_t n_rows, int64_t d, float eps);
  void (*softmax_rows)(float* x, int64_t n_rows, int64_t n);
  void (*silu)(const float* x, float* y, int64_t n);
  void (*gelu)(const float* x, float* y, int64_t n);
  void (*swiglu)(const float* gate, const float* up, float* y, int64_t n);
  void (*add)(const float* a, const float* b, float* y, int64_t n);
  void (*scale)(float* x, float s, int64_t n);
};

// The table of `isa`; an unavailable isa falls back to the scalar table.
const OpsTable& ops_table(OpsIsa isa);

// paged_attention with a chosen variant (an unavailable one falls back to scalar).
void paged_attention_isa(OpsIsa isa, const PagedAttentionArgs& args, Parallel* pool);
// mla_attention with a chosen variant: AVX2 / AVX-512 where kv_lora_rank and rope_dim are whole
// vectors, else (and for an unavailable one) the portable kernel. Same contract as mla_attention.
bool mla_attention_isa(OpsIsa isa, const MlaAttentionArgs& args, Parallel* pool);

// Whether paged_attention / kv_store accept this cache type and head dim (F32, F16 any head dim;
// Q8_0 head_dim a multiple of 32). Both kernels leave their output untouched otherwise, as they do
// when n_head is not a multiple of n_kv_head.
bool kv_cache_supported(DType kv_type, int64_t head_dim);

}  // namespace arc::kernels
