#include "api_images.h"

#include <algorithm>
#include <cctype>

#include "arc/ascii.h"
#include "arc/vision_image.h"

namespace arc::server {

using json = nlohmann::json;

Result<std::vector<uint8_t>> decode_base64(std::string_view text) {
  auto value = [](unsigned char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;
    if (c == '/' || c == '_') return 63;
    return -1;
  };
  std::vector<uint8_t> out;
  out.reserve(text.size() / 4 * 3 + 3);
  uint32_t acc = 0;
  int bits = 0, n_chars = 0, n_pad = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '=') {
      ++n_pad;
      continue;
    }
    const int v = value(c);
    if (v < 0 || n_pad > 0) {
      return invalid_argument(
          "the base64 data has " +
          std::string(v < 0 ? "a character that is not base64" : "data after its '=' padding") +
          " at position " + std::to_string(i));
    }
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    ++n_chars;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<uint8_t>(acc >> bits));
      acc &= (1u << bits) - 1;
    }
  }
  if (n_chars % 4 == 1 || n_pad > 2 || (n_pad > 0 && (n_chars + n_pad) % 4 != 0)) {
    return invalid_argument("the base64 data has a wrong length (" + std::to_string(n_chars) +
                            " characters, " + std::to_string(n_pad) + " '='); it is cut short");
  }
  return out;
}

namespace {

// The canonical media type, or "" when unsupported.
std::string canonical_media_type(std::string_view declared) {
  const std::string mt = ascii_lower(declared);
  if (mt == "image/png") return "image/png";
  if (mt == "image/jpeg" || mt == "image/jpg") return "image/jpeg";
  if (mt == "image/webp") return "image/webp";
  return "";
}

}  // namespace

Result<ImageInput> image_from_base64(std::string_view media_type, std::string_view data,
                                     const std::string& where, bool strict_media_type) {
  ImageInput img;
  img.media_type = canonical_media_type(media_type);
  if (img.media_type.empty()) {
    if (strict_media_type || ascii_lower(media_type).rfind("image/", 0) != 0) {
      return invalid_argument(where + ": media type '" + std::string(media_type) +
                              "' is not supported; send image/png, image/jpeg or image/webp");
    }
    img.media_type = ascii_lower(media_type);  // the bytes decide (check_images)
  }
  auto bytes = decode_base64(data);
  if (!bytes.ok()) return invalid_argument(where + ": " + bytes.status().message());
  if (bytes->empty()) return invalid_argument(where + ": the image data is empty");
  img.bytes = std::move(*bytes);
  return img;
}

Result<ImageInput> image_from_data_uri(std::string_view uri, const std::string& where) {
  const std::string head = ascii_lower(uri.substr(0, std::min<size_t>(uri.size(), 8)));
  if (head.rfind("http://", 0) == 0 || head.rfind("https://", 0) == 0 ||
      head.rfind("data:", 0) != 0) {
    return invalid_argument(where +
                            ": remote image URLs are not fetched; send the image inline as a "
                            "data URI (data:image/png;base64,...)");
  }
  const size_t comma = uri.find(',');
  if (comma == std::string_view::npos) {
    return invalid_argument(where + ": the data URI has no ',' before its data");
  }
  // data:<media type>[;param]*;base64,<data>
  const std::string_view meta = uri.substr(5, comma - 5);
  std::string_view media_type;
  bool base64 = false;
  size_t start = 0;
  for (int field = 0; start <= meta.size(); ++field) {
    const size_t end = std::min(meta.find(';', start), meta.size());
    const std::string_view token = meta.substr(start, end - start);
    if (field == 0) {
      media_type = token;
    } else if (ascii_lower(token) == "base64") {
      base64 = true;
    }
    start = end + 1;
  }
  if (!base64) {
    return invalid_argument(
        where + ": the data URI must be base64 (data:" + std::string(media_type) + ";base64,...)");
  }
  return image_from_base64(media_type, uri.substr(comma + 1), where, /*strict_media_type=*/false);
}

json image_placeholder_part(size_t index) {
  return {{"type", "image_url"}, {"image_url", {{"url", ""}}}, {"arc_image_index", index}};
}

Status take_images(json& messages, std::vector<ImageInput>& images) {
  for (size_t i = 0; i < messages.size(); ++i) {
    json& m = messages[i];
    if (!m.is_object() || !m.contains("content") || !m["content"].is_array()) continue;
    json& parts = m["content"];
    for (size_t p = 0; p < parts.size(); ++p) {
      json& part = parts[p];
      if (!part.is_object() || !part.contains("type") || part["type"] != "image_url") continue;
      const std::string where =
          "messages[" + std::to_string(i) + "].content[" + std::to_string(p) + "]";
      const json* url = nullptr;
      if (part.contains("image_url") && part["image_url"].is_object() &&
          part["image_url"].contains("url")) {
        url = &part["image_url"]["url"];
      }
      if (url == nullptr || !url->is_string()) {
        return invalid_argument(where + ".image_url.url must be a string");
      }
      ARC_ASSIGN_OR_RETURN(ImageInput img,
                           image_from_data_uri(url->get_ref<const std::string&>(), where));
      part = image_placeholder_part(images.size());
      images.push_back(std::move(img));
    }
  }
  return ok_status();
}

Status check_images(const InferenceService& service, ChatRequest& request, bool strict_media_type) {
  if (request.images.empty()) return ok_status();
  if (auto m = service.model(); m && !m->vision) {
    return invalid_argument("the loaded model (" + m->id +
                            ") cannot see images: it has no vision projector (start the engine "
                            "with --mmproj FILE, or load a vision model); remove the image parts "
                            "to ask it about text only");
  }
  if (request.images.size() > kMaxImagesPerRequest) {
    return invalid_argument("the request has " + std::to_string(request.images.size()) +
                            " images; at most " + std::to_string(kMaxImagesPerRequest) +
                            " are accepted per request");
  }
  for (size_t k = 0; k < request.images.size(); ++k) {
    ImageInput& img = request.images[k];
    const std::string which = "image " + std::to_string(k + 1) + " of the request";
    auto info = vision::probe_image(img.bytes);
    if (!info.ok()) return invalid_argument(which + ": " + info.status().message());
    const std::string actual(vision::image_media_type(info->format));
    if (strict_media_type && actual != img.media_type) {
      return invalid_argument(which + " is declared " + img.media_type + " but its data is " +
                              actual + "; send the matching media type");
    }
    img.media_type = actual;
  }
  return ok_status();
}

}  // namespace arc::server
