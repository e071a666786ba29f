// The deepseek2 attention of the reference forward, from transformers' DeepseekV3Attention in
// its plain (not absorbed) form: keys and values are decompressed from the latent per head,
// k = [k_b^T latent | shared rope key], v = v_b latent, then ordinary multi-head attention.
// The engine runs the absorbed form over a latent cache; the two agree only if both are right.
#include <algorithm>
#include <cmath>

#include "model/reference_forward.h"

namespace arc::testing {

void ReferenceModel::read_mla(const gguf::File& f) {
  auto geti = [&](const std::string& k, int64_t def) {
    return f.get_int(arch_ + "." + k).value_or(def);
  };
  q_lora_ = geti("attention.q_lora_rank", 0);
  kv_lora_ = geti("attention.kv_lora_rank", 0);
  hd_ = geti("attention.key_length_mla", hd_);
  v_hd_ = geti("attention.value_length_mla", 0);
  n_group_ = geti("expert_group_count", 1);
  n_group_used_ = geti("expert_group_used_count", n_group_);
  sigmoid_router_ = true;
  norm_topk_ = f.get_bool(arch_ + ".expert_weights_norm").value_or(false);
  routed_scale_ = f.get_float(arch_ + ".expert_weights_scale").value_or(1.0);
  // DeepSeek's YaRN: the rotation keeps magnitude 1 (mscale / mscale_all_dim); the softmax
  // scale is mscale_all_dim's yarn_get_mscale squared over sqrt(q head dim), with
  // yarn_log_multiplier = 0.1 * mscale_all_dim.
  mla_scale_ = 1.0 / std::sqrt(static_cast<double>(hd_));
  if (yarn_factor_ > 0.0) {
    const double m = 1.0 + f.get_float(arch_ + ".rope.scaling.yarn_log_multiplier").value_or(0.0) *
                               std::log(yarn_factor_);
    mla_scale_ *= m * m;
  }
}

// Interleaved rotation (pairs 2i, 2i + 1) of v[0, n_rot_) at `pos`, magnitude 1.
void ReferenceModel::rope_mla(double* v, int64_t pos) const {
  for (int64_t i = 0; i < n_rot_ / 2; ++i) {
    const double ang = rope_angle(pos, i);
    const double c = std::cos(ang), s = std::sin(ang);
    const double x0 = v[2 * i], x1 = v[2 * i + 1];
    v[2 * i] = x0 * c - x1 * s;
    v[2 * i + 1] = x0 * s + x1 * c;
  }
}

std::vector<std::vector<double>> ReferenceModel::mla_attention(
    const std::string& p, const std::vector<std::vector<double>>& x) const {
  const int64_t n = static_cast<int64_t>(x.size());
  const int64_t nope = hd_ - n_rot_;
  std::vector<std::vector<double>> q(n), k(n), v(n), out(n);
  for (int64_t i = 0; i < n; ++i) {
    const std::vector<double> h = rms(x[i], &t(p + "attn_norm.weight"), 0, n_embd_);
    if (q_lora_ > 0) {
      const std::vector<double> qa = matvec(t(p + "attn_q_a.weight"), h);
      q[i] = matvec(t(p + "attn_q_b.weight"), rms(qa, &t(p + "attn_q_a_norm.weight"), 0, q_lora_));
    } else {
      q[i] = matvec(t(p + "attn_q.weight"), h);
    }
    const std::vector<double> kv = matvec(t(p + "attn_kv_a_mqa.weight"), h);
    const std::vector<double> lat = rms(kv, &t(p + "attn_kv_a_norm.weight"), 0, kv_lora_);
    std::vector<double> kpe(kv.begin() + kv_lora_, kv.begin() + kv_lora_ + n_rot_);
    rope_mla(kpe.data(), i);
    for (int64_t h2 = 0; h2 < n_head_; ++h2) rope_mla(q[i].data() + h2 * hd_ + nope, i);
    // Per head: k = [k_nope | kpe] with k_nope[d] = sum_j k_b[h][j][d] lat[j]; v = v_b[h] lat.
    const Mat& kb = t(p + "attn_k_b.weight");  // rows h * kv_lora + j, cols nope
    const Mat& vb = t(p + "attn_v_b.weight");  // rows h * v_hd + e, cols kv_lora
    k[i].assign(static_cast<size_t>(n_head_ * hd_), 0.0);
    for (int64_t h2 = 0; h2 < n_head_; ++h2) {
      for (int64_t j = 0; j < kv_lora_; ++j) {
        const double* row = kb.row(h2 * kv_lora_ + j);
        for (int64_t d = 0; d < nope; ++d) k[i][h2 * hd_ + d] += row[d] * lat[j];
      }
      std::copy(kpe.begin(), kpe.end(), k[i].begin() + h2 * hd_ + nope);
    }
    v[i] = matvec(vb, lat);  // [n_head * v_hd]
  }
  for (int64_t i = 0; i < n; ++i) {
    std::vector<double> att(static_cast<size_t>(n_head_ * v_hd_), 0.0);
    for (int64_t h = 0; h < n_head_; ++h) {
      std::vector<double> s(static_cast<size_t>(i + 1));
      double mx = -1e300;
      for (int64_t j = 0; j <= i; ++j) {
        double d = 0.0;
        for (int64_t c = 0; c < hd_; ++c) d += q[i][h * hd_ + c] * k[j][h * hd_ + c];
        s[j] = d * mla_scale_;
        mx = std::max(mx, s[j]);
      }
      double z = 0.0;
      for (int64_t j = 0; j <= i; ++j) z += (s[j] = std::exp(s[j] - mx));
      for (int64_t j = 0; j <= i; ++j) {
        for (int64_t c = 0; c < v_hd_; ++c) att[h * v_hd_ + c] += s[j] / z * v[j][h * v_hd_ + c];
      }
    }
    out[i] = matvec(t(p + "attn_output.weight"), att);
  }
  return out;
}

}  // namespace arc::testing
