// EXIF orientation from a JPEG APP1 segment, a PNG eXIf chunk or a WebP EXIF chunk. Only IFD0's
// Orientation tag (0x0112) is read; every
// offset and count is checked against the payload, and anything malformed means "upright" (1):
// a broken tag must not make a viewable photo unusable.
#include <cstring>

#include "decoders.h"

namespace arc::vision::detail {

namespace {
constexpr uint8_t kExif[6] = {'E', 'x', 'i', 'f', 0, 0};

bool has_exif_prefix(std::span<const uint8_t> b) {
  return b.size() >= 6 && std::memcmp(b.data(), kExif, 6) == 0;
}

// `tiff`: a TIFF header and its IFDs; offsets count from its first byte.
int tiff_orientation(std::span<const uint8_t> tiff) {
  if (tiff.size() < 8) return 1;
  bool little;
  if (tiff[0] == 'I' && tiff[1] == 'I') {
    little = true;
  } else if (tiff[0] == 'M' && tiff[1] == 'M') {
    little = false;
  } else {
    return 1;
  }
  auto u16 = [&](size_t off) -> uint32_t {
    return little ? (tiff[off] | (tiff[off + 1] << 8)) : ((tiff[off] << 8) | tiff[off + 1]);
  };
  auto u32 = [&](size_t off) -> uint64_t {
    return little ? (uint64_t(u16(off)) | (uint64_t(u16(off + 2)) << 16))
                  : ((uint64_t(u16(off)) << 16) | uint64_t(u16(off + 2)));
  };
  if (u16(2) != 42) return 1;
  const uint64_t ifd = u32(4);
  if (ifd < 8 || ifd + 2 > tiff.size()) return 1;
  const uint64_t n = u16(ifd);
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t e = ifd + 2 + 12 * i;
    if (e + 12 > tiff.size()) return 1;
    if (u16(e) != 0x0112) continue;
    const uint32_t type = u16(e + 2);
    const uint64_t count = u32(e + 4);
    if (type != 3 || count < 1) return 1;  // SHORT, value inline in the first two bytes
    const uint32_t v = u16(e + 8);
    return v >= 1 && v <= 8 ? static_cast<int>(v) : 1;
  }
  return 1;
}
}  // namespace

int exif_orientation(std::span<const uint8_t> app1) {
  return has_exif_prefix(app1) ? tiff_orientation(app1.subspan(6)) : 1;
}

int exif_payload_orientation(std::span<const uint8_t> payload) {
  // PNG and WebP store the TIFF data itself; some writers keep JPEG's "Exif\0\0" in front.
  return tiff_orientation(has_exif_prefix(payload) ? payload.subspan(6) : payload);
}

}  // namespace arc::vision::detail
