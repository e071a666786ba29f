// Loading: config, tensor validation against the family table, weights mapped in place.
#include "arc/model.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>

#include "arc/kernels/quant.h"
#include "arc/log.h"

namespace arc {
namespace {

std::string shape_str(const std::vector<int64_t>& s) {
  std::ostringstream o;
  o << "[";
  for (size_t i = 0; i < s.size(); ++i) o << (i ? ", " : "") << s[i];
  o << "]";
  return o.str();
}

Status check_tensor(const gguf::File& file, const TensorRef& ref) {
  const gguf::TensorInfo* t = file.find_tensor(ref.name);
  if (t == nullptr) {
    return not_found("tensor '" + ref.name + "' is missing (expected shape " +
                     shape_str(ref.shape) + ")");
  }
  if (t->shape != ref.shape) {
    return invalid_argument("tensor '" + ref.name + "' has shape " + shape_str(t->shape) +
                            ", expected " + shape_str(ref.shape));
  }
  const TensorRole role = ref.spec->role;
  const bool expert_bias = role == TensorRole::kFfnGateExpsBias ||
                           role == TensorRole::kFfnUpExpsBias ||
                           role == TensorRole::kFfnDownExpsBias;
  if (ref.spec->n_dims == 1 || expert_bias) {
    if (t->type != DType::F32) {
      return unimplemented("tensor '" + ref.name + "' is " + std::string(dtype_name(t->type)) +
                           "; norms and biases must be F32");
    }
  } else if (!kernels::can_dequantize(t->type)) {
    return unimplemented("tensor '" + ref.name + "' has type " + std::string(dtype_name(t->type)) +
                         ", which the kernels do not support");
  }
  if (!dtype_row_bytes(t->type, static_cast<uint64_t>(t->shape[0]))) {
    return invalid_argument("tensor '" + ref.name + "': row length " + std::to_string(t->shape[0]) +
                            " is not a multiple of the " + std::string(dtype_name(t->type)) +
                            " block size");
  }
  return ok_status();
}

}  // namespace

Status validate_tensors(const gguf::File& file, const ModelConfig& cfg) {
  Status first;
  for_each_tensor(cfg, [&](const TensorRef& ref) {
    if (!first.ok()) return;
    first = check_tensor(file, ref);
  });
  // MTP layers: checked like the others (optional tensors only when present), never loaded.
  for_each_mtp_tensor(cfg, [&](const TensorRef& ref) {
    if (!first.ok()) return;
    if (ref.spec->presence == Presence::kNextnOptional && file.find_tensor(ref.name) == nullptr) {
      return;
    }
    first = check_tensor(file, ref);
    if (!first.ok())
      first = first.with_context("multi-token-prediction layer " + std::to_string(ref.layer));
  });
  return first;
}

Result<std::unique_ptr<Model>> Model::load(const std::string& path, Backend& backend) {
  return load(path, backend, ModelLoadOptions{});
}

Result<std::unique_ptr<Model>> Model::load(const std::string& path, Backend& backend,
                                           const ModelLoadOptions& opt) {
  Result<gguf::File> file = gguf::File::open(path);
  if (!file.ok()) return file.status();
  return from_file(std::move(file).value(), backend, opt);
}

Result<std::unique_ptr<Model>> Model::from_file(gguf::File file, Backend& backend) {
  return from_file(std::move(file), backend, ModelLoadOptions{});
}

namespace {

// Streams, for each split file, the byte range holding the model's tensors into backend memory.
// Returns per split the backend address of the range's first byte and that byte's file offset.
struct StreamedSplit {
  const uint8_t* base = nullptr;
  uint64_t begin = 0;
};

Result<std::vector<StreamedSplit>> stream_weights(const gguf::File& file, const ModelConfig& cfg,
                                                  WeightStreamer& streamer,
                                                  const LoadProgressFn& progress) {
  const size_t n = file.n_files();
  std::vector<uint64_t> begin(n, UINT64_MAX), end(n, 0);
  for_each_tensor(cfg, [&](const TensorRef& ref) {
    const gguf::TensorInfo* t = file.find_tensor(ref.name);
    const uint64_t off = file.absolute_offset(*t);
    begin[t->file_index] = std::min(begin[t->file_index], off);
    end[t->file_index] = std::max(end[t->file_index], off + t->n_bytes);
  });
  uint64_t total = 0;
  for (size_t i = 0; i < n; ++i) total += end[i] > begin[i] ? end[i] - begin[i] : 0;
  std::vector<StreamedSplit> out(n);
  uint64_t before = 0;
  for (size_t i = 0; i < n; ++i) {
    if (end[i] <= begin[i]) continue;
    const MappedFile* m = file.mapping(static_cast<uint32_t>(i));
    const uint64_t size = end[i] - begin[i];
    LoadProgressFn each;
    if (progress) {
      each = [&](uint64_t done, uint64_t) { return progress(before + done, total); };
    }
    ARC_ASSIGN_OR_RETURN(const void* base,
                         streamer.stream_file_range(m->path(), begin[i], size, each));
    out[i] = {static_cast<const uint8_t*>(base), begin[i]};
    before += size;
  }
  return out;
}

// Matrices that only the matmul and MoE kernels read: a backend may rearrange them for its
// kernels (token embeddings are looked up by row, the output head may be tied to them, and the
// router is small and F32).
bool rearrangeable(TensorRole role) {
  switch (role) {
    case TensorRole::kAttnQ:
    case TensorRole::kAttnK:
    case TensorRole::kAttnV:
    case TensorRole::kAttnOut:
    case TensorRole::kFfnGate:
    case TensorRole::kFfnUp:
    case TensorRole::kFfnDown:
    case TensorRole::kFfnGateExps:
    case TensorRole::kFfnUpExps:
    case TensorRole::kFfnDownExps:
    case TensorRole::kFfnGateShexp:
    case TensorRole::kFfnUpShexp:
    case TensorRole::kFfnDownShexp:
    case TensorRole::kSsmQkv:
    case TensorRole::kSsmGate:
    case TensorRole::kSsmBa:
    case TensorRole::kSsmOut:
      return true;
    default:
      return false;
  }
}

// Lets the streamer that placed w rearrange it (WeightStreamer::arrange_rows); w.type follows.
void arrange(WeightStreamer& streamer, const TensorRef& ref, Weight& w) {
  if (!rearrangeable(ref.spec->role) || w.shape.size() < 2 || w.shape.size() > 3) return;
  const int64_t slice_rows = w.shape[1];
  const int64_t n_slices = w.shape.size() > 2 ? w.shape[2] : 1;
  // Stacked experts must lie back to back (a shard's slices are packed; check, do not assume).
  if (w.slice_bytes != w.row_bytes * static_cast<size_t>(slice_rows)) return;
  w.type = streamer.arrange_rows(w.data, w.type, slice_rows * n_slices, slice_rows, w.shape[0]);
}

bool from_files_on_disk(const gguf::File& file) {
  for (size_t i = 0; i < file.n_files(); ++i) {
    if (file.mapping(static_cast<uint32_t>(i)) == nullptr) return false;
  }
  return true;
}

}  // namespace

Result<std::unique_ptr<Model>> Model::from_file(gguf::File file, Backend& backend,
                                                const ModelLoadOptions& opt) {
  std::unique_ptr<Model> m(new Model(std::move(file)));
  const std::string path = m->file_.path();
  Result<ModelConfig> cfg = config_from_gguf(m->file_);
  if (!cfg.ok()) return cfg.status().with_context(path);
  m->cfg_ = *cfg;
  if (Status s = validate_tensors(m->file_, m->cfg_); !s.ok()) return s.with_context(path);
  if (m->cfg_.mla() && !backend.has_mla_ops()) {
    return unimplemented("the " + std::string(backend.name()) + " backend has no multi-head " +
                         "latent attention (deepseek2) yet; run this model on the CPU backend")
        .with_context(path);
  }

  if (m->cfg_.hybrid() && !backend.has_delta_net_ops()) {
    return unimplemented("the " + std::string(backend.name()) + " backend has no Gated " +
                         "DeltaNet ops (qwen3next) yet; run this model on the CPU backend")
        .with_context(path);
  }

  m->layers_.resize(static_cast<size_t>(m->cfg_.n_layer));
  std::vector<StreamedSplit> streamed;
  auto* streamer = dynamic_cast<WeightStreamer*>(&backend);
  if (streamer != nullptr && from_files_on_disk(m->file_) && !opt.place) {
    auto s = stream_weights(m->file_, m->cfg_, *streamer, opt.progress);
    if (!s.ok()) return s.status().with_context(path);
    streamed = std::move(*s);
  }
  Status first;
  for_each_tensor(m->cfg_, [&](const TensorRef& ref) {
    if (!first.ok()) return;
    const gguf::TensorInfo* t = m->file_.find_tensor(ref.name);
    Weight w;
    w.type = t->type;
    w.shape = t->shape;
    w.row_bytes = *dtype_row_bytes(t->type, static_cast<uint64_t>(t->shape[0]));
    w.slice_bytes = w.row_bytes * static_cast<size_t>(t->shape.size() > 1 ? t->shape[1] : 1);
    w.n_bytes = t->n_bytes;
    if (opt.place) {
      if (Status s = opt.place(ref, *t, w); !s.ok()) {
        first = s.with_context("loading " + ref.name);
        return;
      }
      if (streamer != nullptr) arrange(*streamer, ref, w);
      m->weight_bytes_ += w.n_bytes;
      Weights& dst = ref.layer < 0 ? m->globals_ : m->layers_[static_cast<size_t>(ref.layer)];
      dst[static_cast<size_t>(ref.spec->role)] = std::move(w);
      return;
    }
    if (ref.spec->role == TensorRole::kSsmConv && t->type != DType::F32) {
      first = unimplemented("tensor '" + ref.name + "' is " + std::string(dtype_name(t->type)) +
                            "; the convolution weights must be F32");
      return;
    }
    if (ref.spec->role == TensorRole::kSsmA) {
      // The file holds A = -exp(A_log); the delta-rule ops take A_log.
      auto src = m->file_.tensor_data(*t);
      const int64_t n = t->shape[0];
      auto* dst = reinterpret_cast<float*>(m->keep_bytes(sizeof(float) * static_cast<size_t>(n)));
      for (int64_t i = 0; i < n; ++i) {
        float a = 0.0f;
        std::memcpy(&a, src.data() + sizeof(float) * static_cast<size_t>(i), sizeof(float));
        if (!(a < 0.0f)) {
          first = invalid_argument("tensor '" + ref.name + "' must be negative (-exp(A_log))");
          return;
        }
        dst[i] = std::log(-a);
      }
      Result<const void*> p = backend.map_weights(
          {reinterpret_cast<const uint8_t*>(dst), sizeof(float) * static_cast<size_t>(n)});
      if (!p.ok()) {
        first = p.status().with_context("mapping " + ref.name);
        return;
      }
      w.data = *p;
      m->weight_bytes_ += w.n_bytes;
      m->layers_[static_cast<size_t>(ref.layer)][static_cast<size_t>(ref.spec->role)] =
          std::move(w);
      return;
    }
    Result<const void*> p =
        streamed.empty()
            ? backend.map_weights(m->file_.tensor_data(*t))
            : Result<const void*>(streamed[t->file_index].base +
                                  (m->file_.absolute_offset(*t) - streamed[t->file_index].begin));
    if (!p.ok()) {
      first = p.status().with_context("mapping " + ref.name);
      return;
    }
    w.data = *p;
    if (!streamed.empty()) arrange(*streamer, ref, w);
    m->weight_bytes_ += w.n_bytes;
    Weights& dst = ref.layer < 0 ? m->globals_ : m->layers_[static_cast<size_t>(ref.layer)];
    dst[static_cast<size_t>(ref.spec->role)] = std::move(w);
  });
  if (!first.ok()) return first.with_context(path);
  if (m->cfg_.mla() && !opt.place) {
    if (Status s = m->derive_mla_weights(backend); !s.ok()) return s.with_context(path);
  }
  logger("model")->info("loaded {} ({}, {} layers, {:.1f} MiB of weights)", path,
                        family_name(m->cfg_.family), m->cfg_.n_layer,
                        static_cast<double>(m->weight_bytes_) / (1 << 20));
  return m;
}

const Weight& Model::output() const {
  const Weight& o = global(TensorRole::kOutput);
  return o.present() ? o : global(TensorRole::kTokEmbd);
}

uint64_t Model::active_bytes_per_token() const {
  uint64_t bytes = 0;
  for (const Weight& w : globals_) {
    if (w.present() && &w != &global(TensorRole::kTokEmbd)) bytes += w.n_bytes;
  }
  if (cfg_.tied_embeddings) bytes += global(TensorRole::kTokEmbd).n_bytes;  // the output head
  bytes += global(TensorRole::kTokEmbd).row_bytes;                          // one embedding row
  for (const Weights& layer : layers_) {
    for (size_t r = 0; r < layer.size(); ++r) {
      const Weight& w = layer[r];
      if (!w.present()) continue;
      auto role = static_cast<TensorRole>(r);
      bool expert = role == TensorRole::kFfnGateExps || role == TensorRole::kFfnUpExps ||
                    role == TensorRole::kFfnDownExps;
      bytes += expert ? w.slice_bytes * static_cast<uint64_t>(cfg_.n_expert_used) : w.n_bytes;
    }
  }
  return bytes;
}

}  // namespace arc
