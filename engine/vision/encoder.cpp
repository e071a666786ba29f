// The Qwen3-VL vision encoder on a Backend (definitions: HF transformers' Qwen3VLVisionModel;
// tensor layout: mmproj_arch.h). Written once against arc::Backend, it runs on the CPU backend or
// on the CUDA backend, whichever the language model uses.
//
//   x = Conv3d(patches) + bias + bilinear(learned positions)         [N, E]   N patches
//   for each block:  x += attn(LN1(x)) with 2-D rotary (row | col)   full attention per frame
//                    x += down(gelu_tanh(up(LN2(x))))
//                    deepstack layer L: ds = fc2(gelu(fc1(LN_M(view(x, [N/4, 4E])))))
//   main = mm.2(gelu(mm.0(view(LN_E(x), [N/4, 4E]))))                 [N/4, D]
//
// Patches arrive in merge order (arc/vision_image.h): every run of merge^2 patches is one output
// token, so the 2x2 merge is a reinterpretation of the rows. The host prepares what depends only
// on the grid (interpolated position embeddings, the rotary cos/sin table, frame boundaries) and
// uploads it with the pixels; everything else runs as backend ops, and only the outputs come back.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>

#include "arc/backend.h"
#include "arc/backend_factory.h"
#include "arc/kernels/quant.h"
#include "arc/log.h"
#include "vision/mmproj_arch.h"

namespace arc::vision {

namespace {

// A 2-D weight in backend memory (map_weights: in place on the CPU, copied to a GPU), or
// dequantized first when the kernels cannot read its type. y[t, o] = sum_i w[o, i] x[t, i].
struct Mat {
  const void* data = nullptr;
  DType type = DType::F32;
  int64_t n_in = 0;
  int64_t n_out = 0;
  size_t row_bytes = 0;
  std::vector<float> owned;  // the dequantized rows (the CPU backend reads them in place)
};

// An F32 vector or table in backend memory.
struct Vec {
  std::unique_ptr<DeviceBuffer> buf;
  const float* p() const { return buf ? static_cast<const float*>(buf->data()) : nullptr; }
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

}  // namespace

struct VisionEncoder::Impl {
  gguf::File file;
  VisionConfig cfg;
  std::unique_ptr<Backend> backend;
  // One encode at a time: the backend and the activations below are not shared between callers.
  mutable std::mutex mu;

  Vec patch_w;             // [E, patch_dim] Conv3d kernel in the patch layout (c, t, y, x)
  Vec patch_b;             // [E]
  std::vector<float> pos;  // host [side * side, E]: interpolated per grid on the host
  Vec post_w, post_b;
  Mat mm0, mm2;
  Vec mm0_b, mm2_b;
  struct Block {
    Vec ln1_w, ln1_b, ln2_w, ln2_b, qkv_b, out_b, up_b, down_b;
    Mat qkv, out, up, down;
  };
  std::vector<Block> blocks;
  struct Merger {
    Vec norm_w, norm_b, fc1_b, fc2_b;
    Mat fc1, fc2;
  };
  std::vector<Merger> deepstack;  // one per cfg.deepstack_layers entry

  // Activations in backend memory for images of up to `cap` patches (grown on demand, kept).
  struct Acts {
    int64_t cap = 0;
    int64_t cap_frames = 0;
    std::unique_ptr<DeviceBuffer> pix;  // [N, patch_dim]
    std::unique_ptr<DeviceBuffer> x;    // [N, E] the residual stream
    std::unique_ptr<DeviceBuffer> xn;   // [N, E] normalised / branch output
    std::unique_ptr<DeviceBuffer> qkv;  // [N, 3E]
    std::unique_ptr<DeviceBuffer> att;  // [N, E] attention output (first: the positions)
    std::unique_ptr<DeviceBuffer> ff;   // [N, F]
    std::unique_ptr<DeviceBuffer> hid;  // [N / m^2, max merger width]
    std::unique_ptr<DeviceBuffer> cs;   // [N, head_dim / 2] rotary cos
    std::unique_ptr<DeviceBuffer> sn;   // [N, head_dim / 2] rotary sin
    std::unique_ptr<DeviceBuffer> seg;  // [frames + 1] int32 frame boundaries
    std::vector<std::unique_ptr<DeviceBuffer>> outs;  // main, then each deepstack: [N/m^2, D]
  };
  mutable Acts acts;

