// Portable paged attention: the shared kernel over one-lane "vectors".
#include <cmath>

#include "arc/kernels/fp16.h"
#include "cpu/attention_kernel.h"
#include "cpu/ops_variants.h"

namespace arc::kernels::scalar {
namespace {

struct Lane1 {
  static constexpr int W = 1;
  using R = float;
  static R zero() { return 0.0f; }
  static R set1(float f) { return f; }
  static R load(const float* p) { return *p; }
  static R load(const uint16_t* p) { return fp16_to_fp32(*p); }
  static void store(float* p, R r) { *p = r; }
  static R fma(R a, R b, R c) { return a * b + c; }
  static R add(R a, R b) { return a + b; }
  static R sub(R a, R b) { return a - b; }
  static R mul(R a, R b) { return a * b; }
  static R exp(R a) { return std::exp(a); }
  static float hsum(R r) { return r; }
};

}  // namespace

void paged_attention(const PagedAttentionArgs& args, Parallel* pool) {
  if (!detail::attention_args_ok(args)) return;
  detail::paged_attention_impl<Lane1>(args, pool);
}

}  // namespace arc::kernels::scalar
