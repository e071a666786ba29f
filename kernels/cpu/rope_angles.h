// The rotation of one RoPE pair: angle and magnitude for pair i at position pos, with linear
// scaling, per-pair frequency factors and the YaRN ramp (the same definitions GGUF models use).
// Shared by the reference and the optimized rope so both rotate by the same angles; the tests
// check these angles against the formulas independently.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "arc/kernels/ops.h"

namespace arc::kernels::detail {

// Leading dims rotated, or 0 when args are unusable (odd or too large rot_dim).
inline int64_t rope_rot_dim(const RopeArgs& a) {
  const int64_t rot = a.rot_dim > 0 ? a.rot_dim : a.head_dim;
  if (rot <= 0 || rot % 2 != 0 || rot > a.head_dim) return 0;
  return rot;
}

// YaRN: pairs below `low` keep the original (extrapolated) frequency, pairs above `high` are fully
// interpolated, a linear ramp in between. corr_dim(beta) is the pair index whose wavelength fits
// n_ctx_orig / beta times into the original context.
struct YarnDims {
  double low = 0.0;
  double high = 0.0;
};

inline YarnDims yarn_corr_dims(const RopeArgs& a, int64_t rot) {
  auto corr = [&](double beta) {
    return static_cast<double>(rot) *
           std::log(static_cast<double>(a.n_ctx_orig) / (beta * 2.0 * M_PI)) /
           (2.0 * std::log(static_cast<double>(a.theta_base)));
  };
  YarnDims d;
  d.low = std::max(0.0, std::floor(corr(a.beta_fast)));
  d.high = std::min(static_cast<double>(rot - 1), std::ceil(corr(a.beta_slow)));
  return d;
}

struct RopeRotation {
  double cos_m;  // cos(theta) * magnitude
  double sin_m;  // sin(theta) * magnitude
};

inline RopeRotation rope_rotation(const RopeArgs& a, int64_t rot, const YarnDims& yd, int64_t i,
                                  int32_t pos) {
  double theta_extrap =
      static_cast<double>(pos) * std::pow(static_cast<double>(a.theta_base), -2.0 * i / rot);
  if (a.freq_factors != nullptr) theta_extrap /= a.freq_factors[i];
  const double theta_interp = a.freq_scale * theta_extrap;
  double theta = theta_interp;
  double mscale = a.attn_factor;
  if (a.ext_factor != 0.0f) {
    const double y = (static_cast<double>(i) - yd.low) / std::max(0.001, yd.high - yd.low);
    const double ramp = (1.0 - std::min(1.0, std::max(0.0, y))) * a.ext_factor;
    theta = theta_interp * (1.0 - ramp) + theta_extrap * ramp;
    mscale *= 1.0 + 0.1 * std::log(1.0 / a.freq_scale);
  }
  return {std::cos(theta) * mscale, std::sin(theta) * mscale};
}

}  // namespace arc::kernels::detail
