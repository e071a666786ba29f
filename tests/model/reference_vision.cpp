#include "model/reference_vision.h"

#include <cmath>
#include <stdexcept>

#include "arc/kernels/quant.h"

namespace arc::testing {

ReferenceVision::ReferenceVision(const gguf::File& f) {
  n_embd_ = *f.get_int("clip.vision.embedding_length");
  n_head_ = *f.get_int("clip.vision.attention.head_count");
  n_layer_ = *f.get_int("clip.vision.block_count");
  patch_ = *f.get_int("clip.vision.patch_size");
  merge_ = f.get_int("clip.vision.spatial_merge_size").value_or(2);
  eps_ = f.get_float("clip.vision.attention.layer_norm_epsilon").value_or(1e-6);
  if (const gguf::Value* d = f.find("clip.vision.is_deepstack_layers")) {
    const gguf::Array* a = d->as_array();
    for (size_t i = 0; i < a->items.size(); ++i) {
      if (*a->items[i].as_bool()) deepstack_.push_back(static_cast<int64_t>(i));
    }
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
      for (int64_t c = 0; c < m.cols; ++c) m.v[r * m.cols + c] = row[c];
    }
    w_[ti.name] = std::move(m);
  }
  side_ = static_cast<int64_t>(std::llround(std::sqrt(t("v.position_embd.weight").rows)));
}

const ReferenceVision::Mat& ReferenceVision::t(const std::string& name) const {
  auto it = w_.find(name);
  if (it == w_.end()) throw std::runtime_error("reference vision: no tensor " + name);
  return it->second;
}

// W x + b for a GGUF weight [cols = n_in, rows = n_out].
ReferenceVision::Vec ReferenceVision::affine(const std::string& w, const std::string& b,
                                             const Vec& x) const {
  const Mat& m = t(w);
  const Mat& bias = t(b);
  Vec y(static_cast<size_t>(m.rows));
  for (int64_t r = 0; r < m.rows; ++r) {
    double s = bias.v[r];
    for (int64_t c = 0; c < m.cols; ++c) s += m.v[r * m.cols + c] * x[c];
    y[r] = s;
  }
  return y;
}

ReferenceVision::Vec ReferenceVision::layer_norm(const Vec& x, const std::string& p) const {
  const Mat& w = t(p + "weight");
  const Mat& b = t(p + "bias");
  double mean = 0.0, var = 0.0;
  for (double v : x) mean += v;
  mean /= static_cast<double>(x.size());
  for (double v : x) var += (v - mean) * (v - mean);
  var /= static_cast<double>(x.size());
  Vec y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    y[i] = (x[i] - mean) / std::sqrt(var + eps_) * w.v[i] + b.v[i];
  }
  return y;
}

// Qwen3VLVisionPatchMerger: norm per patch (or over the merged group), fc1, GELU (erf), fc2.
ReferenceVision::Vec ReferenceVision::merger(const std::vector<Vec>& group, const std::string& norm,
                                             const std::string& fc1, const std::string& fc2,
                                             bool postshuffle) const {
  Vec cat;
  if (postshuffle) {
    for (const Vec& g : group) cat.insert(cat.end(), g.begin(), g.end());
    cat = layer_norm(cat, norm);
  } else {
    for (const Vec& g : group) {
      Vec n = layer_norm(g, norm);
      cat.insert(cat.end(), n.begin(), n.end());
    }
  }
  Vec h = affine(fc1 + "weight", fc1 + "bias", cat);
  for (double& v : h) v = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
  return affine(fc2 + "weight", fc2 + "bias", h);
}

