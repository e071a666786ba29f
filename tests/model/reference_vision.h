// A plain reference of the Qwen3-VL vision encoder for the tests: scalar, double precision,
// written from HF transformers' Qwen3VLVisionModel (patch Conv3d, fast_pos_embed_interpolate,
// rot_pos_emb, blocks, Qwen3VLVisionPatchMerger with and without the post-shuffle norm). It
// reads the mmproj tensors itself; from kernels/ only the reference dequantizer.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "arc/gguf.h"

namespace arc::testing {

struct ReferenceImageOutput {
  std::vector<std::vector<double>> main;                    // [n_tokens][proj_dim]
  std::vector<std::vector<std::vector<double>>> deepstack;  // [n_deepstack][n_tokens][proj_dim]
};

class ReferenceVision {
 public:
  explicit ReferenceVision(const gguf::File& f);
  // pixels: [t * h * w][3 * 2 * P * P] in the processor's order (merge blocks, then C, T, P, P).
  ReferenceImageOutput encode(const std::vector<float>& pixels, int t, int h, int w) const;

 private:
  using Vec = std::vector<double>;
  struct Mat {
    int64_t rows = 0, cols = 0;
    std::vector<double> v;
  };
  const Mat& t(const std::string& name) const;
  Vec affine(const std::string& w, const std::string& b, const Vec& x) const;
  Vec layer_norm(const Vec& x, const std::string& prefix) const;
  Vec merger(const std::vector<Vec>& group, const std::string& norm, const std::string& fc1,
             const std::string& fc2, bool postshuffle) const;

  int64_t n_embd_ = 0, n_head_ = 0, n_layer_ = 0, patch_ = 0, merge_ = 2, side_ = 0;
  double eps_ = 1e-6;
  std::vector<int64_t> deepstack_;
  std::map<std::string, Mat> w_;
};

}  // namespace arc::testing