  Impl(gguf::File f, std::unique_ptr<Backend> b) : file(std::move(f)), backend(std::move(b)) {}

  Result<std::vector<float>> host_vec(const std::string& name) const {
    const gguf::TensorInfo* t = file.find_tensor(name);
    std::vector<float> out(static_cast<size_t>(t->n_elements()));
    if (!kernels::dequantize_row(t->type, file.tensor_data(*t).data(), out.data(),
                                 t->n_elements())) {
      return invalid_argument("vision projector: cannot read tensor '" + name + "' of type " +
                              std::string(dtype_name(t->type)));
    }
    return out;
  }

  // Host floats to backend memory. The upload is ordered with the ops; `staging` keeps the source
  // alive until the sync() that ends loading.
  Result<Vec> to_backend(std::vector<float> host, std::vector<std::vector<float>>& staging) const {
    Vec v;
    ARC_ASSIGN_OR_RETURN(v.buf, backend->alloc(host.size() * sizeof(float)));
    backend->upload(v.buf->data(), host.data(), host.size() * sizeof(float));
    staging.push_back(std::move(host));
    return v;
  }

  Result<Vec> vec(const std::string& name, std::vector<std::vector<float>>& staging) const {
    ARC_ASSIGN_OR_RETURN(std::vector<float> h, host_vec(name));
    return to_backend(std::move(h), staging);
  }

  Result<Mat> mat(const std::string& name) const {
    const gguf::TensorInfo* t = file.find_tensor(name);
    Mat m;
    m.n_in = t->shape[0];
    m.n_out = t->n_rows();
    m.type = t->type;
    m.row_bytes = *dtype_row_bytes(t->type, static_cast<uint64_t>(m.n_in));
    std::span<const uint8_t> bytes = file.tensor_data(*t);
    if (!kernel_type(t->type)) {  // rare formats: dequantize once
      ARC_ASSIGN_OR_RETURN(m.owned, host_vec(name));
      m.type = DType::F32;
      m.row_bytes = sizeof(float) * static_cast<size_t>(m.n_in);
      bytes = {reinterpret_cast<const uint8_t*>(m.owned.data()), m.owned.size() * sizeof(float)};
    }
    auto mapped = backend->map_weights(bytes);
    if (!mapped.ok()) return mapped.status().with_context("vision projector tensor '" + name + "'");
    m.data = *mapped;
    return m;
  }

