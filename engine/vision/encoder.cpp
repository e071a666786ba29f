// The Qwen3-VL vision encoder on the CPU kernels (definitions: HF transformers'
// Qwen3VLVisionModel; tensor layout: mmproj_arch.h).
//
//   x = Conv3d(patches) + bias + bilinear(learned positions)         [N, E]   N patches
//   for each block:  x += attn(LN1(x)) with 2-D rotary (row | col)   full attention per frame
//                    x += down(gelu_tanh(up(LN2(x))))
//                    deepstack layer L: ds = fc2(gelu(fc1(LN_M(view(x, [N/4, 4E])))))
//   main = mm.2(gelu(mm.0(view(LN_E(x), [N/4, 4E]))))                 [N/4, D]
//
// Patches arrive in merge order (arc/vision_image.h): every run of merge^2 patches is one output
// token, so the 2x2 merge is a reinterpretation of the rows.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "arc/kernels/matmul.h"
#include "arc/kernels/ops.h"
#include "arc/kernels/quant.h"
#include "arc/log.h"
#include "arc/thread_pool.h"
#include "vision/mmproj_arch.h"

namespace arc::vision {

namespace {

// A 2-D weight used in place from the mapped file (or dequantized when the kernels cannot read
// its type). y[t, o] = sum_i w[o, i] x[t, i].
struct Mat {
  const void* data = nullptr;
  DType type = DType::F32;
  int64_t n_in = 0;
  int64_t n_out = 0;
  size_t row_bytes = 0;
  std::vector<float> owned;
};

bool kernel_type(DType t) {
  switch (t) {
    case DType::F32:
    case DType::F16:
    case DType::BF16:
    case DType::Q8_0:
    case DType::Q4_0:
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K:
      return true;
    default:
      return false;
  }
}

// Largest image the encoder takes: 16384 patches (4096 output tokens, e.g. 2048 x 2048 pixels).
constexpr int64_t kMaxPatches = 16384;
// Attention scores are computed for this many query rows at a time: [kQueryChunk, n_keys].
constexpr int64_t kQueryChunk = 512;

}  // namespace

struct VisionEncoder::Impl {
  gguf::File file;
  VisionConfig cfg;
  mutable ThreadPool pool;

  std::vector<float> patch_w;  // [E, patch_dim] Conv3d kernel in the patch layout (c, t, y, x)
  std::vector<float> patch_b;  // [E]
  std::vector<float> pos;      // [side * side, E]
  std::vector<float> post_w, post_b;
  Mat mm0, mm2;
  std::vector<float> mm0_b, mm2_b;
  struct Block {
    std::vector<float> ln1_w, ln1_b, ln2_w, ln2_b, qkv_b, out_b, up_b, down_b;
    Mat qkv, out, up, down;
  };
  std::vector<Block> blocks;
  struct Merger {
    std::vector<float> norm_w, norm_b, fc1_b, fc2_b;
    Mat fc1, fc2;
  };
  std::vector<Merger> deepstack;  // one per cfg.deepstack_layers entry

  Impl(gguf::File f, int n_threads) : file(std::move(f)), pool(n_threads) {}

  Result<std::vector<float>> vec(const std::string& name) const {
    const gguf::TensorInfo* t = file.find_tensor(name);
    std::vector<float> out(static_cast<size_t>(t->n_elements()));
    if (!kernels::dequantize_row(t->type, file.tensor_data(*t).data(), out.data(),
                                 t->n_elements())) {
      return invalid_argument("vision projector: cannot read tensor '" + name + "' of type " +
                              std::string(dtype_name(t->type)));
    }
    return out;
  }

  Result<Mat> mat(const std::string& name) const {
    const gguf::TensorInfo* t = file.find_tensor(name);
    Mat m;
    m.n_in = t->shape[0];
    m.n_out = t->n_rows();
    m.type = t->type;
    m.row_bytes = *dtype_row_bytes(t->type, static_cast<uint64_t>(m.n_in));
    m.data = file.tensor_data(*t).data();
    if (!kernel_type(t->type)) {  // rare formats: dequantize once
      ARC_ASSIGN_OR_RETURN(m.owned, vec(name));
      m.data = m.owned.data();
      m.type = DType::F32;
      m.row_bytes = sizeof(float) * static_cast<size_t>(m.n_in);
    }
    return m;
  }

