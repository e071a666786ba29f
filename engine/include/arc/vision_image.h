// Images in, encoder patches out: decoding (PNG, JPEG, WebP), and the Qwen-VL preprocessing that
// turns a decoded image into the flattened patches the vision encoder's patch embedding reads.
//
// Decoding never trusts the file: the format is sniffed from its magic bytes (never a name or a
// declared media type), the header's dimensions are checked against the limits BEFORE any pixel
// buffer is allocated, truncated or corrupt data is an error, and the libraries' error paths
// return to us (they never abort or exit). Every error is INVALID_ARGUMENT with a message a user
// can act on ("the JPEG is truncated ...", "the image is 20000x20000 = 400 megapixels; the limit
// is 50 megapixels").
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "arc/status.h"

namespace arc::vision {

enum class ImageFormat : int { kUnknown = 0, kPng = 1, kJpeg = 2, kWebp = 3 };
std::string_view image_format_name(ImageFormat f);  // "png", "jpeg", "webp", "unknown"
std::string_view image_media_type(ImageFormat f);   // "image/png", ... ("" for unknown)

// The format from the first bytes (PNG signature, JPEG SOI FF D8 FF, RIFF....WEBP).
ImageFormat sniff_image_format(std::span<const uint8_t> bytes);

// Decoded pixels: 8-bit RGB, rows top to bottom after EXIF orientation, no padding.
struct Image {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> rgb;  // [height, width, 3]
  ImageFormat format = ImageFormat::kUnknown;
};

struct DecodeLimits {
  size_t max_bytes = 32u << 20;     // encoded size
  int64_t max_pixels = 50'000'000;  // width * height from the header (50 MP)
  int max_side = 16384;             // either dimension
};

// Header facts, read without decoding pixels (cheap; used to refuse early).
struct ImageInfo {
  ImageFormat format = ImageFormat::kUnknown;
  int width = 0;  // as stored (before EXIF orientation)
  int height = 0;
  int orientation = 1;  // EXIF orientation 1..8 (JPEG APP1, PNG eXIf, WebP EXIF; 1 otherwise)
};

// Format, dimensions and orientation from the header, with the limits checked.
Result<ImageInfo> probe_image(std::span<const uint8_t> bytes, const DecodeLimits& limits = {});

// Full decode to RGB8. Alpha is composited over WHITE (what a viewer shows for a transparent
// PNG); grayscale, palette and 16-bit images become RGB8; JPEG EXIF orientation (2..8) is applied,
// so width/height are those of the upright image.
Result<Image> decode_image(std::span<const uint8_t> bytes, const DecodeLimits& limits = {});

// Qwen2-VL/Qwen3-VL image preprocessing. Defaults are Qwen3-VL's preprocessor_config.json:
// patch 16, merge 2, temporal patch 2, mean = std = 0.5, shortest_edge (min_pixels) 65536,
// longest_edge (max_pixels) 16777216. Qwen2/2.5-VL use patch 14 and the CLIP mean/std.
struct PreprocessConfig {
  int patch_size = 16;
  int merge_size = 2;
  int temporal_patch_size = 2;
  int64_t min_pixels = 65536;
  int64_t max_pixels = 16777216;
  float image_mean[3] = {0.5f, 0.5f, 0.5f};
  float image_std[3] = {0.5f, 0.5f, 0.5f};
  // Refused above this aspect ratio (the HF processor's limit).
  double max_aspect_ratio = 200.0;
};

// The resized size: both sides multiples of patch_size * merge_size, area within
// [min_pixels, max_pixels], aspect ratio kept as well as rounding allows.
struct ResizedSize {
  int height = 0;
  int width = 0;
};
Result<ResizedSize> smart_resize(int height, int width, const PreprocessConfig& cfg = {});

// The encoder's input for one image.
//   pixels: [t * h * w, 3 * temporal_patch_size * patch_size * patch_size], row-major, f32.
//   Patches are ordered t, then (h / merge, w / merge) merge blocks in raster order, then the
//   merge_size x merge_size patches inside a block in raster order, so each run of merge^2
//   consecutive patches is one merged token. Inside a patch: channel, then temporal frame, then
//   row, then column (PyTorch Conv3d weight order [out, C, T, P, P]). A still image repeats its
//   one frame temporal_patch_size times.
//   t, h, w: the grid in patches (t = 1 for a still image); tokens after merging = t*h*w/merge^2.
struct PatchGrid {
  std::vector<float> pixels;
  int t = 0;
  int h = 0;
  int w = 0;
  int patch_dim = 0;  // 3 * temporal_patch_size * patch_size * patch_size
  int64_t n_patches() const { return static_cast<int64_t>(t) * h * w; }
};

// Resizes (bicubic, as PIL's BICUBIC with antialiasing when shrinking) to smart_resize's size,
// rescales by 1/255, normalises with mean/std and flattens into patches.
Result<PatchGrid> preprocess(const Image& image, const PreprocessConfig& cfg = {});

// Bicubic resize of an RGB8 image (a = -0.5, support widened by the scale when shrinking), the
// result rounded and clamped to 8 bits as PIL does. Exposed for tests; unlike the functions above
// it reports an allocation failure as std::bad_alloc (preprocess turns that into a Status).
Image resize_bicubic(const Image& image, int width, int height);

}  // namespace arc::vision
