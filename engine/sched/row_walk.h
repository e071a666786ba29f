// The tokens of one logit row in the sampler's order (higher value first, lower id on ties),
// walked with their running tempered mass, without sorting the row: the row is cut into bands of
// values whose masses one vectorised pass gives (arc/kernels/sampling.h); a band where nothing is
// decided is stepped over by its mass, and only the band where the running mass reaches the goal
// is split again, down to a few hundred tokens that are sorted. The sampler's top-p nucleus and
// its draw are such walks (engine/sched/sampler.cpp).
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

namespace arc {

class RowWalk {
 public:
  // x: [n] (penalised) logits whose maximum mx is finite; p = exp((x - mx) * inv_t).
  // The first pass over the row: the masses of its top-level bands.
  void reset(std::span<const float> x, float mx, double inv_t);
  double total() const { return above_[kTop]; }  // mass of the whole row

  struct Goal {
    double target = INFINITY;  // stop at the first token where the running mass reaches it
    int32_t last = -1;         // stop at this token at the latest (>= 0)
  };
  struct Stop {
    int32_t token = -1;  // where the walk stopped
    double mass = 0.0;   // running mass through `token`
  };
  // Walks from the top; when the goal is never met (the target lies past the row's mass by
  // rounding, and no `last`) it stops at the row's last token with the whole mass.
  Stop walk(const Goal& g);

 private:
  static constexpr int kTop = 8;  // kernels::kMassEdges
  struct Level {                  // one band's members, compacted, in row order
    std::vector<float> x;
    std::vector<int32_t> id;
    std::vector<double> p;
    std::vector<uint64_t> keys;
  };
  // Walks the bands cut by `edges` ([8], descending) over x / ids (null: the row itself, ids
  // are indices) with masses `above` ([9], kernels::tempered_masses); true once stopped.
  bool walk_bands(const float* x, const int32_t* ids, int64_t n, const float* edges,
                  const double* above, int depth, const Goal& g, Stop& s);
  // Sorts one band's members and walks them one by one.
  bool walk_leaf(Level& lv, int64_t m, const Goal& g, Stop& s);
  Level& level(int depth);

  std::span<const float> x_;
  float mx_ = 0.0f;
  double inv_t_ = 1.0;
  float edges_[kTop] = {};
  double above_[kTop + 1] = {};
  std::vector<Level> levels_;  // scratch per depth of the walk, kept between tokens
};

}  // namespace arc
