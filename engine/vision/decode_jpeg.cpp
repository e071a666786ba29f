// JPEG through libjpeg-turbo. Its error manager's error_exit longjmps back to run(); all state
// that must outlive the jump lives in JpegCtx. Truncated data (which libjpeg only warns about,
// then pads with gray) is an error here; so is a progressive file with absurdly many scans (a
// CPU bomb: each scan re-decodes the whole image).
// jpeglib.h needs size_t and FILE declared before it.
#include <csetjmp>
#include <cstddef>
#include <cstdio>
#include <new>

#include <jpeglib.h>
// jerror.h needs jpeglib.h's types.
#include <jerror.h>

#include "decoders.h"

namespace arc::vision::detail {
namespace {

constexpr int kMaxScans = 256;

struct JpegCtx {
  jpeg_error_mgr err;
  jpeg_progress_mgr progress;
  std::jmp_buf jmp;
  char msg[JMSG_LENGTH_MAX + 64] = {0};
  std::vector<uint8_t> row;  // [width, 4] for CMYK
};

JpegCtx* ctx_of(j_common_ptr cinfo) {
  // err is the first member, so the error manager's address is the context's.
  return reinterpret_cast<JpegCtx*>(cinfo->err);
}

[[noreturn]] void on_error_exit(j_common_ptr cinfo) {
  JpegCtx* c = ctx_of(cinfo);
  (*cinfo->err->format_message)(cinfo, c->msg);
  std::longjmp(c->jmp, 1);
}

void on_emit_message(j_common_ptr cinfo, int level) {
  if (level >= 0) return;  // trace messages
  // Warnings that mean the data is incomplete or damaged; others (extraneous bytes between
  // markers, which some cameras write) are harmless.
  const int code = cinfo->err->msg_code;
  if (code == JWRN_JPEG_EOF || code == JWRN_HIT_MARKER || code == JWRN_MUST_RESYNC ||
      code == JWRN_NOT_SEQUENTIAL) {
    on_error_exit(cinfo);
  }
}

void on_output_message(j_common_ptr) {}

void on_progress(j_common_ptr cinfo) {
  auto* d = reinterpret_cast<j_decompress_ptr>(cinfo);
  if (d->is_decompressor && d->input_scan_number > kMaxScans) {
    JpegCtx* c = ctx_of(cinfo);
    std::snprintf(c->msg, sizeof(c->msg), "more than %d progressive scans (a decompression bomb)",
                  kMaxScans);
    std::longjmp(c->jmp, 1);
  }
}

Status run(JpegCtx& c, std::span<const uint8_t> bytes, const DecodeLimits& limits, ImageInfo& info,
           Image* out) {
  jpeg_decompress_struct cinfo{};  // zeroed: destroy is safe even if create fails
  cinfo.err = jpeg_std_error(&c.err);
  c.err.error_exit = on_error_exit;
  c.err.emit_message = on_emit_message;
  c.err.output_message = on_output_message;
  c.progress.progress_monitor = on_progress;
  if (setjmp(c.jmp)) {
    jpeg_destroy_decompress(&cinfo);
    return invalid_argument(
        std::string("the JPEG cannot be decoded (damaged, truncated or unsupported): ") + c.msg);
  }
  jpeg_create_decompress(&cinfo);
  cinfo.progress = &c.progress;
  // libjpeg's own working memory (coefficient buffers of progressive files) stays bounded too.
  cinfo.mem->max_memory_to_use = 512L << 20;
  jpeg_mem_src(&cinfo, bytes.data(), static_cast<unsigned long>(bytes.size()));
  jpeg_save_markers(&cinfo, JPEG_APP0 + 1, 0xFFFF);
  jpeg_read_header(&cinfo, TRUE);

  info.format = ImageFormat::kJpeg;
  info.width = static_cast<int>(cinfo.image_width);
  info.height = static_cast<int>(cinfo.image_height);
  info.orientation = 1;
  for (jpeg_saved_marker_ptr m = cinfo.marker_list; m != nullptr; m = m->next) {
    if (m->marker == JPEG_APP0 + 1) {
      const int o = exif_orientation({m->data, m->data_length});
      if (o != 1) {
        info.orientation = o;
        break;
      }
    }
  }
  {
    Status st = check_dimensions(cinfo.image_width, cinfo.image_height, limits, "JPEG");
    if (!st.ok() || out == nullptr) {
      jpeg_destroy_decompress(&cinfo);
      return st;
    }
  }

  const bool cmyk = cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK;
  cinfo.out_color_space = cmyk ? JCS_CMYK : JCS_RGB;
  cinfo.dct_method = JDCT_ISLOW;  // the accurate IDCT, as PIL uses
  jpeg_start_decompress(&cinfo);
  const size_t w = cinfo.output_width, h = cinfo.output_height;
  if (w != cinfo.image_width || h != cinfo.image_height ||
      cinfo.output_components != (cmyk ? 4 : 3)) {
    jpeg_destroy_decompress(&cinfo);
    return invalid_argument("the JPEG has an unsupported pixel layout");
  }
  try {
    out->rgb.resize(w * h * 3);
    if (cmyk) c.row.resize(w * 4);
  } catch (const std::bad_alloc&) {
    jpeg_destroy_decompress(&cinfo);
    return resource_exhausted("out of memory decoding a JPEG");
  }
  while (cinfo.output_scanline < h) {
    const size_t y = cinfo.output_scanline;
    JSAMPROW row = cmyk ? c.row.data() : out->rgb.data() + y * w * 3;
    if (jpeg_read_scanlines(&cinfo, &row, 1) != 1) {
      jpeg_destroy_decompress(&cinfo);
      return invalid_argument("the JPEG is truncated");
    }
    if (cmyk) {
      // Adobe writes CMYK inverted (255 = no ink), so R = C * K / 255 on the stored values.
      uint8_t* dst = out->rgb.data() + y * w * 3;
      for (size_t x = 0; x < w; ++x) {
        const uint32_t k = c.row[4 * x + 3];
        for (int ch = 0; ch < 3; ++ch)
          dst[3 * x + ch] = static_cast<uint8_t>((c.row[4 * x + ch] * k + 127u) / 255u);
      }
    }
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  out->width = static_cast<int>(w);
  out->height = static_cast<int>(h);
  out->format = ImageFormat::kJpeg;
  return ok_status();
}

}  // namespace

Result<ImageInfo> probe_jpeg(std::span<const uint8_t> bytes, const DecodeLimits& limits) {
  JpegCtx c;
  ImageInfo info;
  ARC_RETURN_IF_ERROR(run(c, bytes, limits, info, nullptr));
  return info;
}

Result<Image> decode_jpeg(std::span<const uint8_t> bytes, const DecodeLimits& limits) {
  JpegCtx c;
  ImageInfo info;
  Image img;
  ARC_RETURN_IF_ERROR(run(c, bytes, limits, info, &img));
  try {
    apply_orientation(img, info.orientation);
  } catch (const std::bad_alloc&) {
    return resource_exhausted("out of memory rotating a JPEG by its EXIF orientation");
  }
  return img;
}

}  // namespace arc::vision::detail
