// libFuzzer target for the image path: probe_image and decode_image must return (an image or an
// error) for any bytes, never crash, read out of bounds, hang or allocate without bound; a decoded
// image then goes through preprocess. Build with clang (see tests/fuzz/CMakeLists.txt).
#include <cstddef>
#include <cstdint>

#include "arc/vision_image.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace arc::vision;
  const std::span<const uint8_t> bytes(data, size);
  // Small limits keep each run fast; the code paths are the same as with the defaults.
  DecodeLimits limits;
  limits.max_pixels = 1 << 20;
  limits.max_side = 4096;
  (void)sniff_image_format(bytes);
  auto info = probe_image(bytes, limits);
  auto img = decode_image(bytes, limits);
  if (img.ok()) {
    if (img->rgb.size() != static_cast<size_t>(img->width) * img->height * 3) __builtin_trap();
    if (!info.ok()) __builtin_trap();  // what decodes must also probe
    PreprocessConfig cfg;
    cfg.min_pixels = 32 * 32;
    cfg.max_pixels = 128 * 128;
    auto grid = preprocess(*img, cfg);
    if (grid.ok() &&
        grid->pixels.size() != static_cast<size_t>(grid->n_patches()) * grid->patch_dim)
      __builtin_trap();
  }
  return 0;
}
