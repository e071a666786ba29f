#include "model/reference_forward.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "arc/kernels/quant.h"

namespace arc::testing {

ReferenceModel::ReferenceModel(const gguf::File& f) : arch_(f.architecture()) {
  auto geti = [&](const std::string& k, int64_t def) {
    return f.get_int(arch_ + "." + k).value_or(def);
  };
  // glm4moe's converter counts its multi-token-prediction layers in block_count; they are not
  // part of the forward (transformers' Glm4MoeModel runs num_hidden_layers).
  n_nextn_ = geti("nextn_predict_layers", 0);
  n_layer_ = geti("block_count", 0) - n_nextn_;
  n_embd_ = geti("embedding_length", 0);
  n_head_ = geti("attention.head_count", 0);
  n_kv_ = geti("attention.head_count_kv", n_head_);
  hd_ = geti("attention.key_length", n_embd_ / n_head_);
  n_expert_ = geti("expert_count", 0);
  n_used_ = geti("expert_used_count", 0);
  eps_ = f.get_float(arch_ + ".attention.layer_norm_rms_epsilon").value_or(1e-6);
  theta_ = f.get_float(arch_ + ".rope.freq_base").value_or(10000.0);
  // Llama GGUFs rotate adjacent pairs; the Qwen families rotate halves (NeoX).
  neox_ = arch_ != "llama";
  // Qwen1.5/Qwen2 MoE does not renormalise its top-k weights; Qwen3 MoE and Mixtral do; GLM
  // says so in its config (norm_topk_prob), MiniMax-M2 always does.
  norm_topk_ = arch_ != "qwen2moe";
  n_rot_ = geti("rope.dimension_count", hd_);
  sigmoid_router_ = arch_ == "glm4moe" || arch_ == "minimax-m2";
  if (arch_ == "glm4moe") {
    norm_topk_ = f.get_bool(arch_ + ".expert_weights_norm").value_or(false);
    routed_scale_ = f.get_float(arch_ + ".expert_weights_scale").value_or(1.0);
  }
  sections_ = f.get_int_array(arch_ + ".rope.dimension_sections").value_or(std::vector<int64_t>{});
  n_deepstack_ = geti("n_deepstack_layers", 0);
  swa_ = geti("attention.sliding_window", 0);
  swa_period_ = swa_ > 0 ? geti("attention.sliding_window_pattern", 2) : 0;
  if (f.get_string(arch_ + ".rope.scaling.type").value_or("") == "yarn") {
    yarn_factor_ = f.get_float(arch_ + ".rope.scaling.factor").value_or(1.0);
    yarn_orig_ctx_ = static_cast<double>(geti("rope.scaling.original_context_length", 0));
    yarn_beta_fast_ = f.get_float(arch_ + ".rope.scaling.yarn_beta_fast").value_or(32.0);
    yarn_beta_slow_ = f.get_float(arch_ + ".rope.scaling.yarn_beta_slow").value_or(1.0);
  }
  if (arch_ == "qwen3next") read_hybrid(f);
  if (arch_ == "deepseek2") {
    n_layer_ = geti("block_count", 0) - geti("nextn_predict_layers", 0);
    neox_ = false;
    read_mla(f);
  }
  for (const gguf::TensorInfo& ti : f.tensors()) {
    Mat m;
    m.cols = ti.shape[0];
    m.rows = ti.n_rows();
    m.v.resize(static_cast<size_t>(m.rows * m.cols));
    const uint8_t* src = f.tensor_data(ti).data();
    const size_t rb = *dtype_row_bytes(ti.type, static_cast<uint64_t>(m.cols));
    std::vector<float> row(static_cast<size_t>(m.cols));
    for (int64_t r = 0; r < m.rows; ++r) {
      if (!kernels::dequantize_row(ti.type, src + r * rb, row.data(), m.cols)) {
        throw std::runtime_error("cannot dequantize " + ti.name);
      }
      std::copy(row.begin(), row.end(), m.v.begin() + r * m.cols);
    }
    w_[ti.name] = std::move(m);
  }
  n_vocab_ = t("token_embd.weight").rows;
}

const ReferenceModel::Mat& ReferenceModel::t(const std::string& name) const {
  auto it = w_.find(name);
  if (it == w_.end()) throw std::runtime_error("reference: no tensor " + name);
  return it->second;
}

std::vector<double> ReferenceModel::matvec(const Mat& m, const std::vector<double>& x, int64_t row0,
                                           int64_t n_rows) const {
  if (n_rows < 0) n_rows = m.rows;
  std::vector<double> y(static_cast<size_t>(n_rows));
  for (int64_t r = 0; r < n_rows; ++r) {
    const double* w = m.row(row0 + r);
    double s = 0.0;
    for (int64_t i = 0; i < m.cols; ++i) s += w[i] * x[i];
    y[r] = s;
  }
  return y;
}

// RMS norm of x[off, off + n) scaled by w (when given).
std::vector<double> ReferenceModel::rms(const std::vector<double>& x, const Mat* w, int64_t off,
                                        int64_t n) const {
  double ss = 0.0;
  for (int64_t i = 0; i < n; ++i) ss += x[off + i] * x[off + i];
  const double inv = 1.0 / std::sqrt(ss / static_cast<double>(n) + eps_);
  std::vector<double> y(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) y[i] = x[off + i] * inv * (w ? w->v[i] : 1.0);
  return y;
}

// pos: (t, h, w). Interleaved multi-axis RoPE (transformers' apply_interleaved_mrope): the
// frequencies of pairs 1, 4, 7, ... (below 3 * sections[1]) take the h position, pairs 2, 5, 8,
// ... (below 3 * sections[2]) the w position, every other pair the t position.
void ReferenceModel::rope(std::vector<double>& x, int64_t n_heads,
                          const std::array<int64_t, 3>& p3) const {
  for (int64_t h = 0; h < n_heads; ++h) {
    double* v = x.data() + h * hd_;
    for (int64_t i = 0; i < n_rot_ / 2; ++i) {  // dims from n_rot_ on pass unrotated
      int64_t axis = 0;
      if (!sections_.empty()) {
        if (i % 3 == 1 && i < 3 * sections_[1]) axis = 1;
        if (i % 3 == 2 && i < 3 * sections_[2]) axis = 2;
      }
      const int64_t pos = p3[axis];
      const double ang = rope_angle(pos, i);
      // YaRN scales the rotation's magnitude too (q and k both: logits by its square).
      const double mag = yarn_factor_ > 0.0 ? 1.0 + 0.1 * std::log(yarn_factor_) : 1.0;
      const double c = std::cos(ang) * mag, s = std::sin(ang) * mag;
      const int64_t a = neox_ ? i : 2 * i;
      const int64_t b = neox_ ? i + n_rot_ / 2 : 2 * i + 1;
      const double x0 = v[a], x1 = v[b];
      v[a] = x0 * c - x1 * s;
      v[b] = x0 * s + x1 * c;
    }
  }
}

namespace {
double silu(double x) {
  return x / (1.0 + std::exp(-x));
}
}  // namespace

// The FFN of layer prefix p ("blk.3.") on its normalised input x.
std::vector<double> ReferenceModel::ffn(const std::string& p, const std::vector<double>& x) const {
  std::vector<double> out(static_cast<size_t>(n_embd_), 0.0);
  auto swiglu = [&](const Mat& g, const Mat& u, const Mat& d, int64_t e, double scale) {
    const int64_t ff = g.rows / (e < 0 ? 1 : n_expert_);
    const int64_t r0 = e < 0 ? 0 : e * ff;
    std::vector<double> gv = matvec(g, x, r0, ff), uv = matvec(u, x, r0, ff);
    for (int64_t i = 0; i < ff; ++i) gv[i] = silu(gv[i]) * uv[i];
    const std::vector<double> dv = matvec(d, gv, e < 0 ? 0 : e * n_embd_, n_embd_);
    for (int64_t i = 0; i < n_embd_; ++i) out[i] += scale * dv[i];
  };
  if (!has(p + "ffn_gate_inp.weight")) {  // dense (every layer, or GLM's leading ones)
    swiglu(t(p + "ffn_gate.weight"), t(p + "ffn_up.weight"), t(p + "ffn_down.weight"), -1, 1.0);
    return out;
  }
  // Router scores: softmax over all experts, or an independent sigmoid per expert; the top
  // n_used by score (plus the selection bias, when sigmoid), lowest id on ties.
  std::vector<double> score = matvec(t(p + "ffn_gate_inp.weight"), x);
  std::vector<double> select;
  if (sigmoid_router_) {
    const Mat& bias = t(p + "exp_probs_b.bias");
    for (int64_t e = 0; e < n_expert_; ++e) {
      score[e] = 1.0 / (1.0 + std::exp(-score[e]));
      select.push_back(score[e] + bias.v[e]);
    }
  } else {
    const double mx = *std::max_element(score.begin(), score.end());
    double sum = 0.0;
    for (double& l : score) sum += (l = std::exp(l - mx));
    for (double& l : score) l /= sum;
    select = score;
  }
  if (n_group_ > 1 && n_group_used_ < n_group_) {
    // DeepSeek-V3's group-limited choice: a group scores the sum of its two best selection
    // scores; only the n_group_used_ best groups' experts compete (lower group first on ties).
    const int64_t per = n_expert_ / n_group_;
    std::vector<double> gs(static_cast<size_t>(n_group_));
    for (int64_t g = 0; g < n_group_; ++g) {
      std::vector<double> m(select.begin() + g * per, select.begin() + (g + 1) * per);
      std::sort(m.rbegin(), m.rend());
      gs[g] = m[0] + (per > 1 ? m[1] : 0.0);
    }
    std::vector<int64_t> gi(static_cast<size_t>(n_group_));
    std::iota(gi.begin(), gi.end(), 0);
    std::stable_sort(gi.begin(), gi.end(), [&](int64_t a, int64_t b) { return gs[a] > gs[b]; });
    for (int64_t j = n_group_used_; j < n_group_; ++j) {
      for (int64_t e = gi[j] * per; e < (gi[j] + 1) * per; ++e) select[e] = -1e300;
    }
  }
  std::vector<int64_t> idx(static_cast<size_t>(n_expert_));
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(),
                   [&](int64_t a, int64_t b) { return select[a] > select[b]; });
  double wsum = 0.0;
  for (int64_t j = 0; j < n_used_; ++j) wsum += score[idx[j]];
  for (int64_t j = 0; j < n_used_; ++j) {
    const double w = (norm_topk_ ? score[idx[j]] / wsum : score[idx[j]]) * routed_scale_;
    swiglu(t(p + "ffn_gate_exps.weight"), t(p + "ffn_up_exps.weight"),
           t(p + "ffn_down_exps.weight"), idx[j], w);
  }
  if (has(p + "ffn_gate_shexp.weight")) {
    // qwen2moe scales its shared expert by a sigmoid gate; GLM adds its shared experts as is.
    double scale = 1.0;
    if (has(p + "ffn_gate_inp_shexp.weight")) {
      scale = 1.0 / (1.0 + std::exp(-matvec(t(p + "ffn_gate_inp_shexp.weight"), x)[0]));
    }
    swiglu(t(p + "ffn_gate_shexp.weight"), t(p + "ffn_up_shexp.weight"),
           t(p + "ffn_down_shexp.weight"), -1, scale);
  }
  return out;
}

