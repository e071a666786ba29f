// CPU Gated DeltaNet ops (contract in arc/kernels/delta_net.h). Float arithmetic in a fixed order
// per (sequence, head) or per channel, so a result never depends on the thread count or on how a
// sequence's tokens are split across calls: each work item walks its tokens in order and reads
// only its own slice of the state. Inner loops run over head_v_dim (or channels) with unit
// stride so the compiler vectorises them.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "arc/kernels/delta_net.h"

namespace arc::kernels {

namespace {

inline float sigmoidf(float x) {
  return 1.0f / (1.0f + std::exp(-x));
}

// torch.nn.functional.softplus (beta 1, threshold 20).
inline float softplusf(float x) {
  return x > 20.0f ? x : std::log1p(std::exp(x));
}

// [begin, end) token ranges of consecutive tokens with the same state slot.
std::vector<std::pair<int64_t, int64_t>> state_runs(const int32_t* token_state, int64_t n) {
  std::vector<std::pair<int64_t, int64_t>> runs;
  for (int64_t t = 0; t < n;) {
    int64_t e = t + 1;
    while (e < n && token_state[e] == token_state[t]) ++e;
    runs.emplace_back(t, e);
    t = e;
  }
  return runs;
}

}  // namespace

bool delta_net_conv(const DeltaConvArgs& a, Parallel* pool) {
  if (!delta_conv_args_ok(a)) return false;
  const int64_t c_n = a.channels, k_n = a.kernel, tail = k_n - 1;
  // Channels are independent: each range walks every token in order over its channels only,
  // snapshots included (a snapshot slot's channels are written by the range that owns them).
  parallel_for(pool, c_n, 256, [&](int64_t c0, int64_t c1) {
    const int64_t w = c1 - c0;
    std::vector<float> acc(static_cast<size_t>(w));
    for (int64_t t = 0; t < a.n_tokens; ++t) {
      float* state = a.conv_states != nullptr
                         ? a.conv_states + static_cast<int64_t>(a.token_state[t]) * tail * c_n
                         : nullptr;
      const float* x = a.x + t * c_n + c0;
      // [w] acc = bias + sum_i w[c, i] * window_i, oldest first, the current token last.
      for (int64_t c = 0; c < w; ++c) acc[c] = a.bias != nullptr ? a.bias[c0 + c] : 0.0f;
      for (int64_t i = 0; i < tail; ++i) {
        const float* s = state + i * c_n + c0;
        for (int64_t c = 0; c < w; ++c) acc[c] += a.weight[(c0 + c) * k_n + i] * s[c];
      }
      for (int64_t c = 0; c < w; ++c) acc[c] += a.weight[(c0 + c) * k_n + tail] * x[c];
      float* y = a.y + t * c_n + c0;
      for (int64_t c = 0; c < w; ++c) y[c] = acc[c] * sigmoidf(acc[c]);
      // Shift the tail: drop the oldest input, append this token's.
      for (int64_t i = 0; i + 1 < tail; ++i)
        std::memcpy(state + i * c_n + c0, state + (i + 1) * c_n + c0, sizeof(float) * w);
      if (tail > 0) std::memcpy(state + (tail - 1) * c_n + c0, x, sizeof(float) * w);
      if (a.token_snapshot != nullptr && a.token_snapshot[t] >= 0 && tail > 0) {
        float* snap = a.conv_states + static_cast<int64_t>(a.token_snapshot[t]) * tail * c_n;
        for (int64_t i = 0; i < tail; ++i)
          std::memcpy(snap + i * c_n + c0, state + i * c_n + c0, sizeof(float) * w);
      }
    }
  });
  return true;
}

bool gated_delta_rule(const GatedDeltaRuleArgs& a, Parallel* pool) {
  if (!gated_delta_rule_args_ok(a)) return false;
  const int64_t dk = a.head_k_dim, dv = a.head_v_dim, hv_n = a.n_v_heads;
  const int64_t group = a.n_v_heads / a.n_k_heads, slot_floats = hv_n * dk * dv;
  const auto runs = state_runs(a.token_state, a.n_tokens);
  const int64_t n_items = static_cast<int64_t>(runs.size()) * hv_n;
  // One item per (sequence run, v head): its [dk, dv] state is touched by no other item.
  parallel_for(pool, n_items, 1, [&](int64_t i0, int64_t i1) {
    std::vector<float> q(static_cast<size_t>(dk)), k(static_cast<size_t>(dk));
    std::vector<float> kv(static_cast<size_t>(dv)), delta(static_cast<size_t>(dv));
    for (int64_t item = i0; item < i1; ++item) {
      const auto [t0, t1] = runs[static_cast<size_t>(item / hv_n)];
      const int64_t h = item % hv_n, hk = h / group;
      float* s = a.delta_states + static_cast<int64_t>(a.token_state[t0]) * slot_floats +
                 h * dk * dv;  // [dk, dv]
      const float a_coef = -std::exp(a.a_log[h]);
      for (int64_t t = t0; t < t1; ++t) {
        const float* qs = a.q + t * a.qkv_stride + hk * dk;
        const float* ks = a.k + t * a.qkv_stride + hk * dk;
        const float* vs = a.v + t * a.qkv_stride + h * dv;
        float qq = 0.0f, kk = 0.0f;
        for (int64_t i = 0; i < dk; ++i) {
          qq += qs[i] * qs[i];
          kk += ks[i] * ks[i];
        }
        const float qn = a.scale / std::sqrt(qq + a.l2_eps), kn = 1.0f / std::sqrt(kk + a.l2_eps);
        for (int64_t i = 0; i < dk; ++i) {
          q[i] = qs[i] * qn;
          k[i] = ks[i] * kn;
        }
        const float decay = std::exp(a_coef * softplusf(a.a[t * a.ab_stride + h] + a.dt_bias[h]));
        const float beta = sigmoidf(a.b[t * a.ab_stride + h]);
        // S *= decay; kv = S^T k   (rows of S are [dv], the vector loop)
        std::fill(kv.begin(), kv.end(), 0.0f);
        for (int64_t i = 0; i < dk; ++i) {
          float* row = s + i * dv;
          const float ki = k[i];
          for (int64_t j = 0; j < dv; ++j) {
            row[j] *= decay;
            kv[j] += row[j] * ki;
          }
        }
        for (int64_t j = 0; j < dv; ++j) delta[j] = beta * (vs[j] - kv[j]);
        // S += k delta^T; o = S^T q
        float* o = a.out + (t * hv_n + h) * dv;
        std::fill(o, o + dv, 0.0f);
        for (int64_t i = 0; i < dk; ++i) {
          float* row = s + i * dv;
          const float ki = k[i], qi = q[i];
          for (int64_t j = 0; j < dv; ++j) {
            row[j] += ki * delta[j];
            o[j] += row[j] * qi;
          }
        }
        if (a.token_snapshot != nullptr && a.token_snapshot[t] >= 0) {
          float* snap = a.delta_states + static_cast<int64_t>(a.token_snapshot[t]) * slot_floats +
                        h * dk * dv;
          std::memcpy(snap, s, sizeof(float) * dk * dv);
        }
      }
    }
  });
  return true;
}

bool gated_rms_norm(const GatedRmsNormArgs& a, Parallel* pool) {
  if (a.n_rows < 0 || a.d <= 0 || a.heads_per_token <= 0 || !a.x || !a.w || !a.z || !a.y)
    return false;
  parallel_for(pool, a.n_rows, 16, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* x = a.x + r * a.d;
      const float* z =
          a.z + (r / a.heads_per_token) * a.z_token_stride + (r % a.heads_per_token) * a.d;
      float ss = 0.0f;
      for (int64_t i = 0; i < a.d; ++i) ss += x[i] * x[i];
      const float inv = 1.0f / std::sqrt(ss / static_cast<float>(a.d) + a.eps);
      float* y = a.y + r * a.d;
      for (int64_t i = 0; i < a.d; ++i) y[i] = x[i] * inv * a.w[i] * (z[i] * sigmoidf(z[i]));
    }
  });
  return true;
}

