// Per-format decoders behind decode_image/probe_image, and helpers they share. Each decoder
// checks the header against the limits before allocating pixels and returns INVALID_ARGUMENT on
// any malformed, truncated or oversized input.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "arc/vision_image.h"

namespace arc::vision::detail {

// Refuses zero sizes and sizes over the limits; `what` names the format ("PNG").
Status check_dimensions(int64_t width, int64_t height, const DecodeLimits& limits,
                        std::string_view what);

// Composites [n, 4] RGBA8 over white into [n, 3] RGB8 (dst may not alias src).
void flatten_rgba_on_white(const uint8_t* rgba, uint8_t* rgb, size_t n_pixels);

Result<ImageInfo> probe_png(std::span<const uint8_t> bytes, const DecodeLimits& limits);
Result<ImageInfo> probe_jpeg(std::span<const uint8_t> bytes, const DecodeLimits& limits);
Result<ImageInfo> probe_webp(std::span<const uint8_t> bytes, const DecodeLimits& limits);

Result<Image> decode_png(std::span<const uint8_t> bytes, const DecodeLimits& limits);
Result<Image> decode_jpeg(std::span<const uint8_t> bytes, const DecodeLimits& limits);
Result<Image> decode_webp(std::span<const uint8_t> bytes, const DecodeLimits& limits);

// EXIF orientation (1..8) from an APP1 payload that starts with "Exif\0\0"; 1 when the payload
// is not EXIF, has no orientation tag or is malformed (a bad tag never fails the decode).
int exif_orientation(std::span<const uint8_t> app1);
// The same from a PNG eXIf / WebP EXIF chunk payload (TIFF data, with or without "Exif\0\0").
int exif_payload_orientation(std::span<const uint8_t> payload);

// Rotates/mirrors `image` so that it is upright for EXIF orientation 2..8 (1: unchanged).
void apply_orientation(Image& image, int orientation);

}  // namespace arc::vision::detail