  Status load() {
    const VisionConfig& c = cfg;
    const int64_t e = c.n_embd, p2 = c.patch_size * c.patch_size;
    std::vector<std::vector<float>> staging;
    ARC_ASSIGN_OR_RETURN(std::vector<float> k0, host_vec("v.patch_embd.weight"));
    ARC_ASSIGN_OR_RETURN(std::vector<float> k1, host_vec("v.patch_embd.weight.1"));
    // GGUF [P, P, 3, E] is row-major [E][3][P][P]; the patch holds (c, t, y, x).
    std::vector<float> pw(static_cast<size_t>(e * c.patch_dim()));
    for (int64_t o = 0; o < e; ++o) {
      for (int64_t ch = 0; ch < 3; ++ch) {
        const float* s0 = k0.data() + (o * 3 + ch) * p2;
        const float* s1 = k1.data() + (o * 3 + ch) * p2;
        float* d = pw.data() + o * c.patch_dim() + ch * c.temporal_patch * p2;
        std::copy(s0, s0 + p2, d);
        std::copy(s1, s1 + p2, d + p2);
      }
    }
    ARC_ASSIGN_OR_RETURN(patch_w, to_backend(std::move(pw), staging));
    ARC_ASSIGN_OR_RETURN(patch_b, vec("v.patch_embd.bias", staging));
    ARC_ASSIGN_OR_RETURN(pos, host_vec("v.position_embd.weight"));
    ARC_ASSIGN_OR_RETURN(post_w, vec("v.post_ln.weight", staging));
    ARC_ASSIGN_OR_RETURN(post_b, vec("v.post_ln.bias", staging));
    ARC_ASSIGN_OR_RETURN(mm0, mat("mm.0.weight"));
    ARC_ASSIGN_OR_RETURN(mm0_b, vec("mm.0.bias", staging));
    ARC_ASSIGN_OR_RETURN(mm2, mat("mm.2.weight"));
    ARC_ASSIGN_OR_RETURN(mm2_b, vec("mm.2.bias", staging));
    blocks.resize(static_cast<size_t>(c.n_layer));
    for (int64_t l = 0; l < c.n_layer; ++l) {
      const std::string p = "v.blk." + std::to_string(l) + ".";
      Block& b = blocks[l];
      ARC_ASSIGN_OR_RETURN(b.ln1_w, vec(p + "ln1.weight", staging));
      ARC_ASSIGN_OR_RETURN(b.ln1_b, vec(p + "ln1.bias", staging));
      ARC_ASSIGN_OR_RETURN(b.ln2_w, vec(p + "ln2.weight", staging));
      ARC_ASSIGN_OR_RETURN(b.ln2_b, vec(p + "ln2.bias", staging));
      ARC_ASSIGN_OR_RETURN(b.qkv, mat(p + "attn_qkv.weight"));
      ARC_ASSIGN_OR_RETURN(b.qkv_b, vec(p + "attn_qkv.bias", staging));
      ARC_ASSIGN_OR_RETURN(b.out, mat(p + "attn_out.weight"));
      ARC_ASSIGN_OR_RETURN(b.out_b, vec(p + "attn_out.bias", staging));
      ARC_ASSIGN_OR_RETURN(b.up, mat(p + "ffn_up.weight"));
      ARC_ASSIGN_OR_RETURN(b.up_b, vec(p + "ffn_up.bias", staging));
      ARC_ASSIGN_OR_RETURN(b.down, mat(p + "ffn_down.weight"));
      ARC_ASSIGN_OR_RETURN(b.down_b, vec(p + "ffn_down.bias", staging));
    }
    for (int64_t layer : c.deepstack_layers) {
      const std::string p = "v.deepstack." + std::to_string(layer) + ".";
      Merger m;
      ARC_ASSIGN_OR_RETURN(m.norm_w, vec(p + "norm.weight", staging));
      ARC_ASSIGN_OR_RETURN(m.norm_b, vec(p + "norm.bias", staging));
      ARC_ASSIGN_OR_RETURN(m.fc1, mat(p + "fc1.weight"));
      ARC_ASSIGN_OR_RETURN(m.fc1_b, vec(p + "fc1.bias", staging));
      ARC_ASSIGN_OR_RETURN(m.fc2, mat(p + "fc2.weight"));
      ARC_ASSIGN_OR_RETURN(m.fc2_b, vec(p + "fc2.bias", staging));
      deepstack.push_back(std::move(m));
    }
    return backend->sync().with_context("vision projector weights on the " +
                                        std::string(backend->name()) + " backend");
  }

  // y = x w^T (+ bias), x: [n, w.n_in] with row stride x_stride (0: n_in); y: [n, w.n_out].
  void linear(const Mat& w, const float* x, int64_t n, float* y, const Vec* bias,
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
    backend->matmul(a);
    if (bias != nullptr) backend->add_bias(y, bias->p(), n, w.n_out);
  }

  // A merger: x [n_tok, M] (already normalised) -> out [n_tok, D]; hid: [n_tok, fc1.n_out].
  void merger_mlp(const Mat& fc1, const Vec& b1, const Mat& fc2, const Vec& b2, const float* x,
                  int64_t n_tok, float* hid, float* out) const {
    linear(fc1, x, n_tok, hid, &b1);
    backend->gelu_erf(hid, hid, n_tok * fc1.n_out);  // nn.GELU() of the mergers
    linear(fc2, hid, n_tok, out, &b2);
  }

