// Multi-axis rotary positions of a prompt with images (see arc/mrope.h).
#include "arc/mrope.h"

#include <algorithm>

namespace arc {

RopePositions mrope_positions(int64_t n, std::span<const ImageSpan> images) {
  RopePositions r;
  r.pos.resize(static_cast<size_t>(3 * n));
  int32_t* pt = r.pos.data();
  int32_t* ph = pt + n;
  int32_t* pw = ph + n;
  int64_t next = 0;  // position of the next text token
  size_t img = 0;
  for (int64_t i = 0; i < n;) {
    if (img < images.size() && images[img].begin == i) {
      const ImageSpan& s = images[img++];
      const int64_t per_frame = static_cast<int64_t>(s.grid_h) * s.grid_w;
      for (int64_t k = 0; k < s.n_tokens() && i + k < n; ++k) {
        const int64_t in = k % per_frame;
        pt[i + k] = static_cast<int32_t>(next + k / per_frame);
        ph[i + k] = static_cast<int32_t>(next + in / s.grid_w);
        pw[i + k] = static_cast<int32_t>(next + in % s.grid_w);
      }
      next += std::max<int64_t>({s.grid_t, s.grid_h, s.grid_w});
      i += s.n_tokens();
      continue;
    }
    pt[i] = ph[i] = pw[i] = static_cast<int32_t>(next++);
    ++i;
  }
  r.next = next;
  return r;
}

}  // namespace arc
