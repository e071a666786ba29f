// PNG through libpng. libpng reports errors by calling our error function, which longjmps back to
// the one function below that called setjmp; everything that function owns lives in PngCtx (a
// frame the jump does not cross), so no destructor is skipped.
#include <png.h>

#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <new>

#include "decoders.h"

namespace arc::vision::detail {
namespace {

struct PngCtx {
  std::span<const uint8_t> bytes;
  size_t pos = 0;
  std::jmp_buf jmp;
  char msg[256] = {0};
  std::vector<uint8_t> rgba;    // [height, width, 4] when the image has alpha
  std::vector<png_bytep> rows;  // [height]
};

[[noreturn]] void on_error(png_structp png, png_const_charp msg) {
  auto* c = static_cast<PngCtx*>(png_get_error_ptr(png));
  std::snprintf(c->msg, sizeof(c->msg), "%s", msg ? msg : "unknown error");
  std::longjmp(c->jmp, 1);
}

void on_warning(png_structp, png_const_charp) {}  // benign (bad ancillary chunk CRC, ...)

void on_read(png_structp png, png_bytep out, png_size_t n) {
  auto* c = static_cast<PngCtx*>(png_get_io_ptr(png));
  if (n > c->bytes.size() - c->pos) png_error(png, "the file ends early (truncated)");
  std::memcpy(out, c->bytes.data() + c->pos, n);
  c->pos += n;
}

// Header only (out == nullptr) or the full decode into out.
Status run(PngCtx& c, const DecodeLimits& limits, ImageInfo& info, Image* out) {
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &c, on_error, on_warning);
  if (png == nullptr) return internal_error("libpng could not start");
  png_infop pi = png_create_info_struct(png);
  if (pi == nullptr) {
    png_destroy_read_struct(&png, nullptr, nullptr);
    return internal_error("libpng could not start");
  }
  if (setjmp(c.jmp)) {
    png_destroy_read_struct(&png, &pi, nullptr);
    return invalid_argument(
        std::string("the PNG cannot be decoded (damaged, truncated or unsupported): ") + c.msg);
  }
  // Ancillary chunks (text, ICC profiles) are bounded so a compressed chunk cannot balloon.
  png_set_chunk_malloc_max(png, 8u << 20);
  png_set_chunk_cache_max(png, 256);
  png_set_read_fn(png, &c, on_read);
  png_read_info(png, pi);

  png_uint_32 w = 0, h = 0;
  int bit_depth = 0, color_type = 0, interlace = 0;
  png_get_IHDR(png, pi, &w, &h, &bit_depth, &color_type, &interlace, nullptr, nullptr);
  info.format = ImageFormat::kPng;
  info.width = static_cast<int>(w);
  info.height = static_cast<int>(h);
  info.orientation = 1;
#ifdef PNG_eXIf_SUPPORTED
  {
    // An eXIf chunk before the pixels (where the PNG specification wants it) can turn the image.
    png_uint_32 n_exif = 0;
    png_bytep exif = nullptr;
    if (png_get_eXIf_1(png, pi, &n_exif, &exif) != 0 && exif != nullptr) {
      info.orientation = exif_payload_orientation({exif, n_exif});
    }
  }
#endif
  {
    Status st = check_dimensions(w, h, limits, "PNG");
    if (!st.ok() || out == nullptr) {
      png_destroy_read_struct(&png, &pi, nullptr);
      return st;
    }
  }

  // To RGB8 or RGBA8: palette -> RGB, gray < 8 bits -> 8, tRNS -> alpha, 16 -> 8 bits.
  png_set_expand(png);
  if (bit_depth == 16) png_set_strip_16(png);
  if (!(color_type & PNG_COLOR_MASK_COLOR)) png_set_gray_to_rgb(png);
  const int passes = png_set_interlace_handling(png);
  png_read_update_info(png, pi);
  const int channels = png_get_channels(png, pi);
  if ((channels != 3 && channels != 4) || png_get_rowbytes(png, pi) != size_t(w) * channels) {
    png_destroy_read_struct(&png, &pi, nullptr);
    return invalid_argument("the PNG has an unsupported pixel layout");
  }
  const size_t n = size_t(w) * h;
  try {
    out->rgb.resize(n * 3);
    c.rows.resize(h);
    // Interlaced images need the whole frame; others go one row at a time.
    if (channels == 4) c.rgba.resize(passes > 1 ? n * 4 : size_t(w) * 4);
  } catch (const std::bad_alloc&) {
    png_destroy_read_struct(&png, &pi, nullptr);
    return resource_exhausted("out of memory decoding a " + std::to_string(w) + "x" +
                              std::to_string(h) + " PNG");
  }
  if (channels == 3) {
    for (png_uint_32 y = 0; y < h; ++y) c.rows[y] = out->rgb.data() + size_t(y) * w * 3;
    png_read_image(png, c.rows.data());
  } else if (passes > 1) {
    for (png_uint_32 y = 0; y < h; ++y) c.rows[y] = c.rgba.data() + size_t(y) * w * 4;
    png_read_image(png, c.rows.data());
    flatten_rgba_on_white(c.rgba.data(), out->rgb.data(), n);
  } else {
    for (png_uint_32 y = 0; y < h; ++y) {
      png_read_row(png, c.rgba.data(), nullptr);
      flatten_rgba_on_white(c.rgba.data(), out->rgb.data() + size_t(y) * w * 3, w);
    }
  }
  png_read_end(png, nullptr);  // a file cut after its pixel data is still truncated
  png_destroy_read_struct(&png, &pi, nullptr);
  out->width = static_cast<int>(w);
  out->height = static_cast<int>(h);
  out->format = ImageFormat::kPng;
  return ok_status();
}

}  // namespace

Result<ImageInfo> probe_png(std::span<const uint8_t> bytes, const DecodeLimits& limits) {
  PngCtx c;
  c.bytes = bytes;
  ImageInfo info;
  ARC_RETURN_IF_ERROR(run(c, limits, info, nullptr));
  return info;
}

Result<Image> decode_png(std::span<const uint8_t> bytes, const DecodeLimits& limits) {
  PngCtx c;
  c.bytes = bytes;
  ImageInfo info;
  Image img;
  ARC_RETURN_IF_ERROR(run(c, limits, info, &img));
  try {
    apply_orientation(img, info.orientation);
  } catch (const std::bad_alloc&) {
    return resource_exhausted("out of memory rotating a PNG by its EXIF orientation");
  }
  return img;
}

}  // namespace arc::vision::detail
