// The gpt-oss parts of the reference forward, from transformers' GptOssForCausalLM and the GGUF
// definition llama.cpp runs (its YaRN, with the correction dims rounded outwards).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "model/reference_forward.h"

namespace arc::testing {

// theta_i = pos * base^(-2i / d); with YaRN (factor s, original context L): the pairs whose
// wavelength fits more than beta_fast times into L keep theta_i, those fitting fewer than
// beta_slow times get theta_i / s, a linear ramp between (over the pair index).
double ReferenceModel::rope_angle(int64_t pos, int64_t i) const {
  const double d = static_cast<double>(n_rot_);  // the rotated dims (all of gpt-oss's)
  const double extrap =
      static_cast<double>(pos) * std::pow(theta_, -2.0 * static_cast<double>(i) / d);
  if (yarn_factor_ <= 0.0) return extrap;
  const double interp = extrap / yarn_factor_;
  // Pair index whose wavelength 2 pi base^(2i/d) fits n_rot times into the original context.
  auto corr = [&](double n_rot) {
    return d * std::log(yarn_orig_ctx_ / (n_rot * 2.0 * M_PI)) / (2.0 * std::log(theta_));
  };
  const double low = std::max(0.0, std::floor(corr(yarn_beta_fast_)));
  const double high = std::min(d - 1.0, std::ceil(corr(yarn_beta_slow_)));
  const double y = (static_cast<double>(i) - low) / std::max(0.001, high - low);
  const double keep = 1.0 - std::clamp(y, 0.0, 1.0);  // 1: extrapolate, 0: interpolate
  return interp * (1.0 - keep) + extrap * keep;
}

// router = W x + b; the top n_used logits; their softmax weighs the experts; expert e:
// g = Wg x + bg, u = Wu x + bu, g = min(g, 7), u = clamp(u, -7, 7),
// down(g * sigmoid(1.702 g) * (u + 1)) + bd.
std::vector<double> ReferenceModel::ffn_gpt_oss(const std::string& p,
                                                const std::vector<double>& x) const {
  constexpr double kAlpha = 1.702, kLimit = 7.0;
  std::vector<double> logits = matvec(t(p + "ffn_gate_inp.weight"), x);
  const Mat& rb = t(p + "ffn_gate_inp.bias");
  for (int64_t e = 0; e < n_expert_; ++e) logits[e] += rb.v[e];
  std::vector<int64_t> idx(static_cast<size_t>(n_expert_));
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(),
                   [&](int64_t a, int64_t b) { return logits[a] > logits[b]; });
  double z = 0.0;
  std::vector<double> w(static_cast<size_t>(n_used_));
  for (int64_t j = 0; j < n_used_; ++j) z += (w[j] = std::exp(logits[idx[j]] - logits[idx[0]]));
  const Mat& g = t(p + "ffn_gate_exps.weight");
  const Mat& u = t(p + "ffn_up_exps.weight");
  const Mat& d = t(p + "ffn_down_exps.weight");
  const Mat& gb = t(p + "ffn_gate_exps.bias");  // [n_expert rows of n_ff]
  const Mat& ub = t(p + "ffn_up_exps.bias");
  const Mat& db = t(p + "ffn_down_exps.bias");  // [n_expert rows of n_embd]
  const int64_t ff = g.rows / n_expert_;
  std::vector<double> out(static_cast<size_t>(n_embd_), 0.0);
  for (int64_t j = 0; j < n_used_; ++j) {
    const int64_t e = idx[j];
    std::vector<double> gv = matvec(g, x, e * ff, ff), uv = matvec(u, x, e * ff, ff);
    for (int64_t i = 0; i < ff; ++i) {
      const double gi = std::min(gv[i] + gb.row(e)[i], kLimit);
      const double ui = std::clamp(uv[i] + ub.row(e)[i], -kLimit, kLimit);
      gv[i] = gi / (1.0 + std::exp(-kAlpha * gi)) * (ui + 1.0);
    }
    const std::vector<double> dv = matvec(d, gv, e * n_embd_, n_embd_);
    for (int64_t i = 0; i < n_embd_; ++i) out[i] += w[j] / z * (dv[i] + db.row(e)[i]);
  }
  return out;
}

}  // namespace arc::testing
