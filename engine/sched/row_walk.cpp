#include "sched/row_walk.h"

#include <algorithm>
#include <bit>

#include "arc/kernels/sampling.h"

namespace arc {
namespace {

static_assert(kernels::kMassEdges == 8);

// Bands of at most this many tokens are sorted; larger ones are split again.
constexpr int64_t kLeafTokens = 384;
// Splitting stops here even if a band does not shrink (values a few ulp apart).
constexpr int kMaxDepth = 12;
// Top-level band edges as tempered exponents (x - mx) / T: the first bands hold the few tokens a
// confident model puts its mass on, the later ones the long tail.
constexpr double kTopEdges[8] = {-0.5, -1.25, -2.0, -3.0, -4.5, -6.5, -10.0, -16.0};

// Larger value -> larger key; -0 and +0 equal (NaN never reaches here: collect_range drops it).
uint32_t order_key(float x) {
  uint32_t u = std::bit_cast<uint32_t>(x);
  if (u == 0x80000000u) u = 0;
  return (u & 0x80000000u) != 0 ? ~u : (u | 0x80000000u);
}

}  // namespace

RowWalk::Level& RowWalk::level(int depth) {
  if (static_cast<int>(levels_.size()) <= depth) levels_.resize(static_cast<size_t>(depth) + 1);
  return levels_[static_cast<size_t>(depth)];
}

void RowWalk::reset(std::span<const float> x, float mx, double inv_t) {
  x_ = x;
  mx_ = mx;
  levels_.reserve(kMaxDepth + 1);
  inv_t_ = inv_t;
  for (int j = 0; j < kTop; ++j) {
    edges_[j] = static_cast<float>(static_cast<double>(mx) + kTopEdges[j] / inv_t);
  }
  kernels::tempered_masses(x.data(), static_cast<int64_t>(x.size()), mx, inv_t, edges_, above_);
}

RowWalk::Stop RowWalk::walk(const Goal& g) {
  Stop s;
  if (walk_bands(x_.data(), nullptr, static_cast<int64_t>(x_.size()), edges_, above_, 0, g, s)) {
    return s;
  }
  // Past the end by rounding: the row's last token (lowest value, highest id; NaN never).
  float lo = INFINITY;
  int32_t at = 0;
  for (size_t i = 0; i < x_.size(); ++i) {
    if (x_[i] <= lo) {
      lo = x_[i];
      at = static_cast<int32_t>(i);
    }
  }
  return {at, total()};
}

bool RowWalk::walk_bands(const float* x, const int32_t* ids, int64_t n, const float* edges,
                         const double* above, int depth, const Goal& g, Stop& s) {
  const float last_x = g.last >= 0 ? x_[static_cast<size_t>(g.last)] : NAN;
  double prev_above = 0.0;
  for (int b = 0; b <= kTop; ++b) {
    // Band b: [edges[b], edges[b - 1]), the first one unbounded above, the last one below.
    const float lo = b < kTop ? edges[b] : -INFINITY;
    const float hi = b > 0 ? edges[b - 1] : INFINITY;
    const double mass = above[b] - prev_above;
    prev_above = above[b];
    if (!(lo < hi)) continue;  // edges that coincide: an empty band
    const bool holds_last = last_x >= lo && last_x < hi;
    if (s.mass + mass < g.target && !holds_last) {
      s.mass += mass;  // nothing is decided inside: step over it
      continue;
    }
    Level& lv = level(depth);
    lv.x.resize(static_cast<size_t>(n) + 16);
    lv.id.resize(static_cast<size_t>(n) + 16);
    const int64_t m = kernels::collect_range(x, ids, n, lo, hi, lv.x.data(), lv.id.data());
    if (m == 0) {
      s.mass += mass;
      continue;
    }
    // Finite range of the members (-inf members sit below every split edge).
    float top = -INFINITY, bottom = INFINITY;
    for (int64_t i = 0; i < m; ++i) {
      top = std::max(top, lv.x[static_cast<size_t>(i)]);
      if (std::isfinite(lv.x[static_cast<size_t>(i)])) {
        bottom = std::min(bottom, lv.x[static_cast<size_t>(i)]);
      }
    }
    bool stopped = false;
    if (m <= kLeafTokens || depth >= kMaxDepth || !(bottom < top)) {
      stopped = walk_leaf(lv, m, g, s);
    } else {
      // Nine sub-bands of equal width in value between the members' extremes.
      float sub[kTop];
      const double width = static_cast<double>(top) - bottom;
      for (int j = 0; j < kTop; ++j) {
        sub[j] = static_cast<float>(top - width * (j + 1) / (kTop + 1));
      }
      double sub_above[kTop + 1];
      kernels::tempered_masses(lv.x.data(), m, mx_, inv_t_, sub, sub_above);
      // The masses inside the band replace the band's own (same tokens, another sum order).
      stopped = walk_bands(lv.x.data(), lv.id.data(), m, sub, sub_above, depth + 1, g, s);
    }
    if (stopped) return true;
  }
  return false;
}

bool RowWalk::walk_leaf(Level& lv, int64_t m, const Goal& g, Stop& s) {
  lv.p.resize(static_cast<size_t>(m));
  kernels::tempered_probs(lv.x.data(), m, mx_, inv_t_, lv.p.data());
  // Members are in row order, so the member index orders ties by token id.
  lv.keys.resize(static_cast<size_t>(m));
  for (int64_t i = 0; i < m; ++i) {
    lv.keys[static_cast<size_t>(i)] = (uint64_t{order_key(lv.x[static_cast<size_t>(i)])} << 32) |
                                      (0xFFFFFFFFu - static_cast<uint32_t>(i));
  }
  std::sort(lv.keys.begin(), lv.keys.end(), [](uint64_t a, uint64_t b) { return a > b; });
  for (int64_t k = 0; k < m; ++k) {
    const size_t i = 0xFFFFFFFFu - static_cast<uint32_t>(lv.keys[static_cast<size_t>(k)]);
    s.token = lv.id[i];
    s.mass += lv.p[i];
    if (s.mass >= g.target || s.token == g.last) return true;
  }
  return false;
}

}  // namespace arc
