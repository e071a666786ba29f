// MoE routing and expert FFNs on the CPU. Prefill groups the tokens routed to each expert and runs
// one matmul per expert over that group (each expert's weights stream once per step); decode runs
// only the k selected experts. Parallelism is inside each matmul (over output rows), so results do
// not depend on the thread count.
#include "arc/kernels/moe.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "arc/kernels/cpu_dispatch.h"
#include "arc/kernels/matmul.h"

namespace arc::kernels {

void moe_route(const RouterArgs& a) {
  std::vector<float> prob(static_cast<size_t>(a.n_expert));    // [n_expert]
  std::vector<float> select(static_cast<size_t>(a.n_expert));  // [n_expert]
  std::vector<int32_t> order(static_cast<size_t>(a.n_expert));
  const int64_t k = std::min(a.k, a.n_expert);
  for (int64_t t = 0; t < a.n_tokens; ++t) {
    const float* logit = a.logits + t * a.n_expert;  // [n_expert]
    if (a.scoring == RouterScoring::kSoftmax) {
      float mx = -INFINITY;
      for (int64_t e = 0; e < a.n_expert; ++e) mx = std::max(mx, logit[e]);
      float sum = 0;
      for (int64_t e = 0; e < a.n_expert; ++e) sum += prob[e] = std::exp(logit[e] - mx);
      for (int64_t e = 0; e < a.n_expert; ++e) select[e] = prob[e] /= sum;
    } else {
      for (int64_t e = 0; e < a.n_expert; ++e) {
        prob[e] = 1.0f / (1.0f + std::exp(-logit[e]));
        select[e] = prob[e] + (a.bias ? a.bias[e] : 0.0f);
      }
    }
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int32_t x, int32_t y) {
      return select[x] > select[y] || (select[x] == select[y] && x < y);
    });
    float wsum = 0;
    for (int64_t j = 0; j < k; ++j) wsum += prob[order[j]];
    for (int64_t j = 0; j < k; ++j) {
      float w = prob[order[j]];
      if (a.normalize && wsum > 0) w /= wsum;
      a.ids[t * a.k + j] = order[j];
      a.weights[t * a.k + j] = w * a.weight_scale;
    }
  }
}

}  // namespace arc::kernels

namespace arc::kernels::cpu {
namespace {

struct ExpertMats {
  size_t gate_stride, up_stride, down_stride;
};

// One expert over a group of tokens: out = down(silu(gate x) * up x).
// x: [n, n_embd]; g, u: [n, n_ff] scratch; out: [n, n_embd].
bool run_expert(IsaLevel level, const MoeFfnArgs& a, const ExpertMats& s, int32_t e, const float* x,
                int64_t n, float* g, float* u, float* out, Parallel* pool) {
  MatmulArgs m;
  m.x = x;
  m.n_tokens = n;
  m.n_in = a.n_embd;
  m.n_out = a.n_ff;
  m.w = static_cast<const uint8_t*>(a.gate) + static_cast<size_t>(e) * s.gate_stride;
  m.w_type = a.gate_type;
  m.y = g;
  if (!matmul_at(level, m, pool)) return false;
  m.w = static_cast<const uint8_t*>(a.up) + static_cast<size_t>(e) * s.up_stride;
  m.w_type = a.up_type;
  m.y = u;
  if (!matmul_at(level, m, pool)) return false;
  const int64_t n_act = n * a.n_ff;
  for (int64_t i = 0; i < n_act; ++i) g[i] = g[i] / (1.0f + std::exp(-g[i])) * u[i];
  m.x = g;
  m.n_in = a.n_ff;
  m.n_out = a.n_embd;
  m.w = static_cast<const uint8_t*>(a.down) + static_cast<size_t>(e) * s.down_stride;
  m.w_type = a.down_type;
  m.y = out;
  return matmul_at(level, m, pool);
}

}  // namespace

bool moe_ffn_at(IsaLevel level, const MoeFfnArgs& a, Parallel* pool) {
  const auto gate_row = dtype_row_bytes(a.gate_type, static_cast<uint64_t>(a.n_embd));
  const auto up_row = dtype_row_bytes(a.up_type, static_cast<uint64_t>(a.n_embd));
  const auto down_row = dtype_row_bytes(a.down_type, static_cast<uint64_t>(a.n_ff));
  if (!gate_row || !up_row || !down_row || a.n_tokens < 0 || a.k < 0) return false;
  for (int64_t i = 0; i < a.n_tokens * a.k; ++i) {
    if (a.ids[i] < 0 || a.ids[i] >= a.n_expert) return false;
  }
  const ExpertMats s{a.gate_expert_bytes ? a.gate_expert_bytes : *gate_row * a.n_ff,
                     a.up_expert_bytes ? a.up_expert_bytes : *up_row * a.n_ff,
                     a.down_expert_bytes ? a.down_expert_bytes : *down_row * a.n_embd};
  const size_t n_embd = static_cast<size_t>(a.n_embd);
  if (!a.accumulate) std::fill(a.y, a.y + a.n_tokens * a.n_embd, 0.0f);

  // Slots (t, j) grouped by expert, in token order within each expert.
  std::vector<int64_t> count(static_cast<size_t>(a.n_expert) + 1, 0);
  for (int64_t i = 0; i < a.n_tokens * a.k; ++i) ++count[a.ids[i] + 1];
  std::partial_sum(count.begin(), count.end(), count.begin());
  std::vector<int64_t> slots(static_cast<size_t>(a.n_tokens * a.k));
  {
    std::vector<int64_t> fill(count.begin(), count.end() - 1);
    for (int64_t i = 0; i < a.n_tokens * a.k; ++i) slots[fill[a.ids[i]]++] = i;
  }
  int64_t max_group = 0;
  for (int64_t e = 0; e < a.n_expert; ++e) max_group = std::max(max_group, count[e + 1] - count[e]);

  std::vector<float> xg(static_cast<size_t>(max_group) * n_embd);  // [group, n_embd]
  std::vector<float> g(static_cast<size_t>(max_group * a.n_ff));   // [group, n_ff]
  std::vector<float> u(g.size());                                  // [group, n_ff]
  std::vector<float> out(xg.size());                               // [group, n_embd]
  for (int32_t e = 0; e < a.n_expert; ++e) {
    const int64_t begin = count[e], n = count[e + 1] - count[e];
    if (n == 0) continue;  // decode: only the selected experts are read
    for (int64_t r = 0; r < n; ++r) {
      const int64_t t = slots[begin + r] / a.k;
      std::copy(a.x + t * a.n_embd, a.x + (t + 1) * a.n_embd, xg.data() + r * n_embd);
    }
    if (!run_expert(level, a, s, e, xg.data(), n, g.data(), u.data(), out.data(), pool)) {
      return false;
    }
    for (int64_t r = 0; r < n; ++r) {
      const int64_t slot = slots[begin + r];
      const float w = a.weights[slot];
      float* y = a.y + (slot / a.k) * a.n_embd;  // [n_embd]
      const float* o = out.data() + r * n_embd;
      for (size_t i = 0; i < n_embd; ++i) y[i] += w * o[i];
    }
  }
  return true;
}

}  // namespace arc::kernels::cpu

namespace arc::kernels {

bool moe_ffn(const MoeFfnArgs& args, Parallel* pool) {
  return cpu::moe_ffn_at(cpu::best_isa(), args, pool);
}

}  // namespace arc::kernels