  Status load() {
    const VisionConfig& c = cfg;
    const int64_t e = c.n_embd, p2 = c.patch_size * c.patch_size;
    ARC_ASSIGN_OR_RETURN(std::vector<float> k0, vec("v.patch_embd.weight"));
    ARC_ASSIGN_OR_RETURN(std::vector<float> k1, vec("v.patch_embd.weight.1"));
    // GGUF [P, P, 3, E] is row-major [E][3][P][P]; the patch holds (c, t, y, x).
    patch_w.resize(static_cast<size_t>(e * c.patch_dim()));
    for (int64_t o = 0; o < e; ++o) {
      for (int64_t ch = 0; ch < 3; ++ch) {
        const float* s0 = k0.data() + (o * 3 + ch) * p2;
        const float* s1 = k1.data() + (o * 3 + ch) * p2;
        float* d = patch_w.data() + o * c.patch_dim() + ch * c.temporal_patch * p2;
        std::copy(s0, s0 + p2, d);
        std::copy(s1, s1 + p2, d + p2);
      }
    }
    ARC_ASSIGN_OR_RETURN(patch_b, vec("v.patch_embd.bias"));
    ARC_ASSIGN_OR_RETURN(pos, vec("v.position_embd.weight"));
    ARC_ASSIGN_OR_RETURN(post_w, vec("v.post_ln.weight"));
    ARC_ASSIGN_OR_RETURN(post_b, vec("v.post_ln.bias"));
    ARC_ASSIGN_OR_RETURN(mm0, mat("mm.0.weight"));
    ARC_ASSIGN_OR_RETURN(mm0_b, vec("mm.0.bias"));
    ARC_ASSIGN_OR_RETURN(mm2, mat("mm.2.weight"));
    ARC_ASSIGN_OR_RETURN(mm2_b, vec("mm.2.bias"));
    blocks.resize(static_cast<size_t>(c.n_layer));
    for (int64_t l = 0; l < c.n_layer; ++l) {
      const std::string p = "v.blk." + std::to_string(l) + ".";
      Block& b = blocks[l];
      ARC_ASSIGN_OR_RETURN(b.ln1_w, vec(p + "ln1.weight"));
      ARC_ASSIGN_OR_RETURN(b.ln1_b, vec(p + "ln1.bias"));
      ARC_ASSIGN_OR_RETURN(b.ln2_w, vec(p + "ln2.weight"));
      ARC_ASSIGN_OR_RETURN(b.ln2_b, vec(p + "ln2.bias"));
      ARC_ASSIGN_OR_RETURN(b.qkv, mat(p + "attn_qkv.weight"));
      ARC_ASSIGN_OR_RETURN(b.qkv_b, vec(p + "attn_qkv.bias"));
      ARC_ASSIGN_OR_RETURN(b.out, mat(p + "attn_out.weight"));
      ARC_ASSIGN_OR_RETURN(b.out_b, vec(p + "attn_out.bias"));
      ARC_ASSIGN_OR_RETURN(b.up, mat(p + "ffn_up.weight"));
      ARC_ASSIGN_OR_RETURN(b.up_b, vec(p + "ffn_up.bias"));
      ARC_ASSIGN_OR_RETURN(b.down, mat(p + "ffn_down.weight"));
      ARC_ASSIGN_OR_RETURN(b.down_b, vec(p + "ffn_down.bias"));
    }
    for (int64_t layer : c.deepstack_layers) {
      const std::string p = "v.deepstack." + std::to_string(layer) + ".";
      Merger m;
      ARC_ASSIGN_OR_RETURN(m.norm_w, vec(p + "norm.weight"));
      ARC_ASSIGN_OR_RETURN(m.norm_b, vec(p + "norm.bias"));
      ARC_ASSIGN_OR_RETURN(m.fc1, mat(p + "fc1.weight"));
      ARC_ASSIGN_OR_RETURN(m.fc1_b, vec(p + "fc1.bias"));
      ARC_ASSIGN_OR_RETURN(m.fc2, mat(p + "fc2.weight"));
      ARC_ASSIGN_OR_RETURN(m.fc2_b, vec(p + "fc2.bias"));
      deepstack.push_back(std::move(m));
    }
    return ok_status();
  }

