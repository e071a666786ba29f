// Scalar reference Gated DeltaNet ops. Every token's arithmetic is done in double; the states are
// float storage and are rounded after every token, so a run split across steps (chunked prefill,
// prefix resume from a snapshot) gives exactly the same values as one whole run.
#include <algorithm>
#include <cmath>
#include <vector>

#include "arc/kernels/delta_net.h"

namespace arc::kernels {

bool delta_conv_args_ok(const DeltaConvArgs& a) {
  return a.n_tokens >= 0 && a.channels > 0 && a.kernel >= 1 && a.x != nullptr && a.y != nullptr &&
         a.x != a.y && a.weight != nullptr && a.token_state != nullptr &&
         (a.kernel == 1 || a.conv_states != nullptr);
}

bool gated_delta_rule_args_ok(const GatedDeltaRuleArgs& a) {
  return a.n_tokens >= 0 && a.n_k_heads > 0 && a.n_v_heads > 0 && a.n_v_heads % a.n_k_heads == 0 &&
         a.head_k_dim > 0 && a.head_v_dim > 0 && a.scale != 0.0f && a.q != nullptr &&
         a.k != nullptr && a.v != nullptr && a.a != nullptr && a.b != nullptr &&
         a.a_log != nullptr && a.dt_bias != nullptr && a.out != nullptr &&
         a.delta_states != nullptr && a.token_state != nullptr;
}

namespace ref {

namespace {

double sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}

// torch.nn.functional.softplus (beta 1, threshold 20).
double softplus(double x) {
  return x > 20.0 ? x : std::log1p(std::exp(x));
}

}  // namespace

bool delta_net_conv(const DeltaConvArgs& a) {
  if (!delta_conv_args_ok(a)) return false;
  const int64_t c_n = a.channels, k_n = a.kernel, tail = k_n - 1;
  // window[i]: the input i - tail steps back, i = tail is the current token.
  std::vector<double> window(static_cast<size_t>(k_n));
  for (int64_t t = 0; t < a.n_tokens; ++t) {
    float* state = a.conv_states + static_cast<int64_t>(a.token_state[t]) * tail * c_n;
    for (int64_t c = 0; c < c_n; ++c) {
      for (int64_t i = 0; i < tail; ++i) window[i] = state[i * c_n + c];
      window[tail] = a.x[t * c_n + c];
      double s = a.bias != nullptr ? a.bias[c] : 0.0;
      for (int64_t i = 0; i < k_n; ++i) s += static_cast<double>(a.weight[c * k_n + i]) * window[i];
      a.y[t * c_n + c] = static_cast<float>(s * sigmoid(s));
      for (int64_t i = 0; i < tail; ++i) state[i * c_n + c] = static_cast<float>(window[i + 1]);
    }
    if (a.token_snapshot != nullptr && a.token_snapshot[t] >= 0) {
      std::copy(state, state + tail * c_n, a.conv_states + a.token_snapshot[t] * tail * c_n);
    }
  }
  return true;
}

bool gated_delta_rule(const GatedDeltaRuleArgs& a) {
  if (!gated_delta_rule_args_ok(a)) return false;
  const int64_t dk = a.head_k_dim, dv = a.head_v_dim, hv_n = a.n_v_heads;
  const int64_t group = a.n_v_heads / a.n_k_heads, slot_floats = hv_n * dk * dv;
  std::vector<double> q(static_cast<size_t>(dk)), k(static_cast<size_t>(dk));
  std::vector<double> kv(static_cast<size_t>(dv));
  for (int64_t t = 0; t < a.n_tokens; ++t) {
    float* slot = a.delta_states + static_cast<int64_t>(a.token_state[t]) * slot_floats;
    for (int64_t h = 0; h < hv_n; ++h) {
      const int64_t hk = h / group;
      const float* qs = a.q + t * a.qkv_stride + hk * dk;
      const float* ks = a.k + t * a.qkv_stride + hk * dk;
      const float* vs = a.v + t * a.qkv_stride + h * dv;
      double qq = 0.0, kk = 0.0;
      for (int64_t i = 0; i < dk; ++i) {
        qq += static_cast<double>(qs[i]) * qs[i];
        kk += static_cast<double>(ks[i]) * ks[i];
      }
      const double qn = a.scale / std::sqrt(qq + a.l2_eps), kn = 1.0 / std::sqrt(kk + a.l2_eps);
      for (int64_t i = 0; i < dk; ++i) {
        q[i] = qs[i] * qn;
        k[i] = ks[i] * kn;
      }
      const double g = -std::exp(static_cast<double>(a.a_log[h])) *
                       softplus(static_cast<double>(a.a[t * a.ab_stride + h]) + a.dt_bias[h]);
      const double decay = std::exp(g);
      const double beta = sigmoid(a.b[t * a.ab_stride + h]);
      float* s = slot + h * dk * dv;  // [dk, dv]
      // kv = (decay * S)^T k
      std::fill(kv.begin(), kv.end(), 0.0);
      for (int64_t i = 0; i < dk; ++i)
        for (int64_t j = 0; j < dv; ++j) kv[j] += decay * s[i * dv + j] * k[i];
      float* o = a.out + (t * hv_n + h) * dv;
      std::vector<double> acc(static_cast<size_t>(dv), 0.0);
      for (int64_t i = 0; i < dk; ++i) {
        for (int64_t j = 0; j < dv; ++j) {
          const double delta = beta * (static_cast<double>(vs[j]) - kv[j]);
          const double si = decay * s[i * dv + j] + k[i] * delta;
          s[i * dv + j] = static_cast<float>(si);
          acc[j] += si * q[i];
        }
      }
      for (int64_t j = 0; j < dv; ++j) o[j] = static_cast<float>(acc[j]);
    }
    if (a.token_snapshot != nullptr && a.token_snapshot[t] >= 0) {
      std::copy(slot, slot + slot_floats, a.delta_states + a.token_snapshot[t] * slot_floats);
    }
  }
  return true;
}

bool gated_rms_norm(const GatedRmsNormArgs& a) {
  if (a.n_rows < 0 || a.d <= 0 || a.heads_per_token <= 0 || !a.x || !a.w || !a.z || !a.y)
    return false;
  for (int64_t r = 0; r < a.n_rows; ++r) {
    const float* x = a.x + r * a.d;
    const float* z =
        a.z + (r / a.heads_per_token) * a.z_token_stride + (r % a.heads_per_token) * a.d;
    double ss = 0.0;
    for (int64_t i = 0; i < a.d; ++i) ss += static_cast<double>(x[i]) * x[i];
    const double inv = 1.0 / std::sqrt(ss / static_cast<double>(a.d) + a.eps);
    float* y = a.y + r * a.d;
    for (int64_t i = 0; i < a.d; ++i) {
      const double zi = z[i];
      y[i] = static_cast<float>(x[i] * inv * a.w[i] * zi * sigmoid(zi));
    }
  }
  return true;
}

bool delta_state_copy(const DeltaStateCopyArgs& a) {
  if (a.n < 0 || (a.n > 0 && (!a.src || !a.dst))) return false;
  for (int64_t i = 0; i < a.n; ++i) {
    if (a.conv_states != nullptr && a.conv_slot_floats > 0) {
      const float* s = a.conv_states + a.src[i] * a.conv_slot_floats;
      std::copy(s, s + a.conv_slot_floats, a.conv_states + a.dst[i] * a.conv_slot_floats);
    }
    if (a.delta_states != nullptr && a.delta_slot_floats > 0) {
      const float* s = a.delta_states + a.src[i] * a.delta_slot_floats;
      std::copy(s, s + a.delta_slot_floats, a.delta_states + a.dst[i] * a.delta_slot_floats);
    }
  }
  return true;
}

bool sigmoid_mul(const SigmoidMulArgs& a) {
  if (a.n_rows < 0 || a.d <= 0 || !a.x || !a.g || !a.y) return false;
  for (int64_t r = 0; r < a.n_rows; ++r) {
    for (int64_t i = 0; i < a.d; ++i) {
      const double g = a.g[r * a.g_stride + i];
      a.y[r * a.d + i] = static_cast<float>(a.x[r * a.d + i] * sigmoid(g));
    }
  }
  return true;
}

}  // namespace ref
}  // namespace arc::kernels
