// The mmproj table walk and the config read from metadata (see mmproj_arch.h).
#include <cmath>
#include <string>

#include "vision/mmproj_arch.h"

namespace arc::vision {

int64_t resolve_vision_dim(const VisionConfig& c, VDim d) {
  switch (d) {
    case VDim::kEmbd:
      return c.n_embd;
    case VDim::kFf:
      return c.n_ff;
    case VDim::kQkv:
      return 3 * c.n_embd;
    case VDim::kMerged:
      return c.merged_dim();
    case VDim::kProj:
      return c.proj_dim;
    case VDim::kPatch:
      return c.patch_size;
    case VDim::kChannels:
      return 3;
    case VDim::kPositions:
      return c.pos_side * c.pos_side;
  }
  return 0;
}

void for_each_vision_tensor(const VisionConfig& c,
                            const std::function<void(const VisionTensorRef&)>& fn) {
  auto make = [&](const VisionTensorSpec& s, int64_t index, int64_t layer, std::string name) {
    VisionTensorRef r;
    r.spec = &s;
    r.index = index;
    r.layer = layer;
    r.name = std::move(name);
    for (int i = 0; i < s.n_dims; ++i) r.shape.push_back(resolve_vision_dim(c, s.dims[i]));
    fn(r);
  };
  for (const VisionTensorSpec& s : kVisionTensors) {
    if (s.scope == VScope::kGlobal) make(s, -1, -1, std::string(s.name));
  }
  for (int64_t b = 0; b < c.n_layer; ++b) {
    for (const VisionTensorSpec& s : kVisionTensors) {
      if (s.scope == VScope::kBlock) {
        make(s, b, b, "v.blk." + std::to_string(b) + "." + std::string(s.name));
      }
    }
  }
  for (int64_t k = 0; k < c.n_deepstack(); ++k) {
    const int64_t layer = c.deepstack_layers[k];
    for (const VisionTensorSpec& s : kVisionTensors) {
      if (s.scope == VScope::kDeepstack) {
        make(s, k, layer, "v.deepstack." + std::to_string(layer) + "." + std::string(s.name));
      }
    }
  }
}

namespace {

Status bad(const std::string& what) {
  return invalid_argument("vision projector: " + what);
}

Status read_u(const gguf::File& f, std::string_view k, bool required, int64_t lo, int64_t hi,
              int64_t& out) {
  const gguf::Value* v = f.find(k);
  if (v == nullptr) {
    return required ? bad("missing metadata key '" + std::string(k) + "'") : ok_status();
  }
  auto i = v->as_int();
  if (!i || *i < lo || *i > hi) {
    return bad("metadata key '" + std::string(k) + "' must be an integer in [" +
               std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  out = *i;
  return ok_status();
}

Status read_triple(const gguf::File& f, std::string_view k, float (&out)[3], bool positive) {
  if (f.find(k) == nullptr) return ok_status();  // the family's default (0.5)
  auto v = f.get_float_array(k);
  if (!v || v->size() != 3) return bad("'" + std::string(k) + "' must be an array of 3 numbers");
  for (int i = 0; i < 3; ++i) {
    const double x = (*v)[i];
    if (!std::isfinite(x) || (positive && !(x > 0.0))) {
      return bad("'" + std::string(k) + "' holds an invalid value");
    }
    out[i] = static_cast<float>(x);
  }
  return ok_status();
}

}  // namespace

Result<VisionConfig> vision_config_from_gguf(const gguf::File& f) {
  VisionConfig c;
  const std::string arch = f.architecture();
  if (arch != kClipArch) {
    return bad("general.architecture is '" + arch +
               "', not 'clip': this is not a vision projector (mmproj) file");
  }
  if (auto hv = f.get_bool(key::kHasVision); hv && !*hv) {
    return bad("the file has no vision encoder (clip.has_vision_encoder is false)");
  }
  auto pt = f.get_string(key::kVisionProjectorType);
  if (!pt) pt = f.get_string(key::kProjectorType);
  if (!pt) return bad("missing metadata key 'clip.projector_type'");
  if (*pt != kQwen3vlProjector) {
    return unimplemented("vision projector type '" + *pt + "' is not supported (supported: " +
                         std::string(kQwen3vlProjector) + ", the Qwen3-VL family)");
  }
  c.projector_type = *pt;
  if (auto g = f.get_bool(key::kUseGelu); g && !*g) {
    return bad("clip.use_gelu is false; the Qwen3-VL encoder uses GELU");
  }
  ARC_RETURN_IF_ERROR(read_u(f, key::kEmbd, true, 1, 1 << 16, c.n_embd));
  ARC_RETURN_IF_ERROR(read_u(f, key::kFf, true, 1, 1 << 18, c.n_ff));
  ARC_RETURN_IF_ERROR(read_u(f, key::kBlocks, true, 1, 512, c.n_layer));
  ARC_RETURN_IF_ERROR(read_u(f, key::kHeads, true, 1, 1024, c.n_head));
  ARC_RETURN_IF_ERROR(read_u(f, key::kPatchSize, true, 1, 256, c.patch_size));
  ARC_RETURN_IF_ERROR(read_u(f, key::kProjDim, true, 1, 1 << 17, c.proj_dim));
  ARC_RETURN_IF_ERROR(read_u(f, key::kMergeSize, false, 1, 8, c.merge_size));
  ARC_RETURN_IF_ERROR(read_u(f, key::kImageSize, false, 0, 1 << 16, c.image_size));
  if (c.n_embd % c.n_head != 0) {
    return bad("embedding_length " + std::to_string(c.n_embd) + " is not a multiple of " +
               "head_count " + std::to_string(c.n_head));
  }
  c.head_dim = c.n_embd / c.n_head;
  // The 2-D rotary splits each head into row and column halves of rotated pairs.
  if (c.head_dim % 4 != 0) return bad("head dimension must be a multiple of 4");
  if (const gguf::Value* e = f.find(key::kEps); e != nullptr) {
    auto x = e->as_float();
    if (!x || !(*x > 0.0) || !(*x < 1.0)) return bad("layer_norm_epsilon must be in (0, 1)");
    c.eps = static_cast<float>(*x);
  }
  ARC_RETURN_IF_ERROR(read_triple(f, key::kImageMean, c.image_mean, false));
  ARC_RETURN_IF_ERROR(read_triple(f, key::kImageStd, c.image_std, true));
  if (const gguf::Value* d = f.find(key::kDeepstack); d != nullptr) {
    const gguf::Array* a = d->as_array();
    if (a == nullptr || static_cast<int64_t>(a->items.size()) != c.n_layer) {
      return bad("'" + std::string(key::kDeepstack) + "' must be an array of block_count (" +
                 std::to_string(c.n_layer) + ") booleans");
    }
    for (size_t i = 0; i < a->items.size(); ++i) {
      auto b = a->items[i].as_bool();
      if (!b) return bad("'" + std::string(key::kDeepstack) + "' must hold booleans");
      if (*b) c.deepstack_layers.push_back(static_cast<int64_t>(i));
    }
  }
  // The learned position table fixes the grid side.
  const gguf::TensorInfo* pos = f.find_tensor("v.position_embd.weight");
  if (pos == nullptr || pos->shape.size() != 2) {
    return bad("missing 2-D tensor 'v.position_embd.weight'");
  }
  const int64_t n_pos = pos->shape[1];
  c.pos_side = static_cast<int64_t>(std::llround(std::sqrt(static_cast<double>(n_pos))));
  if (c.pos_side <= 0 || c.pos_side * c.pos_side != n_pos) {
    return bad("v.position_embd.weight has " + std::to_string(n_pos) +
               " positions, not a square grid");
  }
  const gguf::TensorInfo* p1 = f.find_tensor("v.patch_embd.weight.1");
  if (p1 == nullptr) {
    return unimplemented(
        "vision projector has no 'v.patch_embd.weight.1' (the second temporal slice of the "
        "Qwen3-VL Conv3d patch embedding); re-convert it with a current convert_hf_to_gguf.py");
  }
  // Every tensor: present, right shape, a type the kernels read.
  Status first;
  for_each_vision_tensor(c, [&](const VisionTensorRef& r) {
    if (!first.ok()) return;
    const gguf::TensorInfo* t = f.find_tensor(r.name);
    auto shape_str = [](const std::vector<int64_t>& s) {
      std::string o = "[";
      for (size_t i = 0; i < s.size(); ++i) o += (i ? ", " : "") + std::to_string(s[i]);
      return o + "]";
    };
    if (t == nullptr) {
      first = bad("missing tensor '" + r.name + "' (expected shape " + shape_str(r.shape) + ")");
      return;
    }
    if (t->shape != r.shape) {
      first = bad("tensor '" + r.name + "' has shape " + shape_str(t->shape) + ", expected " +
                  shape_str(r.shape));
      return;
    }
    if (!dtype_row_bytes(t->type, static_cast<uint64_t>(t->shape[0]))) {
      first = bad("tensor '" + r.name + "' has type " + std::string(dtype_name(t->type)) +
                  " which cannot hold rows of " + std::to_string(t->shape[0]));
    }
  });
  if (!first.ok()) return first.with_context(f.path());
  return c;
}

}  // namespace arc::vision
