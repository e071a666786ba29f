// libFuzzer target for the request side of the image path: any text as an image_url data URI
// (media type, parameters, base64) and any text as an Anthropic base64 source, then the decoded
// bytes through probe_image and decode_image. Nothing may crash; what decodes must be consistent.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "api_images.h"
#include "arc/vision_image.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  arc::vision::DecodeLimits limits;
  limits.max_pixels = 1 << 20;
  limits.max_side = 4096;
  auto check = [&](const arc::Result<arc::ImageInput>& img) {
    if (!img.ok()) return;
    if (img->bytes.empty() || img->media_type.empty()) __builtin_trap();
    (void)arc::vision::probe_image(img->bytes, limits);
    auto d = arc::vision::decode_image(img->bytes, limits);
    if (d.ok() && d->rgb.size() != static_cast<size_t>(d->width) * d->height * 3) __builtin_trap();
  };
  check(arc::server::image_from_data_uri(text, "fuzz"));
  check(arc::server::image_from_base64("image/png", text, "fuzz"));
  return 0;
}
