// A loaded model: config, and every weight as a view into backend memory (on the CPU: the mmap'd
// file itself, no copy). Each tensor keeps the type it has in the file, so mixed formats (Q4_K
// with Q6_K, F32 norms) work.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "arc/backend.h"
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

class Model {
 public:
  // Opens, reads the config, validates and maps every weight on `backend`.
  static Result<std::unique_ptr<Model>> load(const std::string& path, Backend& backend);
  // Same over an already open file (kept alive by the model).
  static Result<std::unique_ptr<Model>> from_file(gguf::File file, Backend& backend);

  const ModelConfig& config() const { return cfg_; }
  const gguf::File& file() const { return file_; }
  const Weight& global(TensorRole r) const { return globals_[static_cast<int>(r)]; }
  const Weight& layer(int64_t l, TensorRole r) const { return layers_[l][static_cast<int>(r)]; }
  // The output head: output.weight, or token_embd when tied.
  const Weight& output() const;

  uint64_t weight_bytes() const { return weight_bytes_; }
  // Weight bytes one decoded token reads: everything but the experts, plus n_expert_used
  // experts per layer, plus one embedding row.
  uint64_t active_bytes_per_token() const;

 private:
  explicit Model(gguf::File file) : file_(std::move(file)) {}
  using Weights = std::array<Weight, static_cast<size_t>(TensorRole::kCount)>;
  gguf::File file_;
  ModelConfig cfg_;
  Weights globals_{};
  std::vector<Weights> layers_;
  uint64_t weight_bytes_ = 0;
};

}  // namespace arc
