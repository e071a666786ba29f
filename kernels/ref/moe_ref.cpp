// Scalar oracles for moe.h: routing in double, expert FFNs through ref::matmul.
#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <vector>

#include "arc/kernels/matmul.h"
#include "arc/kernels/moe.h"

namespace arc::kernels::ref {
namespace {

// Expert parallelism: expert e relative to the rank's first, -1 when another rank holds it.
int32_t local_id(const RouterArgs& a, int32_t e) {
  if (a.n_local <= 0) return e;
  const int64_t l = e - a.expert_begin;
  return l >= 0 && l < a.n_local ? static_cast<int32_t>(l) : -1;
}

}  // namespace

void moe_route(const RouterArgs& a) {
  std::vector<double> prob(static_cast<size_t>(a.n_expert));
  std::vector<double> select(static_cast<size_t>(a.n_expert));
  std::vector<int32_t> order(static_cast<size_t>(a.n_expert));
  const int64_t k = std::min(a.k, a.n_expert);
  for (int64_t t = 0; t < a.n_tokens; ++t) {
    const float* logit = a.logits + t * a.n_expert;  // [n_expert]
    if (a.scoring == RouterScoring::kSoftmax) {
      double mx = -INFINITY;
      for (int64_t e = 0; e < a.n_expert; ++e) mx = std::max(mx, static_cast<double>(logit[e]));
      double sum = 0;
      for (int64_t e = 0; e < a.n_expert; ++e) sum += prob[e] = std::exp(logit[e] - mx);
      for (int64_t e = 0; e < a.n_expert; ++e) select[e] = prob[e] /= sum;
    } else {
      for (int64_t e = 0; e < a.n_expert; ++e) {
        prob[e] = 1.0 / (1.0 + std::exp(-static_cast<double>(logit[e])));
        select[e] = prob[e] + (a.bias ? a.bias[e] : 0.0f);
      }
    }
    if (a.n_group > 1 && a.n_group_used < a.n_group) {
      // Group score: the sum of the group's two best selection scores; the n_group_used best
      // groups (lower index on ties) keep their experts, the others drop out.
      const int64_t per = a.n_expert / a.n_group;
      std::vector<double> gs(static_cast<size_t>(a.n_group));
      for (int64_t g = 0; g < a.n_group; ++g) {
        std::vector<double> v(select.begin() + g * per, select.begin() + (g + 1) * per);
        std::sort(v.begin(), v.end(), std::greater<>());
        gs[g] = v[0] + (per > 1 ? v[1] : 0.0);
      }
      std::vector<int64_t> go(static_cast<size_t>(a.n_group));
      std::iota(go.begin(), go.end(), 0);
      std::stable_sort(go.begin(), go.end(), [&](int64_t x, int64_t y) { return gs[x] > gs[y]; });
      for (int64_t j = a.n_group_used; j < a.n_group; ++j) {
        for (int64_t e = go[j] * per; e < (go[j] + 1) * per; ++e) select[e] = -INFINITY;
      }
    }
    // Highest selection score first; ties go to the lower expert id.
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int32_t x, int32_t y) { return select[x] > select[y]; });
    double wsum = 0;
    for (int64_t j = 0; j < k; ++j) wsum += prob[order[j]];
    for (int64_t j = 0; j < k; ++j) {
      double w = prob[order[j]];
      if (a.normalize && wsum > 0) w /= wsum;
      a.ids[t * a.k + j] = local_id(a, order[j]);
      a.weights[t * a.k + j] = static_cast<float>(w * a.weight_scale);
    }
  }
}

bool moe_ffn(const MoeFfnArgs& a) {
  const auto gate_row = dtype_row_bytes(a.gate_type, static_cast<uint64_t>(a.n_embd));
  const auto up_row = dtype_row_bytes(a.up_type, static_cast<uint64_t>(a.n_embd));
  const auto down_row = dtype_row_bytes(a.down_type, static_cast<uint64_t>(a.n_ff));
  if (!gate_row || !up_row || !down_row) return false;
  const size_t gate_stride = a.gate_expert_bytes ? a.gate_expert_bytes : *gate_row * a.n_ff;
  const size_t up_stride = a.up_expert_bytes ? a.up_expert_bytes : *up_row * a.n_ff;
  const size_t down_stride = a.down_expert_bytes ? a.down_expert_bytes : *down_row * a.n_embd;
  std::vector<float> g(static_cast<size_t>(a.n_ff)), u(g.size()),
      out(static_cast<size_t>(a.n_embd));
  for (int64_t t = 0; t < a.n_tokens; ++t) {
    std::vector<double> acc(static_cast<size_t>(a.n_embd), 0.0);
    for (int64_t j = 0; j < a.k; ++j) {
      const int32_t e = a.ids[t * a.k + j];
      if (e < 0 || e >= a.n_expert) continue;  // an expert another rank holds
      MatmulArgs m;
      m.x = a.x + t * a.n_embd;
      m.n_in = a.n_embd;
      m.n_out = a.n_ff;
      m.w = static_cast<const uint8_t*>(a.gate) + e * gate_stride;
      m.w_type = a.gate_type;
      m.y = g.data();
      if (!matmul(m)) return false;
      m.w = static_cast<const uint8_t*>(a.up) + e * up_stride;
      m.w_type = a.up_type;
      m.y = u.data();
      if (!matmul(m)) return false;
      for (int64_t i = 0; i < a.n_ff; ++i) {
        double gv = g[i], uv = u[i];
        if (a.gate_bias != nullptr) gv += a.gate_bias[e * a.n_ff + i];
        if (a.up_bias != nullptr) uv += a.up_bias[e * a.n_ff + i];
        if (a.act == MoeActivation::kSwiGluOai) {
          gv = std::min(gv, static_cast<double>(a.limit));
          uv = std::clamp(uv, -static_cast<double>(a.limit), static_cast<double>(a.limit));
          g[i] = static_cast<float>(gv / (1.0 + std::exp(-a.alpha * gv)) * (uv + 1.0));
        } else {
          g[i] = static_cast<float>(gv / (1.0 + std::exp(-gv)) * uv);
        }
      }
      m.x = g.data();
      m.n_in = a.n_ff;
      m.n_out = a.n_embd;
      m.w = static_cast<const uint8_t*>(a.down) + e * down_stride;
      m.w_type = a.down_type;
      m.y = out.data();
      if (!matmul(m)) return false;
      for (int64_t i = 0; i < a.n_embd; ++i) {
        const double b = a.down_bias != nullptr ? a.down_bias[e * a.n_embd + i] : 0.0;
        acc[i] += static_cast<double>(a.weights[t * a.k + j]) * (out[i] + b);
      }
    }
    float* y = a.y + t * a.n_embd;  // [n_embd]
    for (int64_t i = 0; i < a.n_embd; ++i) {
      y[i] = a.accumulate ? y[i] + static_cast<float>(acc[i]) : static_cast<float>(acc[i]);
    }
  }
  return true;
}

}  // namespace arc::kernels::ref