// Layer l (transformer block "blk.<l>.") over the rows x, token i at rotary position pos[i].
void ReferenceModel::layer(int64_t l, std::vector<std::vector<double>>& x,
                           const std::vector<std::array<int64_t, 3>>& pos,
                           const ReferenceImageInputs* image) const {
  const int64_t n = static_cast<int64_t>(x.size());
  const int64_t group = n_head_ / n_kv_;
  const std::string p = "blk." + std::to_string(l) + ".";
  // Sliding-window layers see the last swa_ positions; sinks join each softmax (gpt-oss).
  const bool swa = swa_ > 0 && l % swa_period_ < swa_period_ - 1;
  const Mat* sinks = has(p + "attn_sinks.weight") ? &t(p + "attn_sinks.weight") : nullptr;
  if (arch_ == "deepseek2") {
    const auto o = mla_attention(p, x);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t c = 0; c < n_embd_; ++c) x[i][c] += o[i][c];
    }
  }
  const bool recurrent = full_attn_interval_ > 0 && (l + 1) % full_attn_interval_ != 0;
  if (recurrent) {
    const auto o = delta_net(p, x);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t c = 0; c < n_embd_; ++c) x[i][c] += o[i][c];
    }
  }
  const bool attn = arch_ != "deepseek2" && !recurrent;
  // qwen3next's attention: q_proj gives per head [q | gate]; the output is scaled by
  // sigmoid(gate) before o_proj.
  const bool gated = arch_ == "qwen3next";
  std::vector<std::vector<double>> q(n), k(n), v(n), gate(n);
  for (int64_t i = 0; i < n && attn; ++i) {
    const std::vector<double> h = rms(x[i], &t(p + "attn_norm.weight"), 0, n_embd_);
    q[i] = matvec(t(p + "attn_q.weight"), h);
    if (gated) {
      std::vector<double> qs(static_cast<size_t>(n_head_ * hd_));
      gate[i].resize(static_cast<size_t>(n_head_ * hd_));
      for (int64_t h2 = 0; h2 < n_head_; ++h2) {
        for (int64_t c = 0; c < hd_; ++c) {
          qs[h2 * hd_ + c] = q[i][h2 * 2 * hd_ + c];
          gate[i][h2 * hd_ + c] = q[i][h2 * 2 * hd_ + hd_ + c];
        }
      }
      q[i] = std::move(qs);
    }
    k[i] = matvec(t(p + "attn_k.weight"), h);
    v[i] = matvec(t(p + "attn_v.weight"), h);
    if (has(p + "attn_q.bias")) {
      for (size_t j = 0; j < q[i].size(); ++j) q[i][j] += t(p + "attn_q.bias").v[j];
      for (size_t j = 0; j < k[i].size(); ++j) k[i][j] += t(p + "attn_k.bias").v[j];
      for (size_t j = 0; j < v[i].size(); ++j) v[i][j] += t(p + "attn_v.bias").v[j];
    }
    if (has(p + "attn_q_norm.weight") && t(p + "attn_q_norm.weight").cols == n_head_ * hd_ &&
        n_head_ > 1) {
      // MiniMax-M2: one RMS norm over the whole q and the whole k (all heads).
      q[i] = rms(q[i], &t(p + "attn_q_norm.weight"), 0, n_head_ * hd_);
      k[i] = rms(k[i], &t(p + "attn_k_norm.weight"), 0, n_kv_ * hd_);
    } else if (has(p + "attn_q_norm.weight")) {
      for (int64_t h2 = 0; h2 < n_head_; ++h2) {
        auto y = rms(q[i], &t(p + "attn_q_norm.weight"), h2 * hd_, hd_);
        std::copy(y.begin(), y.end(), q[i].begin() + h2 * hd_);
      }
      for (int64_t h2 = 0; h2 < n_kv_; ++h2) {
        auto y = rms(k[i], &t(p + "attn_k_norm.weight"), h2 * hd_, hd_);
        std::copy(y.begin(), y.end(), k[i].begin() + h2 * hd_);
      }
    }
    rope(q[i], n_head_, pos[i]);
    rope(k[i], n_kv_, pos[i]);
  }
  for (int64_t i = 0; i < n && attn; ++i) {
    std::vector<double> att(static_cast<size_t>(n_head_ * hd_), 0.0);
    for (int64_t h = 0; h < n_head_; ++h) {
      const int64_t kh = h / group;
      const int64_t j0 = swa ? std::max<int64_t>(0, i - swa_ + 1) : 0;
      std::vector<double> s(static_cast<size_t>(i + 1), 0.0);
      double mx = -1e300;
      for (int64_t j = j0; j <= i; ++j) {
        double d = 0.0;
        for (int64_t c = 0; c < hd_; ++c) d += q[i][h * hd_ + c] * k[j][kh * hd_ + c];
        s[j] = d / std::sqrt(static_cast<double>(hd_));
        mx = std::max(mx, s[j]);
      }
      double z = 0.0;
      for (int64_t j = j0; j <= i; ++j) z += (s[j] = std::exp(s[j] - mx));
      if (sinks != nullptr) z += std::exp(sinks->v[h] - mx);
      for (int64_t j = j0; j <= i; ++j) {
        for (int64_t c = 0; c < hd_; ++c) att[h * hd_ + c] += s[j] / z * v[j][kh * hd_ + c];
      }
    }
    if (gated) {
      for (size_t c = 0; c < att.size(); ++c) att[c] /= 1.0 + std::exp(-gate[i][c]);
    }
    const std::vector<double> o = matvec(t(p + "attn_output.weight"), att);
    const Mat* ob = has(p + "attn_output.bias") ? &t(p + "attn_output.bias") : nullptr;
    for (int64_t c = 0; c < n_embd_; ++c) x[i][c] += o[c] + (ob ? ob->v[c] : 0.0);
  }
  for (int64_t i = 0; i < n; ++i) {
    const bool oss = arch_ == "gpt-oss";
    // GLM's and gpt-oss's FFN norm is their post_attention_layernorm, under that name in the
    // GGUF.
    const std::string norm =
        has(p + "ffn_norm.weight") ? "ffn_norm.weight" : "post_attention_norm.weight";
    const std::vector<double> h = rms(x[i], &t(p + norm), 0, n_embd_);
    const std::vector<double> f = oss ? ffn_gpt_oss(p, h) : ffn(p, h);
    for (int64_t c = 0; c < n_embd_; ++c) x[i][c] += f[c];
    // Deepstack: image tokens' hidden states get feature l after layer l.
    if (image != nullptr && l < n_deepstack_ && !image->deepstack[i].empty()) {
      for (int64_t c = 0; c < n_embd_; ++c) x[i][c] += image->deepstack[i][l][c];
    }
  }
}

std::vector<std::vector<double>> ReferenceModel::forward(const std::vector<int32_t>& tokens,
                                                         const ReferenceImageInputs* image) const {
  const int64_t n = static_cast<int64_t>(tokens.size());
  const Mat& emb = t("token_embd.weight");
  std::vector<std::vector<double>> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) x[i].assign(emb.row(tokens[i]), emb.row(tokens[i]) + n_embd_);
  std::vector<std::array<int64_t, 3>> pos(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) pos[i] = {i, i, i};
  if (image != nullptr) {
    pos = image->rope_pos;
    for (int64_t i = 0; i < n; ++i) {
      if (!image->embd[i].empty()) x[i] = image->embd[i];
    }
  }
  for (int64_t l = 0; l < n_layer_; ++l) layer(l, x, pos, image);
  const Mat& out = has("output.weight") ? t("output.weight") : emb;
  std::vector<std::vector<double>> logits(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    logits[i] = matvec(out, rms(x[i], &t("output_norm.weight"), 0, n_embd_));
  }
  return logits;
}

}  // namespace arc::testing
