// Helpers of the vision encoder tests (CPU and CUDA) and the image forward tests (one rank and
// TP): tiny test projectors, random patch grids and relative errors.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "arc/gguf.h"
#include "arc/status.h"
#include "arc/vision_image.h"
#include "vision/test_mmproj.h"

namespace arc::testing {

// The projector options of a qwen3vlmoe test model of width `n_embd` with two deepstack layers:
// taps on encoder layers 0 and 2.
inline vision::TestMmprojOptions vl_projector(int64_t n_embd) {
  vision::TestMmprojOptions o;
  o.proj_dim = n_embd;
  o.deepstack_layers = {0, 2};
  return o;
}

// A test projector (mmproj GGUF) built from `opt` into *bytes and parsed. The file points into
// *bytes, which must outlive it and any encoder made from it.
inline Result<gguf::File> build_test_projector(const vision::TestMmprojOptions& opt,
                                               std::vector<uint8_t>* bytes) {
  ARC_ASSIGN_OR_RETURN(*bytes, vision::build_test_mmproj(opt));
  return gguf::File::parse(*bytes, "mmproj");
}

// Pixels uniform in [-1, 1) from a fixed seed, t x h x w patches of `patch` pixels.
inline vision::PatchGrid random_grid(int t, int h, int w, int64_t patch, uint64_t seed) {
  vision::PatchGrid g;
  g.t = t;
  g.h = h;
  g.w = w;
  g.patch_dim = static_cast<int>(3 * 2 * patch * patch);
  g.pixels.resize(static_cast<size_t>(g.n_patches() * g.patch_dim));
  uint64_t s = seed;
  for (float& v : g.pixels) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    v = static_cast<float>(static_cast<double>(s >> 11) / 9007199254740992.0 * 2.0 - 1.0);
  }
  return g;
}

// max |got - want| / max |want|.
inline double rel_err(const std::vector<float>& got, const std::vector<std::vector<double>>& want) {
  double num = 0.0, den = 0.0;
  size_t k = 0;
  for (const auto& row : want) {
    for (double v : row) {
      num = std::max(num, std::fabs(got[k++] - v));
      den = std::max(den, std::fabs(v));
    }
  }
  return num / std::max(den, 1e-12);
}

inline double rel_err(const std::vector<float>& got, const std::vector<float>& want) {
  double num = 0.0, den = 0.0;
  for (size_t i = 0; i < want.size(); ++i) {
    num = std::max(num, std::fabs(double{got[i]} - want[i]));
    den = std::max(den, std::fabs(double{want[i]}));
  }
  return num / std::max(den, 1e-12);
}

}  // namespace arc::testing
