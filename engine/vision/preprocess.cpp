// Qwen2-VL / Qwen3-VL image preprocessing: smart resize to the patch grid, bicubic resampling as
// PIL does it, rescale and normalise, and the flattening into the encoder's patch order.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>

#include "arc/vision_image.h"

namespace arc::vision {

Result<ResizedSize> smart_resize(int height, int width, const PreprocessConfig& cfg) {
  if (cfg.patch_size <= 0 || cfg.merge_size <= 0 || cfg.min_pixels < 0 ||
      cfg.max_pixels < cfg.min_pixels) {
    return invalid_argument("bad preprocessing configuration (patch, merge or pixel budget)");
  }
  if (height <= 0 || width <= 0) {
    return invalid_argument("the image has no pixels (" + std::to_string(width) + "x" +
                            std::to_string(height) + ")");
  }
  const double h = height, w = width;
  if (std::max(h, w) / std::min(h, w) > cfg.max_aspect_ratio) {
    return invalid_argument("the image is " + std::to_string(width) + "x" + std::to_string(height) +
                            "; its aspect ratio is over " +
                            std::to_string(static_cast<int>(cfg.max_aspect_ratio)) +
                            ":1; crop or pad it");
  }
  const double f = static_cast<double>(cfg.patch_size) * cfg.merge_size;
  // Python's round() rounds halves to even; nearbyint does the same in the default mode.
  // A side is at least one factor (the reference raises instead for sides under one factor).
  double hb = std::max(f, std::nearbyint(h / f) * f);
  double wb = std::max(f, std::nearbyint(w / f) * f);
  if (hb * wb > static_cast<double>(cfg.max_pixels)) {
    const double beta = std::sqrt(h * w / static_cast<double>(cfg.max_pixels));
    hb = std::max(f, std::floor(h / beta / f) * f);
    wb = std::max(f, std::floor(w / beta / f) * f);
  } else if (hb * wb < static_cast<double>(cfg.min_pixels)) {
    const double beta = std::sqrt(static_cast<double>(cfg.min_pixels) / (h * w));
    hb = std::ceil(h * beta / f) * f;
    wb = std::ceil(w * beta / f) * f;
  }
  if (hb > 1 << 20 || wb > 1 << 20) return invalid_argument("the resized image is too large");
  return ResizedSize{static_cast<int>(hb), static_cast<int>(wb)};
}

namespace {

// Keys' cubic convolution kernel with a = -0.5 (PIL's BICUBIC).
double cubic(double x) {
  constexpr double a = -0.5;
  x = std::fabs(x);
  if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0;
  if (x < 2.0) return (((x - 5.0) * x + 8.0) * x - 4.0) * a;
  return 0.0;
}

// For each output index: the first input index and the normalised weights (PIL's precompute:
// the kernel is widened by the scale when shrinking, which is what antialiases).
struct Taps {
  std::vector<int> first;
  std::vector<int> count;
  std::vector<double> weights;  // [out_size, max_taps]
  int max_taps = 0;
};

Taps make_taps(int in_size, int out_size) {
  Taps t;
  const double scale = static_cast<double>(in_size) / out_size;
  const double filterscale = std::max(scale, 1.0);
  const double support = 2.0 * filterscale;
  t.max_taps = static_cast<int>(std::ceil(support)) * 2 + 1;
  t.first.resize(out_size);
  t.count.resize(out_size);
  t.weights.assign(static_cast<size_t>(out_size) * t.max_taps, 0.0);
  for (int i = 0; i < out_size; ++i) {
    const double center = (i + 0.5) * scale;
    int lo = std::max(static_cast<int>(center - support + 0.5), 0);
    int hi = std::min(static_cast<int>(center + support + 0.5), in_size);
    hi = std::min(hi, lo + t.max_taps);
    double* w = &t.weights[static_cast<size_t>(i) * t.max_taps];
    double sum = 0;
    for (int x = lo; x < hi; ++x) {
      w[x - lo] = cubic((x - center + 0.5) / filterscale);
      sum += w[x - lo];
    }
    if (sum != 0)
      for (int x = 0; x < hi - lo; ++x) w[x] /= sum;
    t.first[i] = lo;
    t.count[i] = hi - lo;
  }
  return t;
}

// Rounds half up and clips to 8 bits, as PIL's fixed-point resampler does.
uint8_t clamp_u8(double v) {
  if (v <= 0.0) return 0;
  if (v >= 254.5) return 255;
  return static_cast<uint8_t>(static_cast<int>(v + 0.5));
}

}  // namespace

namespace {

// One separable pass. Horizontal: [h, in_w, 3] -> [h, out_w, 3]; vertical: [in_h, w, 3] ->
// [out_h, w, 3].
std::vector<uint8_t> resample_horizontal(const std::vector<uint8_t>& in, int in_w, int h,
                                         int out_w) {
  const Taps tx = make_taps(in_w, out_w);
  std::vector<uint8_t> out(static_cast<size_t>(h) * out_w * 3);
  for (int y = 0; y < h; ++y) {
    const uint8_t* row = &in[static_cast<size_t>(y) * in_w * 3];
    uint8_t* d = &out[static_cast<size_t>(y) * out_w * 3];
    for (int x = 0; x < out_w; ++x, d += 3) {
      const double* w = &tx.weights[static_cast<size_t>(x) * tx.max_taps];
      const uint8_t* p = row + static_cast<size_t>(tx.first[x]) * 3;
      double a0 = 0, a1 = 0, a2 = 0;
      for (int k = 0; k < tx.count[x]; ++k, p += 3) {
        a0 += w[k] * p[0];
        a1 += w[k] * p[1];
        a2 += w[k] * p[2];
      }
      d[0] = clamp_u8(a0);
      d[1] = clamp_u8(a1);
      d[2] = clamp_u8(a2);
    }
  }
  return out;
}

std::vector<uint8_t> resample_vertical(const std::vector<uint8_t>& in, int w, int in_h, int out_h) {
  const Taps ty = make_taps(in_h, out_h);
  const size_t stride = static_cast<size_t>(w) * 3;
  std::vector<uint8_t> out(static_cast<size_t>(out_h) * stride);
  std::vector<double> acc(stride);
  for (int y = 0; y < out_h; ++y) {
    // Whole rows at a time, so the inner loop walks memory in order.
    std::fill(acc.begin(), acc.end(), 0.0);
    const double* wt = &ty.weights[static_cast<size_t>(y) * ty.max_taps];
    for (int k = 0; k < ty.count[y]; ++k) {
      const uint8_t* row = &in[static_cast<size_t>(ty.first[y] + k) * stride];
      const double wk = wt[k];
      for (size_t i = 0; i < stride; ++i) acc[i] += wk * row[i];
    }
    uint8_t* d = &out[static_cast<size_t>(y) * stride];
    for (size_t i = 0; i < stride; ++i) d[i] = clamp_u8(acc[i]);
  }
  return out;
}

}  // namespace

Image resize_bicubic(const Image& src, int width, int height) {
  Image out;
  out.format = src.format;
  out.width = width;
  out.height = height;
  // Horizontal pass, then vertical, each through an 8-bit result and skipped when its size does
  // not change, as PIL does.
  if (width != src.width) {
    out.rgb = resample_horizontal(src.rgb, src.width, src.height, width);
  } else {
    out.rgb = src.rgb;
  }
  if (height != src.height) out.rgb = resample_vertical(out.rgb, width, src.height, height);
  return out;
}

Result<PatchGrid> preprocess(const Image& image, const PreprocessConfig& cfg) {
  if (image.width <= 0 || image.height <= 0 ||
      image.rgb.size() != static_cast<size_t>(image.width) * image.height * 3) {
    return invalid_argument("the image has no pixels or a wrong pixel buffer size");
  }
  if (cfg.temporal_patch_size <= 0) return invalid_argument("temporal_patch_size must be > 0");
  ARC_ASSIGN_OR_RETURN(ResizedSize rs, smart_resize(image.height, image.width, cfg));
  PatchGrid g;
  const int p = cfg.patch_size, m = cfg.merge_size, T = cfg.temporal_patch_size;
  g.t = 1;
  g.h = rs.height / p;
  g.w = rs.width / p;
  g.patch_dim = 3 * T * p * p;
  try {
    const Image r = resize_bicubic(image, rs.width, rs.height);
    // (v / 255 - mean) / std per channel, as a table over the 256 byte values.
    float lut[3][256];
    for (int c = 0; c < 3; ++c)
      for (int v = 0; v < 256; ++v)
        lut[c][v] =
            (static_cast<float>(v) * (1.0f / 255.0f) - cfg.image_mean[c]) / cfg.image_std[c];
    g.pixels.resize(static_cast<size_t>(g.n_patches()) * g.patch_dim);
    const int bh_n = g.h / m, bw_n = g.w / m;
    size_t patch = 0;
    for (int bh = 0; bh < bh_n; ++bh) {
      for (int bw = 0; bw < bw_n; ++bw) {
        for (int mh = 0; mh < m; ++mh) {
          for (int mw = 0; mw < m; ++mw, ++patch) {
            float* dst = &g.pixels[patch * g.patch_dim];
            const int y0 = (bh * m + mh) * p, x0 = (bw * m + mw) * p;
            const size_t frame = static_cast<size_t>(p) * p;
            for (int c = 0; c < 3; ++c) {
              float* first = dst;
              for (int py = 0; py < p; ++py) {
                const uint8_t* row = &r.rgb[(static_cast<size_t>(y0 + py) * rs.width + x0) * 3];
                for (int px = 0; px < p; ++px) *dst++ = lut[c][row[px * 3 + c]];
              }
              // A still image: every later frame repeats the first.
              for (int t = 1; t < T; ++t, dst += frame)
                std::memcpy(dst, first, frame * sizeof(float));
            }
          }
        }
      }
    }
  } catch (const std::bad_alloc&) {
    return resource_exhausted("out of memory preprocessing a " + std::to_string(rs.width) + "x" +
                              std::to_string(rs.height) + " image");
  }
  return g;
}

}  // namespace arc::vision