  // y = x w^T (+ bias), x: [n, w.n_in] with row stride x_stride (0: n_in); y: [n, w.n_out].
  Status linear(const Mat& w, const float* x, int64_t n, float* y, const std::vector<float>* bias,
                int64_t x_stride = 0) const {
    kernels::MatmulArgs a;
    a.w = w.data;
    a.w_type = w.type;
    a.n_in = w.n_in;
    a.n_out = w.n_out;
    a.w_row_bytes = w.row_bytes;
    a.x = x;
    a.x_stride = x_stride;
    a.n_tokens = n;
    a.y = y;
    if (!kernels::matmul(a, &pool)) {
      return internal_error("vision encoder: no matmul for " + std::string(dtype_name(w.type)));
    }
    if (bias != nullptr) {
      kernels::parallel_for(&pool, n, 16, [&](int64_t b, int64_t e) {
        for (int64_t t = b; t < e; ++t) {
          float* r = y + t * w.n_out;
          for (int64_t o = 0; o < w.n_out; ++o) r[o] += (*bias)[o];
        }
      });
    }
    return ok_status();
  }

  // LayerNorm with weight and bias over rows of d: y may alias x.
  void layer_norm(const float* x, const float* w, const float* b, float* y, int64_t n,
                  int64_t d) const {
    const float eps = cfg.eps;
    kernels::parallel_for(&pool, n, 8, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const float* xr = x + r * d;
        double mean = 0.0;
        for (int64_t i = 0; i < d; ++i) mean += xr[i];
        mean /= static_cast<double>(d);
        double var = 0.0;
        for (int64_t i = 0; i < d; ++i) var += (xr[i] - mean) * (xr[i] - mean);
        var /= static_cast<double>(d);
        const float inv = static_cast<float>(1.0 / std::sqrt(var + eps));
        const float m = static_cast<float>(mean);
        float* yr = y + r * d;
        for (int64_t i = 0; i < d; ++i) yr[i] = (xr[i] - m) * inv * w[i] + b[i];
      }
    });
  }

  // Exact (erf) GELU: nn.GELU() of the mergers.
  void gelu_erf(float* x, int64_t n) const {
    kernels::parallel_for(&pool, n, 4096, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        x[i] = 0.5f * x[i] * (1.0f + std::erf(x[i] * static_cast<float>(M_SQRT1_2)));
      }
    });
  }

  // A merger: x [n_tok, M] (already normalised) -> out [n_tok, D].
  Status merger_mlp(const Mat& fc1, const std::vector<float>& b1, const Mat& fc2,
                    const std::vector<float>& b2, const float* x, int64_t n_tok,
                    std::vector<float>& out) const {
    std::vector<float> hid(static_cast<size_t>(n_tok * fc1.n_out));
    ARC_RETURN_IF_ERROR(linear(fc1, x, n_tok, hid.data(), &b1));
    gelu_erf(hid.data(), static_cast<int64_t>(hid.size()));
    out.assign(static_cast<size_t>(n_tok * fc2.n_out), 0.0f);
    return linear(fc2, hid.data(), n_tok, out.data(), &b2);
  }

  // Rotary cos/sin per patch: pair i < hd/4 rotates by row * theta^(-4i/hd), pair i >= hd/4 by
  // col * theta^(-4(i - hd/4)/hd); pairs are (i, i + hd/2). cs, sn: [N, hd/2].
  void rotary(const std::vector<int32_t>& rows, const std::vector<int32_t>& cols,
              std::vector<float>& cs, std::vector<float>& sn) const {
    const int64_t n = static_cast<int64_t>(rows.size());
    const int64_t half = cfg.head_dim / 2, quarter = cfg.head_dim / 4;
    cs.resize(static_cast<size_t>(n * half));
    sn.resize(cs.size());
    for (int64_t p = 0; p < n; ++p) {
      for (int64_t i = 0; i < half; ++i) {
        const int64_t j = i < quarter ? i : i - quarter;
        const double f = std::pow(static_cast<double>(cfg.rope_theta),
                                  -4.0 * static_cast<double>(j) / cfg.head_dim);
        const double ang = (i < quarter ? rows[p] : cols[p]) * f;
        cs[p * half + i] = static_cast<float>(std::cos(ang));
        sn[p * half + i] = static_cast<float>(std::sin(ang));
      }
    }
  }

  // Full attention inside each frame. qkv: [N, 3E] (rotated q, k); out: [N, E].
  void attention(const float* qkv, int64_t n, int64_t frame, float* out) const {
    const int64_t e = cfg.n_embd, hd = cfg.head_dim, s3 = 3 * e;
    const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
    std::vector<float> vt(static_cast<size_t>(hd * frame));  // [hd, frame] V of one head
    std::vector<float> sc(static_cast<size_t>(std::min(kQueryChunk, frame) * frame));
    for (int64_t f0 = 0; f0 < n; f0 += frame) {
      for (int64_t h = 0; h < cfg.n_head; ++h) {
        const float* q = qkv + f0 * s3 + h * hd;
        const float* k = q + e;
        const float* v = q + 2 * e;
        for (int64_t j = 0; j < frame; ++j) {
          for (int64_t d = 0; d < hd; ++d) vt[d * frame + j] = v[j * s3 + d];
        }
        for (int64_t q0 = 0; q0 < frame; q0 += kQueryChunk) {
          const int64_t nq = std::min(kQueryChunk, frame - q0);
          kernels::MatmulArgs a;  // scores [nq, frame] = q k^T
          a.w = k;
          a.w_type = DType::F32;
          a.n_in = hd;
          a.n_out = frame;
          a.w_row_bytes = sizeof(float) * static_cast<size_t>(s3);
          a.x = q + q0 * s3;
          a.x_stride = s3;
          a.n_tokens = nq;
          a.y = sc.data();
          kernels::matmul(a, &pool);
          kernels::parallel_for(&pool, nq, 4, [&](int64_t b, int64_t en) {
            for (int64_t r = b; r < en; ++r) {
              float* row = sc.data() + r * frame;
              for (int64_t j = 0; j < frame; ++j) row[j] *= scale;
              kernels::softmax_rows(row, 1, frame);
            }
          });
          kernels::MatmulArgs o;  // out [nq, hd] = P V
          o.w = vt.data();
          o.w_type = DType::F32;
          o.n_in = frame;
          o.n_out = hd;
          o.x = sc.data();
          o.n_tokens = nq;
          o.y = out + (f0 + q0) * e + h * hd;
          o.y_stride = e;
          kernels::matmul(o, &pool);
        }
      }
    }
  }

  Result<ImageEmbeddings> encode(const PatchGrid& g) const {
    const VisionConfig& c = cfg;
    const int64_t e = c.n_embd, m = c.merge_size, m2 = m * m;
    const int64_t n = g.n_patches(), frame = static_cast<int64_t>(g.h) * g.w;
    const int64_t hd = c.head_dim, half = hd / 2;

    // Each patch's row and column in its frame (merge order) and its position embedding.
    std::vector<int32_t> rows(static_cast<size_t>(n)), cols(static_cast<size_t>(n));
    const int64_t bw = g.w / m;
    for (int64_t p = 0; p < n; ++p) {
      const int64_t q = p % frame, blk = q / m2, in = q % m2;
      rows[p] = static_cast<int32_t>((blk / bw) * m + in / m);
      cols[p] = static_cast<int32_t>((blk % bw) * m + in % m);
    }
    std::vector<float> x(static_cast<size_t>(n * e));
    {
      Mat pw;
      pw.data = patch_w.data();
      pw.n_in = c.patch_dim();
      pw.n_out = e;
      pw.row_bytes = sizeof(float) * static_cast<size_t>(pw.n_in);
      ARC_RETURN_IF_ERROR(linear(pw, g.pixels.data(), n, x.data(), &patch_b));
    }
    // Bilinear resize of the learned table to the grid (corners aligned: linspace(0, side-1, h)).
    const int64_t side = c.pos_side;
    auto coord = [&](int64_t i, int64_t len) {
      return len <= 1 ? 0.0
                      : static_cast<double>(i) * static_cast<double>(side - 1) /
                            static_cast<double>(len - 1);
    };
    kernels::parallel_for(&pool, n, 16, [&](int64_t b, int64_t en) {
      for (int64_t p = b; p < en; ++p) {
        const double hy = coord(rows[p], g.h), wx = coord(cols[p], g.w);
        const int64_t y0 = static_cast<int64_t>(hy), x0 = static_cast<int64_t>(wx);
        const int64_t y1 = std::min(y0 + 1, side - 1), x1 = std::min(x0 + 1, side - 1);
        const float dy = static_cast<float>(hy - y0), dx = static_cast<float>(wx - x0);
        const float w00 = (1 - dy) * (1 - dx), w01 = (1 - dy) * dx, w10 = dy * (1 - dx),
                    w11 = dy * dx;
        const float* p00 = pos.data() + (y0 * side + x0) * e;
        const float* p01 = pos.data() + (y0 * side + x1) * e;
        const float* p10 = pos.data() + (y1 * side + x0) * e;
        const float* p11 = pos.data() + (y1 * side + x1) * e;
        float* xr = x.data() + p * e;
        for (int64_t i = 0; i < e; ++i) {
          xr[i] += w00 * p00[i] + w01 * p01[i] + w10 * p10[i] + w11 * p11[i];
        }
      }
    });
    std::vector<float> cs, sn;
    rotary(rows, cols, cs, sn);

    std::vector<float> xn(x.size()), qkv(static_cast<size_t>(n * 3 * e)), att(x.size());
    std::vector<float> ff(static_cast<size_t>(n * c.n_ff));
    ImageEmbeddings out;
    const int64_t n_tok = n / m2;
    for (int64_t l = 0; l < c.n_layer; ++l) {
      const Block& b = blocks[l];
      layer_norm(x.data(), b.ln1_w.data(), b.ln1_b.data(), xn.data(), n, e);
      ARC_RETURN_IF_ERROR(linear(b.qkv, xn.data(), n, qkv.data(), &b.qkv_b));
      kernels::parallel_for(&pool, n, 16, [&](int64_t b0, int64_t b1) {
        for (int64_t p = b0; p < b1; ++p) {
          const float* cp = cs.data() + p * half;
          const float* sp = sn.data() + p * half;
          for (int64_t part = 0; part < 2; ++part) {  // q, then k
            for (int64_t h = 0; h < c.n_head; ++h) {
              float* v = qkv.data() + p * 3 * e + part * e + h * hd;
              for (int64_t i = 0; i < half; ++i) {
                const float a0 = v[i], a1 = v[i + half];
                v[i] = a0 * cp[i] - a1 * sp[i];
                v[i + half] = a0 * sp[i] + a1 * cp[i];
              }
            }
          }
        }
      });
      attention(qkv.data(), n, frame, att.data());
      ARC_RETURN_IF_ERROR(linear(b.out, att.data(), n, xn.data(), &b.out_b));
      kernels::add(x.data(), xn.data(), x.data(), n * e);
      layer_norm(x.data(), b.ln2_w.data(), b.ln2_b.data(), xn.data(), n, e);
      ARC_RETURN_IF_ERROR(linear(b.up, xn.data(), n, ff.data(), &b.up_b));
      kernels::gelu(ff.data(), ff.data(), n * c.n_ff);
      ARC_RETURN_IF_ERROR(linear(b.down, ff.data(), n, xn.data(), &b.down_b));
      kernels::add(x.data(), xn.data(), x.data(), n * e);

      auto ds = std::find(c.deepstack_layers.begin(), c.deepstack_layers.end(), l);
      if (ds != c.deepstack_layers.end()) {
        const Merger& mg = deepstack[ds - c.deepstack_layers.begin()];
        // Norm after the merge: rows of M = 4E.
        layer_norm(x.data(), mg.norm_w.data(), mg.norm_b.data(), xn.data(), n_tok, c.merged_dim());
        out.deepstack.emplace_back();
        ARC_RETURN_IF_ERROR(
            merger_mlp(mg.fc1, mg.fc1_b, mg.fc2, mg.fc2_b, xn.data(), n_tok, out.deepstack.back()));
      }
    }
    layer_norm(x.data(), post_w.data(), post_b.data(), xn.data(), n, e);
    ARC_RETURN_IF_ERROR(merger_mlp(mm0, mm0_b, mm2, mm2_b, xn.data(), n_tok, out.main));
    out.n_tokens = n_tok;
    out.n_embd = c.proj_dim;
    out.grid_t = g.t;
    out.grid_h = g.h / static_cast<int>(m);
    out.grid_w = g.w / static_cast<int>(m);
    return out;
  }
};

