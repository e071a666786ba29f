// Format sniffing, limits and the dispatch to the per-format decoders.
#include <cstring>

#include "decoders.h"

namespace arc::vision {

std::string_view image_format_name(ImageFormat f) {
  switch (f) {
    case ImageFormat::kPng:
      return "png";
    case ImageFormat::kJpeg:
      return "jpeg";
    case ImageFormat::kWebp:
      return "webp";
    case ImageFormat::kUnknown:
      break;
  }
  return "unknown";
}

std::string_view image_media_type(ImageFormat f) {
  switch (f) {
    case ImageFormat::kPng:
      return "image/png";
    case ImageFormat::kJpeg:
      return "image/jpeg";
    case ImageFormat::kWebp:
      return "image/webp";
    case ImageFormat::kUnknown:
      break;
  }
  return "";
}

ImageFormat sniff_image_format(std::span<const uint8_t> b) {
  static constexpr uint8_t kPng[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  if (b.size() >= 8 && std::memcmp(b.data(), kPng, 8) == 0) return ImageFormat::kPng;
  if (b.size() >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF) return ImageFormat::kJpeg;
  if (b.size() >= 12 && std::memcmp(b.data(), "RIFF", 4) == 0 &&
      std::memcmp(b.data() + 8, "WEBP", 4) == 0)
    return ImageFormat::kWebp;
  return ImageFormat::kUnknown;
}

namespace {

// What the first bytes look like, for the "unsupported format" message.
std::string describe_unknown(std::span<const uint8_t> b) {
  auto starts = [&](const char* s) {
    size_t n = std::strlen(s);
    return b.size() >= n && std::memcmp(b.data(), s, n) == 0;
  };
  if (starts("GIF87a") || starts("GIF89a")) return "a GIF";
  if (starts("BM")) return "a BMP";
  if (starts("II*") || starts("MM\0*")) return "a TIFF";
  if (b.size() >= 12 && std::memcmp(b.data() + 4, "ftyp", 4) == 0) return "an AVIF/HEIC";
  if (starts("<svg") || starts("<?xml")) return "an SVG";
  return "not a known image format";
}

Status check_size(std::span<const uint8_t> bytes, const DecodeLimits& limits) {
  if (bytes.empty()) return invalid_argument("the image is empty (0 bytes)");
  if (bytes.size() > limits.max_bytes) {
    return invalid_argument("the image file is " + std::to_string(bytes.size()) +
                            " bytes; the limit is " + std::to_string(limits.max_bytes) +
                            " bytes; send a smaller image");
  }
  return ok_status();
}

Status unsupported(std::span<const uint8_t> bytes) {
  return invalid_argument("unsupported image format (" + describe_unknown(bytes) +
                          "); send PNG, JPEG or WebP");
}

}  // namespace

Result<ImageInfo> probe_image(std::span<const uint8_t> bytes, const DecodeLimits& limits) {
  ARC_RETURN_IF_ERROR(check_size(bytes, limits));
  switch (sniff_image_format(bytes)) {
    case ImageFormat::kPng:
      return detail::probe_png(bytes, limits);
    case ImageFormat::kJpeg:
      return detail::probe_jpeg(bytes, limits);
    case ImageFormat::kWebp:
      return detail::probe_webp(bytes, limits);
    case ImageFormat::kUnknown:
      break;
  }
  return unsupported(bytes);
}

Result<Image> decode_image(std::span<const uint8_t> bytes, const DecodeLimits& limits) {
  ARC_RETURN_IF_ERROR(check_size(bytes, limits));
  switch (sniff_image_format(bytes)) {
    case ImageFormat::kPng:
      return detail::decode_png(bytes, limits);
    case ImageFormat::kJpeg:
      return detail::decode_jpeg(bytes, limits);
    case ImageFormat::kWebp:
      return detail::decode_webp(bytes, limits);
    case ImageFormat::kUnknown:
      break;
  }
  return unsupported(bytes);
}

namespace detail {

Status check_dimensions(int64_t width, int64_t height, const DecodeLimits& limits,
                        std::string_view what) {
  const std::string dims = std::to_string(width) + "x" + std::to_string(height);
  if (width <= 0 || height <= 0) {
    return invalid_argument("the " + std::string(what) + " image has no pixels (" + dims + ")");
  }
  if (width > limits.max_side || height > limits.max_side) {
    return invalid_argument("the " + std::string(what) + " image is " + dims +
                            " pixels; the limit is " + std::to_string(limits.max_side) +
                            " pixels per side; send a smaller image");
  }
  if (width * height > limits.max_pixels) {
    return invalid_argument(
        "the " + std::string(what) + " image is " + dims + " = " +
        std::to_string(width * height / 1000000) + " megapixels; the limit is " +
        std::to_string(limits.max_pixels / 1000000) + " megapixels; send a smaller image");
  }
  return ok_status();
}

void flatten_rgba_on_white(const uint8_t* rgba, uint8_t* rgb, size_t n_pixels) {
  for (size_t i = 0; i < n_pixels; ++i) {
    const uint32_t a = rgba[4 * i + 3];
    for (int c = 0; c < 3; ++c) {
      // c * a / 255 + 255 * (255 - a) / 255, rounded.
      const uint32_t v = rgba[4 * i + c] * a + 255u * (255u - a);
      rgb[3 * i + c] = static_cast<uint8_t>((v + 127u) / 255u);
    }
  }
}

void apply_orientation(Image& img, int o) {
  if (o < 2 || o > 8) return;
  const int W = img.width, H = img.height;
  const bool swap = o >= 5;
  const int ow = swap ? H : W, oh = swap ? W : H;
  std::vector<uint8_t> out(img.rgb.size());
  for (int y = 0; y < oh; ++y) {
    for (int x = 0; x < ow; ++x) {
      int sx = x, sy = y;  // source pixel of output (x, y)
      switch (o) {
        case 2:
          sx = W - 1 - x;
          sy = y;
          break;  // mirror left-right
        case 3:
          sx = W - 1 - x;
          sy = H - 1 - y;
          break;  // rotate 180
        case 4:
          sx = x;
          sy = H - 1 - y;
          break;  // mirror top-bottom
        case 5:
          sx = y;
          sy = x;
          break;  // transpose
        case 6:
          sx = y;
          sy = H - 1 - x;
          break;  // rotate 90 clockwise
        case 7:
          sx = W - 1 - y;
          sy = H - 1 - x;
          break;  // transverse
        case 8:
          sx = W - 1 - y;
          sy = x;
          break;  // rotate 90 counter-clockwise
      }
      const size_t s = (static_cast<size_t>(sy) * W + sx) * 3;
      const size_t d = (static_cast<size_t>(y) * ow + x) * 3;
      out[d] = img.rgb[s];
      out[d + 1] = img.rgb[s + 1];
      out[d + 2] = img.rgb[s + 2];
    }
  }
  img.rgb = std::move(out);
  img.width = ow;
  img.height = oh;
}

}  // namespace detail
}  // namespace arc::vision
