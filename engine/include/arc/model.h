// A loaded model: config, and every weight as a view into backend memory (on the CPU: the mmap'd
// file itself, no copy). Each tensor keeps the type it has in the file, so mixed formats (Q4_K
// with Q6_K, F32 norms) work.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "arc/backend.h"
#include "arc/backend_caps.h"
#include "arc/gguf.h"
#include "arc/model_arch.h"
#include "arc/model_config.h"

namespace arc {

struct Weight {
  const void* data = nullptr;  // backend memory; null when the model has no such tensor
  DType type = DType::F32;
  std::vector<int64_t> shape;  // GGUF order
  size_t row_bytes = 0;        // one row of shape[0] values
  size_t slice_bytes = 0;      // one expert of a 3-D tensor (shape[0] x shape[1]); else all
  uint64_t n_bytes = 0;
  bool present() const { return data != nullptr; }
  const float* f32() const { return static_cast<const float*>(data); }
};

// Checks that `file` holds every tensor of `cfg`'s family with the expected shape and a type the
// kernels can read (norms and biases F32). Errors name the tensor and the expected shape.
Status validate_tensors(const gguf::File& file, const ModelConfig& cfg);

// Places one tensor instead of the default (the whole tensor mapped or streamed): tensor
// parallelism loads only this rank's part (arc/shard_load.h). `w` arrives filled for the whole
// tensor; the function sets w.data and may narrow w (shape, row_bytes, slice_bytes, n_bytes).
using PlaceWeightFn =
    std::function<Status(const TensorRef& ref, const gguf::TensorInfo& t, Weight& w)>;

struct ModelLoadOptions {
  // Bytes copied so far / in all, for backends that copy weights out of the file (CUDA); the CPU
  // backend reads the mapping in place and never calls it.
  LoadProgressFn progress;
  // When set, every tensor goes through it (and `progress` is not called by the loader).
  PlaceWeightFn place;
};

class Model {
 public:
  // Opens, reads the config, validates and maps every weight on `backend`.
  static Result<std::unique_ptr<Model>> load(const std::string& path, Backend& backend);
  // Same over an already open file (kept alive by the model).
  static Result<std::unique_ptr<Model>> from_file(gguf::File file, Backend& backend);
  // The same with progress. A backend that streams weights (arc/backend_caps.h WeightStreamer)
  // gets each split file's tensor bytes as one range read in chunks, so no second copy of the
  // model sits in the page cache; files parsed from memory go through map_weights() as before.
  static Result<std::unique_ptr<Model>> load(const std::string& path, Backend& backend,
                                             const ModelLoadOptions& opt);
  static Result<std::unique_ptr<Model>> from_file(gguf::File file, Backend& backend,
                                                  const ModelLoadOptions& opt);

  // The first multi-token-prediction (nextn) block of `target` as a one-layer model
  // (engine/model/model_mtp.cpp): layer 0 holds the block's attention, MoE and nextn tensors
  // (mapped from `file`, the target's file opened again); its token embedding, output norm and
  // output head are the block's own (embed_tokens, shared_head_norm, shared_head_head) where the
  // file has them, else the target's, shared, not copied. `target` must outlive it.
  static Result<std::unique_ptr<Model>> load_mtp(gguf::File file, const Model& target,
                                                 Backend& backend);

  const ModelConfig& config() const { return cfg_; }
  const gguf::File& file() const { return file_; }
  const Weight& global(TensorRole r) const { return globals_[static_cast<int>(r)]; }
  const Weight& layer(int64_t l, TensorRole r) const { return layers_[l][static_cast<int>(r)]; }
  // Multi-head latent attention's k_b transposed per head, F32 [n_head][nope rows of
  // kv_lora_rank] (mla_weights.cpp): the key up-projection of the plain (prefill) form. Derived
  // at load from attn_k_b; absent (data null) without MLA or when the loader placed the weights
  // itself (tensor parallelism), and then every step runs the absorbed form.
  const Weight& mla_k_b_t(int64_t l) const;
  // The output head: output.weight, or token_embd when tied.
  const Weight& output() const;

  uint64_t weight_bytes() const { return weight_bytes_; }

  // Tensor parallelism (arc/shard_plan.h rewrites a loaded model into one rank's shard).
  ModelConfig& mutable_config() { return cfg_; }
  Weight& mutable_weight(int64_t layer, TensorRole r) {
    return layer < 0 ? globals_[static_cast<int>(r)] : layers_[layer][static_cast<int>(r)];
  }
  // Host bytes that live as long as the model (repacked column shards).
  uint8_t* keep_bytes(size_t n) {
    kept_.emplace_back(n);
    return kept_.back().data();
  }
  void set_weight_bytes(uint64_t b) { weight_bytes_ = b; }
  // Weight bytes one decoded token reads: everything but the experts, plus n_expert_used
  // experts per layer, plus one embedding row.
  uint64_t active_bytes_per_token() const;

 private:
  explicit Model(gguf::File file) : file_(std::move(file)) {}
  Status derive_mla_weights(Backend& backend);
  using Weights = std::array<Weight, static_cast<size_t>(TensorRole::kCount)>;
  gguf::File file_;
  ModelConfig cfg_;
  Weights globals_{};
  std::vector<Weights> layers_;
  uint64_t weight_bytes_ = 0;
  std::vector<std::vector<uint8_t>> kept_;
  std::vector<Weight> k_b_t_;  // [n_layer] or empty
};

}  // namespace arc