VisionEncoder::VisionEncoder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
VisionEncoder::~VisionEncoder() = default;

Result<std::unique_ptr<VisionEncoder>> VisionEncoder::load(const std::string& path, int n_threads) {
  auto f = gguf::File::open(path);
  if (!f.ok()) return f.status().with_context("vision projector " + path);
  return from_file(std::move(*f), n_threads);
}

Result<std::unique_ptr<VisionEncoder>> VisionEncoder::from_file(gguf::File file, int n_threads) {
  ARC_ASSIGN_OR_RETURN(VisionConfig cfg, vision_config_from_gguf(file));
  auto impl = std::make_unique<Impl>(std::move(file), n_threads);
  impl->cfg = std::move(cfg);
  ARC_RETURN_IF_ERROR(impl->load());
  logger("vision")->info(
      "vision encoder: {} blocks, width {}, {} heads, patch {}, output {}, {} "
      "deepstack layers",
      impl->cfg.n_layer, impl->cfg.n_embd, impl->cfg.n_head, impl->cfg.patch_size,
      impl->cfg.proj_dim, impl->cfg.n_deepstack());
  return std::unique_ptr<VisionEncoder>(new VisionEncoder(std::move(impl)));
}

const VisionConfig& VisionEncoder::config() const {
  return impl_->cfg;
}

