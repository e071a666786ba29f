// Rotary positions of a prompt with images, for families with multi-axis RoPE (qwen3vlmoe), as
// transformers' Qwen3-VL get_rope_index defines them:
//  - a text token's position is the same on the t, h and w axes: one more than the largest
//    position before it (on any axis);
//  - the k-th token of an image whose merged grid is (gt, gh, gw) sits at
//    (s + frame, s + row, s + col), s = the position the image's first token would have as text;
//  - so the text after an image continues at s + max(gt, gh, gw), not s + gt * gh * gw.
// The KV cache position of every token stays its index in the sequence.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace arc {

struct ImageSpan {
  int64_t begin = 0;  // index of the image's first placeholder token in the sequence
  int grid_t = 1;     // merged grid: gt * gh * gw placeholder tokens
  int grid_h = 0;
  int grid_w = 0;
  int64_t n_tokens() const { return static_cast<int64_t>(grid_t) * grid_h * grid_w; }
};

struct RopePositions {
  std::vector<int32_t> pos;  // [3, n_tokens] axis-major: t..., h..., w...
  // Position of the token after the last one: generated tokens continue at next, next + 1, ...
  int64_t next = 0;
};

// Images must be in order, inside [0, n_tokens) and not overlapping.
RopePositions mrope_positions(int64_t n_tokens, std::span<const ImageSpan> images);

}  // namespace arc
