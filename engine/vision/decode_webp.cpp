// WebP through libwebp's advanced API, decoding into a buffer we own and sized from the checked
// header. Animated WebP is refused (a still image is expected); alpha is flattened onto white.
#include <webp/decode.h>

#include <cstring>
#include <new>

#include "decoders.h"

namespace arc::vision::detail {
namespace {

std::string vp8_status_text(VP8StatusCode s) {
  switch (s) {
    case VP8_STATUS_OUT_OF_MEMORY:
      return "out of memory";
    case VP8_STATUS_INVALID_PARAM:
      return "invalid parameter";
    case VP8_STATUS_BITSTREAM_ERROR:
      return "corrupt bitstream";
    case VP8_STATUS_UNSUPPORTED_FEATURE:
      return "unsupported feature";
    case VP8_STATUS_SUSPENDED:
      return "decoding suspended";
    case VP8_STATUS_USER_ABORT:
      return "aborted";
    case VP8_STATUS_NOT_ENOUGH_DATA:
      return "the file ends early (truncated)";
    case VP8_STATUS_OK:
      break;
  }
  return "unknown error";
}

Result<WebPBitstreamFeatures> features(std::span<const uint8_t> bytes, const DecodeLimits& limits) {
  WebPBitstreamFeatures f;
  const VP8StatusCode s = WebPGetFeatures(bytes.data(), bytes.size(), &f);
  if (s != VP8_STATUS_OK) {
    return invalid_argument("the WebP cannot be decoded (damaged, truncated or unsupported): " +
                            vp8_status_text(s));
  }
  ARC_RETURN_IF_ERROR(check_dimensions(f.width, f.height, limits, "WebP"));
  if (f.has_animation) {
    return invalid_argument("animated WebP images are not supported; send a still image");
  }
  return f;
}

// EXIF orientation from the extended format's EXIF chunk (RIFF chunks: fourcc, 32-bit LE
// size, payload padded to even), 1 when there is none. Every size is checked against the file.
int webp_orientation(std::span<const uint8_t> b) {
  if (b.size() < 12 || std::memcmp(b.data(), "RIFF", 4) != 0 ||
      std::memcmp(b.data() + 8, "WEBP", 4) != 0) {
    return 1;
  }
  size_t off = 12;
  for (int n = 0; n < 64 && off + 8 <= b.size(); ++n) {
    const uint64_t size = uint64_t(b[off + 4]) | uint64_t(b[off + 5]) << 8 |
                          uint64_t(b[off + 6]) << 16 | uint64_t(b[off + 7]) << 24;
    if (size > b.size() - off - 8) return 1;
    if (std::memcmp(b.data() + off, "EXIF", 4) == 0) {
      return exif_payload_orientation(b.subspan(off + 8, static_cast<size_t>(size)));
    }
    off += 8 + static_cast<size_t>(size) + (size & 1);
  }
  return 1;
}

}  // namespace

Result<ImageInfo> probe_webp(std::span<const uint8_t> bytes, const DecodeLimits& limits) {
  ARC_ASSIGN_OR_RETURN(auto f, features(bytes, limits));
  ImageInfo info;
  info.format = ImageFormat::kWebp;
  info.width = f.width;
  info.height = f.height;
  info.orientation = webp_orientation(bytes);
  return info;
}

Result<Image> decode_webp(std::span<const uint8_t> bytes, const DecodeLimits& limits) {
  ARC_ASSIGN_OR_RETURN(auto f, features(bytes, limits));
  const size_t w = static_cast<size_t>(f.width), h = static_cast<size_t>(f.height);
  const int channels = f.has_alpha ? 4 : 3;
  Image img;
  std::vector<uint8_t> rgba;
  try {
    img.rgb.resize(w * h * 3);
    if (f.has_alpha) rgba.resize(w * h * 4);
  } catch (const std::bad_alloc&) {
    return resource_exhausted("out of memory decoding a WebP");
  }
  WebPDecoderConfig config;
  if (!WebPInitDecoderConfig(&config)) return internal_error("libwebp version mismatch");
  config.output.colorspace = f.has_alpha ? MODE_RGBA : MODE_RGB;
  config.output.is_external_memory = 1;
  uint8_t* dst = f.has_alpha ? rgba.data() : img.rgb.data();
  config.output.u.RGBA.rgba = dst;
  config.output.u.RGBA.stride = static_cast<int>(w * channels);
  config.output.u.RGBA.size = w * h * channels;
  const VP8StatusCode s = WebPDecode(bytes.data(), bytes.size(), &config);
  WebPFreeDecBuffer(&config.output);  // external memory: frees nothing of ours
  if (s != VP8_STATUS_OK) {
    return invalid_argument("the WebP cannot be decoded (damaged, truncated or unsupported): " +
                            vp8_status_text(s));
  }
  if (f.has_alpha) flatten_rgba_on_white(rgba.data(), img.rgb.data(), w * h);
  img.width = f.width;
  img.height = f.height;
  img.format = ImageFormat::kWebp;
  try {
    apply_orientation(img, webp_orientation(bytes));
  } catch (const std::bad_alloc&) {
    return resource_exhausted("out of memory rotating a WebP by its EXIF orientation");
  }
  return img;
}

}  // namespace arc::vision::detail