ReferenceImageOutput ReferenceVision::encode(const std::vector<float>& pixels, int tt, int h,
                                             int w) const {
  const int64_t e = n_embd_, hd = e / n_head_, p = patch_, m = merge_;
  const int64_t n = static_cast<int64_t>(tt) * h * w;
  const int64_t pd = 3 * 2 * p * p;
  // Conv3d over (C, T, P, P): weight[o][c][tf][y][x] from the two temporal slices.
  const Mat& k0 = t("v.patch_embd.weight");
  const Mat& k1 = t("v.patch_embd.weight.1");
  const Mat& kb = t("v.patch_embd.bias");
  std::vector<Vec> x(static_cast<size_t>(n), Vec(static_cast<size_t>(e)));
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t o = 0; o < e; ++o) {
      double s = kb.v[o];
      for (int64_t c = 0; c < 3; ++c) {
        for (int64_t tf = 0; tf < 2; ++tf) {
          const Mat& k = tf == 0 ? k0 : k1;
          for (int64_t yx = 0; yx < p * p; ++yx) {
            s += k.v[(o * 3 + c) * p * p + yx] * pixels[i * pd + (c * 2 + tf) * p * p + yx];
          }
        }
      }
      x[i][o] = s;
    }
  }
  // fast_pos_embed_interpolate: bilinear on linspace(0, side-1, h) x linspace(0, side-1, w) in
  // raster order, then permuted to merge order (t, h/m, w/m, m, m).
  const Mat& pe = t("v.position_embd.weight");
  std::vector<Vec> raster(static_cast<size_t>(h * w), Vec(static_cast<size_t>(e), 0.0));
  for (int64_t r = 0; r < h; ++r) {
    for (int64_t c = 0; c < w; ++c) {
      const double hy = h == 1 ? 0.0 : r * double(side_ - 1) / double(h - 1);
      const double wx = w == 1 ? 0.0 : c * double(side_ - 1) / double(w - 1);
      const int64_t hf = static_cast<int64_t>(hy), wf = static_cast<int64_t>(wx);
      const int64_t hc = std::min(hf + 1, side_ - 1), wc = std::min(wf + 1, side_ - 1);
      const double dh = hy - hf, dw = wx - wf;
      const int64_t idx[4] = {hf * side_ + wf, hf * side_ + wc, hc * side_ + wf, hc * side_ + wc};
      const double wt[4] = {(1 - dh) * (1 - dw), (1 - dh) * dw, dh * (1 - dw), dh * dw};
      for (int k = 0; k < 4; ++k) {
        for (int64_t i = 0; i < e; ++i) raster[r * w + c][i] += wt[k] * pe.v[idx[k] * e + i];
      }
    }
  }
  // rot_pos_emb: (row, col) per patch in merge order.
  std::vector<int64_t> prow, pcol;
  for (int f = 0; f < tt; ++f) {
    for (int64_t br = 0; br < h / m; ++br) {
      for (int64_t bc = 0; bc < w / m; ++bc) {
        for (int64_t ir = 0; ir < m; ++ir) {
          for (int64_t ic = 0; ic < m; ++ic) {
            prow.push_back(br * m + ir);
            pcol.push_back(bc * m + ic);
          }
        }
      }
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    const Vec& pv = raster[prow[i] * w + pcol[i]];
    for (int64_t j = 0; j < e; ++j) x[i][j] += pv[j];
  }
  // emb = cat(freqs(row), freqs(col)) with inv_freq = theta^-(2k / (hd/2)); cos/sin of
  // cat(emb, emb); q' = q cos + rotate_half(q) sin.
  auto rope = [&](Vec& v, int64_t i) {
    const int64_t quarter = hd / 4;
    for (int64_t hh = 0; hh < n_head_; ++hh) {
      Vec emb(static_cast<size_t>(hd));
      for (int64_t k = 0; k < hd / 2; ++k) {
        const int64_t fk = k % quarter;
        const double inv = std::pow(10000.0, -2.0 * fk / (hd / 2.0));
        emb[k] = emb[k + hd / 2] = (k < quarter ? prow[i] : pcol[i]) * inv;
      }
      Vec q(v.begin() + hh * hd, v.begin() + (hh + 1) * hd), rq(static_cast<size_t>(hd));
      for (int64_t k = 0; k < hd / 2; ++k) {
        rq[k] = -q[k + hd / 2];
        rq[k + hd / 2] = q[k];
      }
      for (int64_t k = 0; k < hd; ++k)
        v[hh * hd + k] = q[k] * std::cos(emb[k]) + rq[k] * std::sin(emb[k]);
    }
  };
  ReferenceImageOutput out;
  const int64_t frame = static_cast<int64_t>(h) * w;
  auto merged = [&](const std::string& norm, const std::string& fc1, const std::string& fc2,
                    bool post) {
    std::vector<Vec> res;
    for (int64_t g = 0; g < n / (m * m); ++g) {
      std::vector<Vec> grp(x.begin() + g * m * m, x.begin() + (g + 1) * m * m);
      res.push_back(merger(grp, norm, fc1, fc2, post));
    }
    return res;
  };
  for (int64_t l = 0; l < n_layer_; ++l) {
    const std::string b = "v.blk." + std::to_string(l) + ".";
    std::vector<Vec> q(n), k(n), v(n);
    for (int64_t i = 0; i < n; ++i) {
      const Vec qkv =
          affine(b + "attn_qkv.weight", b + "attn_qkv.bias", layer_norm(x[i], b + "ln1."));
      q[i].assign(qkv.begin(), qkv.begin() + e);
      k[i].assign(qkv.begin() + e, qkv.begin() + 2 * e);
      v[i].assign(qkv.begin() + 2 * e, qkv.end());
      rope(q[i], i);
      rope(k[i], i);
    }
    std::vector<Vec> att(n, Vec(static_cast<size_t>(e), 0.0));
    for (int64_t i = 0; i < n; ++i) {
      const int64_t f0 = (i / frame) * frame;  // attention within the frame (cu_seqlens)
      for (int64_t hh = 0; hh < n_head_; ++hh) {
        std::vector<double> s(static_cast<size_t>(frame));
        double mx = -1e300;
        for (int64_t j = 0; j < frame; ++j) {
          double d = 0.0;
          for (int64_t c = 0; c < hd; ++c) d += q[i][hh * hd + c] * k[f0 + j][hh * hd + c];
          s[j] = d / std::sqrt(static_cast<double>(hd));
          mx = std::max(mx, s[j]);
        }
        double z = 0.0;
        for (double& sv : s) z += (sv = std::exp(sv - mx));
        for (int64_t j = 0; j < frame; ++j) {
          for (int64_t c = 0; c < hd; ++c) att[i][hh * hd + c] += s[j] / z * v[f0 + j][hh * hd + c];
        }
      }
    }
    for (int64_t i = 0; i < n; ++i) {
      const Vec o = affine(b + "attn_out.weight", b + "attn_out.bias", att[i]);
      for (int64_t c = 0; c < e; ++c) x[i][c] += o[c];
      Vec u = affine(b + "ffn_up.weight", b + "ffn_up.bias", layer_norm(x[i], b + "ln2."));
      for (double& z : u) {  // gelu_pytorch_tanh
        z = 0.5 * z * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (z + 0.044715 * z * z * z)));
      }
      const Vec d = affine(b + "ffn_down.weight", b + "ffn_down.bias", u);
      for (int64_t c = 0; c < e; ++c) x[i][c] += d[c];
    }
    for (int64_t ds : deepstack_) {
      if (ds != l) continue;
      const std::string p = "v.deepstack." + std::to_string(l) + ".";
      out.deepstack.push_back(merged(p + "norm.", p + "fc1.", p + "fc2.", true));
    }
  }
  out.main = merged("v.post_ln.", "mm.0.", "mm.2.", false);
  return out;
}

}  // namespace arc::testing
