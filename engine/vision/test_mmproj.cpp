// Test vision projector generator (see test_mmproj.h).
#include "vision/test_mmproj.h"

#include <cmath>
#include <cstring>

#include "arc/gguf.h"
#include "arc/kernels/quant.h"
#include "vision/mmproj_arch.h"

namespace arc::vision {
namespace {

uint64_t mix(uint64_t seed, const std::string& name) {
  uint64_t h = 1469598103934665603ull ^ (seed * 0x9E3779B97F4A7C15ull);
  for (unsigned char ch : name) h = (h ^ ch) * 1099511628211ull;
  return h;
}

// splitmix64, uniform values of standard deviation 1.
struct Rng {
  uint64_t s;
  float unit() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    const double u = static_cast<double>(z >> 11) * (1.0 / 9007199254740992.0);
    return static_cast<float>((u * 2.0 - 1.0) * 1.7320508075688772);
  }
};

bool is_norm_weight(VRole r) {
  return r == VRole::kLn1W || r == VRole::kLn2W || r == VRole::kPostLnW || r == VRole::kDsNormW;
}

Result<gguf::Writer> make(const TestMmprojOptions& o) {
  VisionConfig c;
  c.projector_type = std::string(kQwen3vlProjector);
  c.n_embd = o.n_embd;
  c.n_ff = o.n_ff;
  c.n_layer = o.n_layer;
  c.n_head = o.n_head;
  c.head_dim = o.n_head > 0 ? o.n_embd / o.n_head : 0;
  c.patch_size = o.patch_size;
  c.merge_size = o.merge_size;
  c.pos_side = o.pos_side;
  c.proj_dim = o.proj_dim;
  c.deepstack_layers = o.deepstack_layers;
  if (c.n_head <= 0 || c.n_embd % c.n_head != 0 || c.head_dim % 4 != 0) {
    return invalid_argument("test mmproj: head dim must divide n_embd and be a multiple of 4");
  }
  for (int64_t l : c.deepstack_layers) {
    if (l < 0 || l >= c.n_layer)
      return invalid_argument("test mmproj: deepstack layer out of range");
  }
  auto want = dtype_from_name(o.type);
  if (!want) return invalid_argument("test mmproj: unknown type " + o.type);

  gguf::Writer w;
  auto u32 = [](int64_t x) { return gguf::Value::u32(static_cast<uint32_t>(x)); };
  w.set("general.architecture", gguf::Value::str(std::string(kClipArch)));
  w.set("general.name", gguf::Value::str("arclight test qwen3vl mmproj"));
  w.set(std::string(key::kHasVision), gguf::Value::boolean(true));
  w.set(std::string(key::kProjectorType), gguf::Value::str(std::string(kQwen3vlProjector)));
  w.set(std::string(key::kUseGelu), gguf::Value::boolean(true));
  w.set(std::string(key::kImageSize), u32(c.pos_side * c.patch_size));
  w.set(std::string(key::kPatchSize), u32(c.patch_size));
  w.set(std::string(key::kEmbd), u32(c.n_embd));
  w.set(std::string(key::kFf), u32(c.n_ff));
  w.set(std::string(key::kBlocks), u32(c.n_layer));
  w.set(std::string(key::kHeads), u32(c.n_head));
  w.set(std::string(key::kEps), gguf::Value::f32(1e-6f));
  w.set(std::string(key::kProjDim), u32(c.proj_dim));
  w.set(std::string(key::kMergeSize), u32(c.merge_size));
  gguf::Array mean, sd, ds;
  mean.elem_type = sd.elem_type = gguf::ValueType::kFloat32;
  for (int i = 0; i < 3; ++i) {
    mean.items.push_back(gguf::Value::f32(0.5f));
    sd.items.push_back(gguf::Value::f32(0.5f));
  }
  ds.elem_type = gguf::ValueType::kBool;
  for (int64_t l = 0; l < c.n_layer; ++l) {
    bool on = false;
    for (int64_t d : c.deepstack_layers) on = on || d == l;
    ds.items.push_back(gguf::Value::boolean(on));
  }
  w.set(std::string(key::kImageMean), gguf::Value::array(std::move(mean)));
  w.set(std::string(key::kImageStd), gguf::Value::array(std::move(sd)));
  w.set(std::string(key::kDeepstack), gguf::Value::array(std::move(ds)));

  Status first;
  for_each_vision_tensor(c, [&](const VisionTensorRef& r) {
    if (!first.ok()) return;
    Rng rng{mix(o.seed, r.name)};
    const int64_t row = r.shape[0];
    int64_t n_rows = 1;
    for (size_t i = 1; i < r.shape.size(); ++i) n_rows *= r.shape[i];
    const VRole role = r.spec->role;
    // Conv kernels are stored F16 by the converter; other matrices in the requested type.
    DType type = DType::F32;
    if (r.spec->n_dims == 4) {
      type = DType::F16;
    } else if (r.spec->n_dims == 2 && role != VRole::kPosEmbd) {
      type = *want;
      if (!kernels::can_quantize(type) || !dtype_row_bytes(type, static_cast<uint64_t>(row))) {
        type = DType::F32;
      }
    }
    float scale = 1.0f / std::sqrt(static_cast<float>(row));
    if (r.spec->n_dims == 4) scale = 1.0f / std::sqrt(static_cast<float>(3 * 2 * row * row));
    if (role == VRole::kPosEmbd) scale = 0.5f;
    if (r.spec->n_dims == 1) scale = 0.1f;
    const size_t rb = *dtype_row_bytes(type, static_cast<uint64_t>(row));
    std::vector<uint8_t> data(rb * static_cast<size_t>(n_rows));
    std::vector<float> vals(static_cast<size_t>(row));
    for (int64_t i = 0; i < n_rows && first.ok(); ++i) {
      for (float& v : vals)
        v = is_norm_weight(role) ? 1.0f + 0.1f * rng.unit() : scale * rng.unit();
      uint8_t* dst = data.data() + static_cast<size_t>(i) * rb;
      if (type == DType::F32) {
        std::memcpy(dst, vals.data(), rb);
      } else if (!kernels::quantize_row(type, vals.data(), dst, row)) {
        first = unimplemented("test mmproj: cannot write " + std::string(dtype_name(type)));
      }
    }
    if (first.ok()) first = w.add_tensor(r.name, type, r.shape, data);
  });
  if (!first.ok()) return first;
  return w;
}

}  // namespace

Status write_test_mmproj(const TestMmprojOptions& opt, const std::string& path) {
  ARC_ASSIGN_OR_RETURN(gguf::Writer w, make(opt));
  return w.write(path);
}

Result<std::vector<uint8_t>> build_test_mmproj(const TestMmprojOptions& opt) {
  ARC_ASSIGN_OR_RETURN(gguf::Writer w, make(opt));
  return w.to_bytes();
}

}  // namespace arc::vision