  // Grows the activations to n patches in `frames` frames.
  Status reserve(int64_t n, int64_t frames) const {
    if (n <= acts.cap && frames <= acts.cap_frames) return ok_status();
    const VisionConfig& c = cfg;
    const int64_t e = c.n_embd, n_tok = n / (c.merge_size * c.merge_size);
    int64_t merger_width = mm0.n_out;
    for (const Merger& m : deepstack) merger_width = std::max(merger_width, m.fc1.n_out);
    auto floats = [&](int64_t count) { return backend->alloc(sizeof(float) * count); };
    Acts a;
    a.cap = n;
    a.cap_frames = frames;
    ARC_ASSIGN_OR_RETURN(a.pix, floats(n * c.patch_dim()));
    ARC_ASSIGN_OR_RETURN(a.x, floats(n * e));
    ARC_ASSIGN_OR_RETURN(a.xn, floats(n * e));
    ARC_ASSIGN_OR_RETURN(a.qkv, floats(n * 3 * e));
    ARC_ASSIGN_OR_RETURN(a.att, floats(n * e));
    ARC_ASSIGN_OR_RETURN(a.ff, floats(n * c.n_ff));
    ARC_ASSIGN_OR_RETURN(a.hid, floats(n_tok * merger_width));
    ARC_ASSIGN_OR_RETURN(a.cs, floats(n * c.head_dim / 2));
    ARC_ASSIGN_OR_RETURN(a.sn, floats(n * c.head_dim / 2));
    ARC_ASSIGN_OR_RETURN(a.seg, backend->alloc(sizeof(int32_t) * (frames + 1)));
    for (int64_t k = 0; k <= c.n_deepstack(); ++k) {
      ARC_ASSIGN_OR_RETURN(auto o, floats(n_tok * c.proj_dim));
      a.outs.push_back(std::move(o));
    }
    acts = std::move(a);
    return ok_status();
  }

  // What depends only on the grid, on the host: each patch's row and column in its frame (merge
  // order), the learned positions resized to the grid, the rotary table, the frame boundaries.
  struct GridInputs {
    std::vector<float> pos;     // [N, E]
    std::vector<float> cs, sn;  // [N, head_dim / 2]
    std::vector<int32_t> seg;   // [t + 1]
  };
  GridInputs grid_inputs(const PatchGrid& g) const {
    const VisionConfig& c = cfg;
    const int64_t e = c.n_embd, m = c.merge_size, m2 = m * m;
    const int64_t n = g.n_patches(), frame = static_cast<int64_t>(g.h) * g.w;
    std::vector<int32_t> rows(static_cast<size_t>(n)), cols(static_cast<size_t>(n));
    const int64_t bw = g.w / m;
    for (int64_t p = 0; p < n; ++p) {
      const int64_t q = p % frame, blk = q / m2, in = q % m2;
      rows[p] = static_cast<int32_t>((blk / bw) * m + in / m);
      cols[p] = static_cast<int32_t>((blk % bw) * m + in % m);
    }
    GridInputs in;
    // Bilinear resize of the learned table to the grid (corners aligned: linspace(0, side-1, h)).
    const int64_t side = c.pos_side;
    auto coord = [&](int64_t i, int64_t len) {
      return len <= 1 ? 0.0
                      : static_cast<double>(i) * static_cast<double>(side - 1) /
                            static_cast<double>(len - 1);
    };
    in.pos.resize(static_cast<size_t>(n * e));
    for (int64_t p = 0; p < n; ++p) {
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
      float* r = in.pos.data() + p * e;
      for (int64_t i = 0; i < e; ++i) {
        r[i] = w00 * p00[i] + w01 * p01[i] + w10 * p10[i] + w11 * p11[i];
      }
    }
    // Rotary: pair i < hd/4 rotates by row * theta^(-4i/hd), pair i >= hd/4 by
    // col * theta^(-4(i - hd/4)/hd); pairs are (i, i + hd/2).
    const int64_t half = c.head_dim / 2, quarter = c.head_dim / 4;
    std::vector<double> freq(static_cast<size_t>(half));
    for (int64_t i = 0; i < half; ++i) {
      const int64_t j = i < quarter ? i : i - quarter;
      freq[i] = std::pow(static_cast<double>(c.rope_theta),
                         -4.0 * static_cast<double>(j) / static_cast<double>(c.head_dim));
    }
    in.cs.resize(static_cast<size_t>(n * half));
    in.sn.resize(in.cs.size());
    for (int64_t p = 0; p < n; ++p) {
      for (int64_t i = 0; i < half; ++i) {
        const double ang = (i < quarter ? rows[p] : cols[p]) * freq[i];
        in.cs[p * half + i] = static_cast<float>(std::cos(ang));
        in.sn[p * half + i] = static_cast<float>(std::sin(ang));
      }
    }
    // Full attention inside each frame.
    for (int64_t f = 0; f <= g.t; ++f) in.seg.push_back(static_cast<int32_t>(f * frame));
    return in;
  }

