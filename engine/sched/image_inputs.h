// Images of a request into the language model's inputs: each image is decoded, preprocessed for
// the loaded projector and encoded (or found in a small LRU of encoded images, keyed by the
// image's content hash), and its one <|image_pad|> placeholder in the rendered prompt becomes as
// many placeholders as the encoder returns tokens. The result carries what the forward needs
// (multi-axis rotary positions, embedding rows) and the prefix-cache identity of every token:
// an image's placeholders are keyed by its content hash, so a repeated image reuses its cached
// K/V and a different image in the same place does not.
#pragma once

#include <array>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "arc/model_config.h"
#include "arc/service.h"
#include "arc/status.h"
#include "arc/vision_encoder.h"

namespace arc {

// Content hash of an encoded image file: SHA-256 of its bytes. The prefix cache is shared by all
// clients, so an image's identity must not be forgeable: a weak hash would let a crafted image
// collide with another one and be answered from its cached K/V.
using ImageHash = std::array<uint8_t, 32>;
ImageHash image_content_hash(std::span<const uint8_t> bytes);

// The most recently used encoded images (thread-safe).
class ImageEmbeddingCache {
 public:
  explicit ImageEmbeddingCache(size_t capacity = 16) : capacity_(capacity) {}
  std::shared_ptr<const vision::ImageEmbeddings> find(const ImageHash& hash);
  void put(const ImageHash& hash, std::shared_ptr<const vision::ImageEmbeddings> e);
  uint64_t hits() const;

 private:
  size_t capacity_;
  mutable std::mutex mu_;
  std::list<std::pair<ImageHash, std::shared_ptr<const vision::ImageEmbeddings>>>
      lru_;  // newest first
  uint64_t hits_ = 0;
};

struct ImagePrompt {
  std::vector<int32_t> tokens;          // placeholders expanded
  std::vector<int32_t> rope_positions;  // [3, n_tokens]
  int64_t rope_next = 0;                // rotary position of the first generated token
  std::vector<int32_t> embd_rows;       // [n_tokens]: row of embd, -1 for text tokens
  // [n_rows, (1 + n_deepstack) * n_embd]: each image token's embedding, then its deepstack rows.
  std::shared_ptr<const std::vector<float>> embd;
  std::vector<int32_t> cache_keys;  // [n_tokens]: token ids, image tokens by content hash
  int64_t image_tokens = 0;
  int64_t encoded = 0;  // images encoded now (the rest came from the cache)
};

// `ids` hold one `pad_id` per image, in the order of `images`. Errors (bad image, placeholder
// count, projector and model that do not fit together) are INVALID_ARGUMENT with the reason.
Result<ImagePrompt> expand_image_prompt(std::span<const int32_t> ids, int32_t pad_id,
                                        std::span<const ImageInput> images,
                                        const vision::VisionEncoder& encoder,
                                        ImageEmbeddingCache& cache, const ModelConfig& cfg);

}  // namespace arc
