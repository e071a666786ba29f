// The Qwen3-VL vision encoder, read from a vision-projector GGUF ("mmproj", general.architecture
// "clip", clip.projector_type "qwen3vl_merger") as llama.cpp's converter writes it, run on a
// Backend (the CPU backend, or the CUDA backend when the language model runs there).
//
// encode() takes one image's patches (arc/vision_image.h PatchGrid) and returns, per merged 2x2
// token, the embedding that replaces an <|image_pad|> token in the language model, plus one
// "deepstack" feature per chosen encoder layer, added to the language model's hidden states after
// its first layers (engine/model/arch/qwen3vlmoe.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "arc/gguf.h"
#include "arc/status.h"
#include "arc/vision_image.h"

namespace arc {
class Backend;
}  // namespace arc

namespace arc::vision {

struct VisionConfig {
  std::string projector_type;  // clip.projector_type ("qwen3vl_merger")
  int64_t n_embd = 0;          // encoder width (clip.vision.embedding_length)
  int64_t n_ff = 0;            // encoder MLP width
  int64_t n_layer = 0;
  int64_t n_head = 0;
  int64_t head_dim = 0;  // n_embd / n_head
  int64_t patch_size = 0;
  int64_t temporal_patch = 2;  // frames per patch (the Conv3d's depth; two conv slices in GGUF)
  int64_t merge_size = 2;      // spatial merge: merge x merge patches -> one output token
  int64_t image_size = 0;      // clip.vision.image_size (informational)
  int64_t pos_side = 0;        // the learned position table is pos_side x pos_side
  int64_t proj_dim = 0;        // output width = the language model's hidden size
  float eps = 1e-6f;           // LayerNorm epsilon
  float rope_theta = 10000.0f;
  float image_mean[3] = {0.5f, 0.5f, 0.5f};
  float image_std[3] = {0.5f, 0.5f, 0.5f};
  std::vector<int64_t> deepstack_layers;  // encoder layers whose output feeds a deepstack merger

  int64_t patch_dim() const { return 3 * temporal_patch * patch_size * patch_size; }
  int64_t merged_dim() const { return n_embd * merge_size * merge_size; }
  int64_t n_deepstack() const { return static_cast<int64_t>(deepstack_layers.size()); }
};

// One image's output.
struct ImageEmbeddings {
  int64_t n_tokens = 0;  // t * grid_h * grid_w merged tokens
  int64_t n_embd = 0;    // proj_dim
  int grid_t = 0;        // the merged grid: language-model positions (t, row, col)
  int grid_h = 0;
  int grid_w = 0;
  std::vector<float> main;                    // [n_tokens, n_embd]
  std::vector<std::vector<float>> deepstack;  // [n_deepstack][n_tokens, n_embd]
};

class VisionEncoder {
 public:
  ~VisionEncoder();
  // Opens and validates an mmproj GGUF and runs it on a CPU backend of its own; n_threads <= 0:
  // all online CPUs.
  static Result<std::unique_ptr<VisionEncoder>> load(const std::string& path, int n_threads = 0);
  // Same over an open file (kept alive by the encoder).
  static Result<std::unique_ptr<VisionEncoder>> from_file(gguf::File file, int n_threads = 0);
  // The same on `backend`, owned by the encoder: its weights go to the backend's memory and
  // encode() runs there. Give it a backend of its own (make_backend() with the language model's
  // options): encode() runs on request threads while the scheduler steps the model, and a Backend
  // serves one thread at a time. Calls to encode() are serialised by the encoder.
  static Result<std::unique_ptr<VisionEncoder>> load(const std::string& path,
                                                     std::unique_ptr<Backend> backend);
  static Result<std::unique_ptr<VisionEncoder>> from_file(gguf::File file,
                                                          std::unique_ptr<Backend> backend);

  const VisionConfig& config() const;
  std::string_view backend_name() const;  // "cpu", "cuda"
  // The preprocessing this projector expects (patch, merge, temporal patch, mean, std).
  PreprocessConfig preprocess_config() const;
  // Checks that a grid fits this encoder (patch size, merge divisibility, sizes).
  Status check_grid(const PatchGrid& grid) const;
  Result<ImageEmbeddings> encode(const PatchGrid& grid) const;

  struct Impl;

 private:
  explicit VisionEncoder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Reads and validates the config of an mmproj file (keys and tensor shapes); errors name the key
// or tensor and say what was expected.
Result<VisionConfig> vision_config_from_gguf(const gguf::File& file);

}  // namespace arc::vision
