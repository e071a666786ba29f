// Images of a request into the language model's inputs (see image_inputs.h).
#include "sched/image_inputs.h"

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "arc/ascii.h"
#include "arc/log.h"
#include "arc/mrope.h"
#include "arc/vision_image.h"

#include <openssl/sha.h>

namespace arc {

ImageHash image_content_hash(std::span<const uint8_t> bytes) {
  ImageHash h{};
  SHA256(bytes.data(), bytes.size(), h.data());
  return h;
}

std::shared_ptr<const vision::ImageEmbeddings> ImageEmbeddingCache::find(const ImageHash& hash) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = lru_.begin(); it != lru_.end(); ++it) {
    if (it->first == hash) {
      lru_.splice(lru_.begin(), lru_, it);
      ++hits_;
      return lru_.front().second;
    }
  }
  return nullptr;
}

void ImageEmbeddingCache::put(const ImageHash& hash,
                              std::shared_ptr<const vision::ImageEmbeddings> e) {
  std::lock_guard<std::mutex> lock(mu_);
  std::erase_if(lru_, [&](const auto& x) { return x.first == hash; });
  lru_.emplace_front(hash, std::move(e));
  while (lru_.size() > capacity_) lru_.pop_back();
}

uint64_t ImageEmbeddingCache::hits() const {
  std::lock_guard<std::mutex> lock(mu_);
  return hits_;
}

namespace {

// Prefix-cache key of the k-th token of an image: negative (never a real token id), 31 bits of
// the content hash taken in turn, so any 8 consecutive image tokens (a KV block holds 16) carry
// 248 of its 256 bits, and the token's index within the image.
int32_t image_key(const ImageHash& hash, int64_t k) {
  const size_t w = static_cast<size_t>(k % 8) * 4;
  uint32_t x = static_cast<uint32_t>(hash[w]) | static_cast<uint32_t>(hash[w + 1]) << 8 |
               static_cast<uint32_t>(hash[w + 2]) << 16 | static_cast<uint32_t>(hash[w + 3]) << 24;
  x ^= static_cast<uint32_t>(k / 8) * 0x9E3779B9u;
  return static_cast<int32_t>(0x80000000u | (x & 0x7FFFFFFFu));
}

}  // namespace

Result<ImagePrompt> expand_image_prompt(std::span<const int32_t> ids, int32_t pad_id,
                                        std::span<const ImageInput> images,
                                        const vision::VisionEncoder& encoder,
                                        ImageEmbeddingCache& cache, const ModelConfig& cfg) {
  const vision::VisionConfig& vc = encoder.config();
  if (vc.proj_dim != cfg.n_embd) {
    return invalid_argument("the vision projector outputs " + std::to_string(vc.proj_dim) +
                            " values per token but the model's hidden size is " +
                            std::to_string(cfg.n_embd) + "; load the mmproj made for this model");
  }
  if (vc.n_deepstack() != cfg.n_deepstack) {
    return invalid_argument("the vision projector has " + std::to_string(vc.n_deepstack()) +
                            " deepstack layers but the model takes " +
                            std::to_string(cfg.n_deepstack) +
                            "; load the mmproj made for this model");
  }
  const int64_t n_pads = std::count(ids.begin(), ids.end(), pad_id);
  if (n_pads != static_cast<int64_t>(images.size())) {
    return invalid_argument("the rendered prompt has " + std::to_string(n_pads) +
                            " image placeholders for " + std::to_string(images.size()) +
                            " images; the model's chat template does not place images (or the "
                            "text contains <|image_pad|>)");
  }
  // Encode (or find) every image first.
  std::vector<std::shared_ptr<const vision::ImageEmbeddings>> emb;
  std::vector<ImageHash> hashes;
  ImagePrompt out;
  for (size_t k = 0; k < images.size(); ++k) {
    const ImageHash h = image_content_hash(images[k].bytes);
    auto e = cache.find(h);
    if (!e) {
      auto img = vision::decode_image(images[k].bytes);
      if (!img.ok()) return img.status().with_context("image " + std::to_string(k + 1));
      auto grid = vision::preprocess(*img, encoder.preprocess_config());
      if (!grid.ok()) return grid.status().with_context("image " + std::to_string(k + 1));
      const auto t0 = std::chrono::steady_clock::now();
      auto enc = encoder.encode(*grid);
      if (!enc.ok()) return enc.status().with_context("image " + std::to_string(k + 1));
      logger("vision")->info(
          "encoded a {}x{} image: {}x{} patches, {} tokens in {:.1f} ms", img->width, img->height,
          grid->w, grid->h, enc->n_tokens,
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      e = std::make_shared<const vision::ImageEmbeddings>(std::move(*enc));
      cache.put(h, e);
      out.encoded++;
    }
    emb.push_back(std::move(e));
    hashes.push_back(h);
  }
  const int64_t e = cfg.n_embd, stride = (1 + cfg.n_deepstack) * e;
  auto rows = std::make_shared<std::vector<float>>();
  std::vector<ImageSpan> spans;
  size_t next_image = 0;
  for (int32_t id : ids) {
    if (id != pad_id) {
      out.tokens.push_back(id);
      out.embd_rows.push_back(-1);
      out.cache_keys.push_back(id);
      continue;
    }
    const vision::ImageEmbeddings& im = *emb[next_image];
    spans.push_back({static_cast<int64_t>(out.tokens.size()), im.grid_t, im.grid_h, im.grid_w});
    for (int64_t k = 0; k < im.n_tokens; ++k) {
      out.tokens.push_back(pad_id);
      out.embd_rows.push_back(static_cast<int32_t>(rows->size() / stride));
      out.cache_keys.push_back(image_key(hashes[next_image], k));
      const float* m = im.main.data() + k * e;
      rows->insert(rows->end(), m, m + e);
      for (const auto& ds : im.deepstack)
        rows->insert(rows->end(), ds.data() + k * e, ds.data() + (k + 1) * e);
    }
    out.image_tokens += im.n_tokens;
    ++next_image;
  }
  RopePositions rp = mrope_positions(static_cast<int64_t>(out.tokens.size()), spans);
  out.rope_positions = std::move(rp.pos);
  out.rope_next = rp.next;
  out.embd = std::move(rows);
  return out;
}

}  // namespace arc
