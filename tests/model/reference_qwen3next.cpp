// The Gated DeltaNet layer of the reference forward (qwen3next), from transformers'
// Qwen3NextGatedDeltaNet with its recurrent (token by token) delta rule: a causal depthwise
// convolution over [q | k | v], silu, l2-normalised q and k (q scaled by 1/sqrt(head_k_dim)), the
// gated delta rule per v head (v head h reads k head h / (v heads / k heads)), an RMS norm per
// head gated by silu(z), and the output projection. Tensors as llama.cpp's converter writes them
// (attn_qkv, attn_gate, ssm_ba grouped per k head as [beta (r) | alpha (r)], ssm_a = -exp(A_log)).
#include <cmath>

#include "model/reference_forward.h"

namespace arc::testing {

namespace {
double sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}
double softplus(double x) {
  return x > 20.0 ? x : std::log1p(std::exp(x));
}
}  // namespace

void ReferenceModel::read_hybrid(const gguf::File& f) {
  auto geti = [&](const std::string& k, int64_t def) {
    return f.get_int(arch_ + "." + k).value_or(def);
  };
  full_attn_interval_ = geti("full_attention_interval", 4);
  ssm_kernel_ = geti("ssm.conv_kernel", 4);
  ssm_hk_ = geti("ssm.group_count", 0);
  ssm_hv_ = geti("ssm.time_step_rank", 0);
  ssm_dk_ = geti("ssm.state_size", 0);
  ssm_dv_ = geti("ssm.inner_size", 0) / ssm_hv_;
}

std::vector<std::vector<double>> ReferenceModel::delta_net(
    const std::string& p, const std::vector<std::vector<double>>& x) const {
  const int64_t n = static_cast<int64_t>(x.size());
  const int64_t hk = ssm_hk_, hv = ssm_hv_, dk = ssm_dk_, dv = ssm_dv_, r = hv / hk;
  const int64_t ch = 2 * hk * dk + hv * dv, kn = ssm_kernel_;
  const Mat& conv = t(p + "ssm_conv1d.weight");  // rows: channels, cols: kernel
  const Mat& a_neg = t(p + "ssm_a");             // -exp(A_log)
  const Mat& dt = t(p + "ssm_dt.bias");
  const Mat& nw = t(p + "ssm_norm.weight");
  std::vector<std::vector<double>> mix(n), z(n), out(n);
  std::vector<std::vector<double>> beta(n, std::vector<double>(hv)), g(n, std::vector<double>(hv));
  for (int64_t i = 0; i < n; ++i) {
    const std::vector<double> h = rms(x[i], &t(p + "attn_norm.weight"), 0, n_embd_);
    mix[i] = matvec(t(p + "attn_qkv.weight"), h);
    z[i] = matvec(t(p + "attn_gate.weight"), h);
    const std::vector<double> ba = matvec(t(p + "ssm_ba.weight"), h);
    for (int64_t j = 0; j < hk; ++j) {
      for (int64_t m = 0; m < r; ++m) {
        const int64_t v = j * r + m;
        beta[i][v] = sigmoid(ba[j * 2 * r + m]);
        g[i][v] = a_neg.v[v] * softplus(ba[j * 2 * r + r + m] + dt.v[v]);
      }
    }
  }
  // S[h]: [dk][dv], from zero.
  std::vector<double> S(static_cast<size_t>(hv * dk * dv), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    std::vector<double> y(static_cast<size_t>(ch));
    for (int64_t c = 0; c < ch; ++c) {
      double s = 0.0;
      for (int64_t k = 0; k < kn; ++k) {
        const int64_t src = i - (kn - 1) + k;
        if (src >= 0) s += conv.row(c)[k] * mix[src][c];
      }
      y[c] = s * sigmoid(s);
    }
    std::vector<double> o(static_cast<size_t>(hv * dv));
    for (int64_t h = 0; h < hv; ++h) {
      const int64_t j = h / r;
      std::vector<double> q(y.begin() + j * dk, y.begin() + (j + 1) * dk);
      std::vector<double> k(y.begin() + hk * dk + j * dk, y.begin() + hk * dk + (j + 1) * dk);
      const double* v = y.data() + 2 * hk * dk + h * dv;
      double qq = 0.0, kk = 0.0;
      for (int64_t d = 0; d < dk; ++d) qq += q[d] * q[d], kk += k[d] * k[d];
      for (int64_t d = 0; d < dk; ++d) {
        q[d] = q[d] / std::sqrt(qq + 1e-6) / std::sqrt(static_cast<double>(dk));
        k[d] = k[d] / std::sqrt(kk + 1e-6);
      }
      double* s = S.data() + h * dk * dv;
      const double decay = std::exp(g[i][h]);
      for (int64_t e = 0; e < dk * dv; ++e) s[e] *= decay;
      for (int64_t c = 0; c < dv; ++c) {
        double mem = 0.0;
        for (int64_t d = 0; d < dk; ++d) mem += s[d * dv + c] * k[d];
        const double delta = (v[c] - mem) * beta[i][h];
        for (int64_t d = 0; d < dk; ++d) s[d * dv + c] += k[d] * delta;
      }
      double ss = 0.0;
      for (int64_t c = 0; c < dv; ++c) {
        double acc = 0.0;
        for (int64_t d = 0; d < dk; ++d) acc += s[d * dv + c] * q[d];
        o[h * dv + c] = acc;
        ss += acc * acc;
      }
      const double inv = 1.0 / std::sqrt(ss / static_cast<double>(dv) + eps_);
      for (int64_t c = 0; c < dv; ++c) {
        const double zc = z[i][h * dv + c];
        o[h * dv + c] *= inv * nw.v[c] * zc * sigmoid(zc);
      }
    }
    out[i] = matvec(t(p + "ssm_out.weight"), o);
  }
  return out;
}

}  // namespace arc::testing