bool delta_state_copy(const DeltaStateCopyArgs& a, Parallel* pool) {
  if (a.n < 0 || (a.n > 0 && (!a.src || !a.dst))) return false;
  parallel_for(pool, a.n, 1, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      if (a.conv_states != nullptr && a.conv_slot_floats > 0) {
        std::memcpy(a.conv_states + a.dst[i] * a.conv_slot_floats,
                    a.conv_states + a.src[i] * a.conv_slot_floats,
                    sizeof(float) * a.conv_slot_floats);
      }
      if (a.delta_states != nullptr && a.delta_slot_floats > 0) {
        std::memcpy(a.delta_states + a.dst[i] * a.delta_slot_floats,
                    a.delta_states + a.src[i] * a.delta_slot_floats,
                    sizeof(float) * a.delta_slot_floats);
      }
    }
  });
  return true;
}

bool sigmoid_mul(const SigmoidMulArgs& a, Parallel* pool) {
  if (a.n_rows < 0 || a.d <= 0 || !a.x || !a.g || !a.y) return false;
  parallel_for(pool, a.n_rows, 16, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* x = a.x + r * a.d;
      const float* g = a.g + r * a.g_stride;
      float* y = a.y + r * a.d;
      for (int64_t i = 0; i < a.d; ++i) y[i] = x[i] * sigmoidf(g[i]);
    }
  });
  return true;
}

}  // namespace arc::kernels