PreprocessConfig VisionEncoder::preprocess_config() const {
  const VisionConfig& c = impl_->cfg;
  PreprocessConfig p;
  // The processor's pixel budget is for 16-pixel patches; other patch sizes keep its token budget
  // ((p / 16)^2 of the pixels). The largest image is what the encoder takes (kMaxPatches).
  const double scale = static_cast<double>(c.patch_size * c.patch_size) / 256.0;
  p.min_pixels = std::max<int64_t>(static_cast<int64_t>(static_cast<double>(p.min_pixels) * scale),
                                   c.patch_size * c.patch_size * c.merge_size * c.merge_size);
  p.max_pixels = std::min<int64_t>(static_cast<int64_t>(static_cast<double>(p.max_pixels) * scale),
                                   kMaxPatches * c.patch_size * c.patch_size);
  p.patch_size = static_cast<int>(c.patch_size);
  p.merge_size = static_cast<int>(c.merge_size);
  p.temporal_patch_size = static_cast<int>(c.temporal_patch);
  for (int i = 0; i < 3; ++i) {
    p.image_mean[i] = c.image_mean[i];
    p.image_std[i] = c.image_std[i];
  }
  return p;
}

Status VisionEncoder::check_grid(const PatchGrid& g) const {
  const VisionConfig& c = impl_->cfg;
  if (g.t < 1 || g.h < 1 || g.w < 1) return invalid_argument("image grid is empty");
  if (g.h % c.merge_size != 0 || g.w % c.merge_size != 0) {
    return invalid_argument("image grid " + std::to_string(g.h) + "x" + std::to_string(g.w) +
                            " is not a multiple of the merge size " + std::to_string(c.merge_size));
  }
  if (g.patch_dim != c.patch_dim()) {
    return invalid_argument("image patches hold " + std::to_string(g.patch_dim) +
                            " values; this projector reads " + std::to_string(c.patch_dim()) +
                            " (patch " + std::to_string(c.patch_size) + ")");
  }
  if (g.n_patches() > kMaxPatches) {
    return invalid_argument("image has " + std::to_string(g.n_patches()) +
                            " patches; the encoder takes at most " + std::to_string(kMaxPatches));
  }
  if (static_cast<int64_t>(g.pixels.size()) != g.n_patches() * g.patch_dim) {
    return invalid_argument("image patch buffer does not match its grid");
  }
  return ok_status();
}

Result<ImageEmbeddings> VisionEncoder::encode(const PatchGrid& grid) const {
  ARC_RETURN_IF_ERROR(check_grid(grid));
  return impl_->encode(grid);
}

}  // namespace arc::vision