  Result<ImageEmbeddings> encode(const PatchGrid& g) const {
    std::lock_guard<std::mutex> lock(mu);
    const VisionConfig& c = cfg;
    const int64_t e = c.n_embd, m2 = c.merge_size * c.merge_size;
    const int64_t n = g.n_patches(), n_tok = n / m2;
    Backend& be = *backend;
    ARC_RETURN_IF_ERROR(reserve(n, g.t));
    const GridInputs in = grid_inputs(g);
    float* x = acts.x->as<float>();
    float* xn = acts.xn->as<float>();
    float* qkv = acts.qkv->as<float>();
    float* att = acts.att->as<float>();
    float* ff = acts.ff->as<float>();
    float* hid = acts.hid->as<float>();
    be.upload(acts.pix->data(), g.pixels.data(), sizeof(float) * g.pixels.size());
    be.upload(att, in.pos.data(), sizeof(float) * in.pos.size());
    be.upload(acts.cs->data(), in.cs.data(), sizeof(float) * in.cs.size());
    be.upload(acts.sn->data(), in.sn.data(), sizeof(float) * in.sn.size());
    be.upload(acts.seg->data(), in.seg.data(), sizeof(int32_t) * in.seg.size());

    Mat pw;  // the patch embedding: a Conv3d whose stride is its kernel is a matmul per patch
    pw.data = patch_w.p();
    pw.n_in = c.patch_dim();
    pw.n_out = e;
    pw.row_bytes = sizeof(float) * static_cast<size_t>(pw.n_in);
    linear(pw, acts.pix->as<float>(), n, x, &patch_b);
    be.add(x, att, x, n * e);  // + positions

    kernels::RopeTableArgs rope;  // q and k of a token are adjacent: 2 * n_head heads
    rope.x = qkv;
    rope.x_stride = 3 * e;
    rope.n_tokens = n;
    rope.n_heads = 2 * c.n_head;
    rope.head_dim = c.head_dim;
    rope.cos = acts.cs->as<float>();
    rope.sin = acts.sn->as<float>();
    kernels::DenseAttentionArgs attn;
    attn.q = qkv;
    attn.k = qkv + e;
    attn.v = qkv + 2 * e;
    attn.out = att;
    attn.n_tokens = n;
    attn.n_head = c.n_head;
    attn.head_dim = c.head_dim;
    attn.q_stride = 3 * e;
    attn.kv_stride = 3 * e;
    attn.seg_offsets = acts.seg->as<int32_t>();
    attn.n_segments = g.t;

    ImageEmbeddings out;
    out.deepstack.resize(static_cast<size_t>(c.n_deepstack()));
    for (int64_t l = 0; l < c.n_layer; ++l) {
      const Block& b = blocks[l];
      be.layer_norm(x, b.ln1_w.p(), b.ln1_b.p(), xn, n, e, c.eps);
      linear(b.qkv, xn, n, qkv, &b.qkv_b);
      be.rope_table(rope);
      be.dense_attention(attn);
      linear(b.out, att, n, xn, &b.out_b);
      be.add(x, xn, x, n * e);
      be.layer_norm(x, b.ln2_w.p(), b.ln2_b.p(), xn, n, e, c.eps);
      linear(b.up, xn, n, ff, &b.up_b);
      be.gelu(ff, ff, n * c.n_ff);
      linear(b.down, ff, n, xn, &b.down_b);
      be.add(x, xn, x, n * e);

      auto ds = std::find(c.deepstack_layers.begin(), c.deepstack_layers.end(), l);
      if (ds != c.deepstack_layers.end()) {
        const size_t k = static_cast<size_t>(ds - c.deepstack_layers.begin());
        const Merger& mg = deepstack[k];
        // Norm after the merge: rows of M = 4E.
        be.layer_norm(x, mg.norm_w.p(), mg.norm_b.p(), xn, n_tok, c.merged_dim(), c.eps);
        float* dst = acts.outs[k + 1]->as<float>();
        merger_mlp(mg.fc1, mg.fc1_b, mg.fc2, mg.fc2_b, xn, n_tok, hid, dst);
        out.deepstack[k].resize(static_cast<size_t>(n_tok * c.proj_dim));
        be.download(out.deepstack[k].data(), dst, sizeof(float) * out.deepstack[k].size());
      }
    }
    be.layer_norm(x, post_w.p(), post_b.p(), xn, n, e, c.eps);
    float* main_out = acts.outs[0]->as<float>();
    merger_mlp(mm0, mm0_b, mm2, mm2_b, xn, n_tok, hid, main_out);
    out.main.resize(static_cast<size_t>(n_tok * c.proj_dim));
    be.download(out.main.data(), main_out, sizeof(float) * out.main.size());
    ARC_RETURN_IF_ERROR(be.sync().with_context("vision encoder"));
    out.n_tokens = n_tok;
    out.n_embd = c.proj_dim;
    out.grid_t = g.t;
    out.grid_h = g.h / static_cast<int>(c.merge_size);
    out.grid_w = g.w / static_cast<int>(c.merge_size);
    return out;
  }
};

VisionEncoder::VisionEncoder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
VisionEncoder::~VisionEncoder() = default;

Result<std::unique_ptr<VisionEncoder>> VisionEncoder::load(const std::string& path, int n_threads) {
  return load(path, make_cpu_backend(n_threads));
}

Result<std::unique_ptr<VisionEncoder>> VisionEncoder::load(const std::string& path,
                                                           std::unique_ptr<Backend> backend) {
  auto f = gguf::File::open(path);
  if (!f.ok()) return f.status().with_context("vision projector " + path);
  return from_file(std::move(*f), std::move(backend));
}

Result<std::unique_ptr<VisionEncoder>> VisionEncoder::from_file(gguf::File file, int n_threads) {
  return from_file(std::move(file), make_cpu_backend(n_threads));
}

Result<std::unique_ptr<VisionEncoder>> VisionEncoder::from_file(gguf::File file,
                                                                std::unique_ptr<Backend> backend) {
  if (backend == nullptr) return invalid_argument("the vision encoder needs a backend");
  if (!backend->has_vision_ops()) {
    return unimplemented("the " + std::string(backend->name()) +
                         " backend has no vision encoder ops; use --backend cpu or cuda");
  }
  ARC_ASSIGN_OR_RETURN(VisionConfig cfg, vision_config_from_gguf(file));
  auto impl = std::make_unique<Impl>(std::move(file), std::move(backend));
  impl->cfg = std::move(cfg);
  ARC_RETURN_IF_ERROR(impl->load());
  logger("vision")->info(
      "vision encoder on the {} backend: {} blocks, width {}, {} heads, patch {}, output {}, {} "
      "deepstack layers",
      impl->backend->name(), impl->cfg.n_layer, impl->cfg.n_embd, impl->cfg.n_head,
      impl->cfg.patch_size, impl->cfg.proj_dim, impl->cfg.n_deepstack());
  return std::unique_ptr<VisionEncoder>(new VisionEncoder(std::move(impl)));
}

const VisionConfig& VisionEncoder::config() const {
  return impl_->cfg;
}

std::string_view VisionEncoder::backend_name() const {
  return impl_->backend->name();
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
