// Images in chat requests, shared by the OpenAI and Anthropic routes: base64 and data URIs to
// bytes, the image parts moved out of the messages into ChatRequest::images, and the checks
// (vision model loaded, format sniffed from the bytes and matching the declared media type,
// header dimensions within the decode limits) that turn a bad image into a 400 with the reason
// before the request reaches the engine.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "arc/service.h"
#include "arc/status.h"

namespace arc::server {

// Most images one request may carry.
inline constexpr size_t kMaxImagesPerRequest = 32;

// Standard or URL-safe base64; whitespace is skipped and padding may be left off. The error
// names the first bad character's position.
Result<std::vector<uint8_t>> decode_base64(std::string_view text);

// A base64 image with its declared media type. Strict (Anthropic, whose API refuses other types):
// image/png, image/jpeg (or image/jpg), image/webp. Lenient (OpenAI, which sniffs): any image/*;
// the bytes decide. `where` names the request field for error messages.
Result<ImageInput> image_from_base64(std::string_view media_type, std::string_view data,
                                     const std::string& where, bool strict_media_type = true);

// "data:image/png;base64,...." -> the image (lenient media type). Remote http(s) URLs are
// refused (never fetched).
Result<ImageInput> image_from_data_uri(std::string_view uri, const std::string& where);

// The part that stands for the k-th image in ChatRequest::messages.
nlohmann::json image_placeholder_part(size_t index);

// Moves the data URI of every image_url part of OpenAI-shaped `messages` into `images`,
// replacing the part with image_placeholder_part(k).
Status take_images(nlohmann::json& messages, std::vector<ImageInput>& images);

// Before prepare: a request with images needs a model that sees; each image's bytes must be a
// PNG, JPEG or WebP within the decode limits (header only; the engine decodes the pixels) and,
// when strict (Anthropic), match the declared type. Sets each ImageInput::media_type to the
// sniffed format.
Status check_images(const InferenceService& service, ChatRequest& request, bool strict_media_type);

}  // namespace arc::server
