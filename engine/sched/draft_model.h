// `--spec draft:PATH`: a small model with the target's vocabulary drafts the next tokens.
//
// It runs on the target's backend with its own KV pool. Each sequence keeps the tokens whose
// K/V its draft cache holds; a step first catches up with what the target accepted (at most
// catch_up_chunk tokens per step, so a long prompt never stalls the batch: no drafts until it
// has caught up), then decodes k tokens greedily. Greedy drafts are a deterministic function of
// the sequence, so the verification stays exact for greedy and sampled requests alike
// (sched/drafter.h). The draft cache shares prefixes between sequences like the target's.
#pragma once

#include <memory>
#include <string>

#include "arc/backend.h"
#include "arc/forward.h"
#include "arc/kv_cache.h"
#include "arc/model.h"
#include "sched/drafter.h"

namespace arc {

struct DraftModelOptions {
  std::string path;
  int64_t kv_tokens = 4096;  // the draft cache's capacity, all sequences together
  int64_t block_size = 16;
  DType kv_type = DType::F16;
  int64_t catch_up_chunk = 256;  // prompt tokens the draft model reads per step
};

class DraftModelDrafter final : public Drafter {
 public:
  // Loads the draft model onto `backend` (which must outlive this). Refuses a model whose
  // vocabulary differs from the target's (`target_vocab`: tokenizer.ggml.tokens of the target).
  static Result<std::shared_ptr<DraftModelDrafter>> load(const DraftModelOptions& opt,
                                                         Backend& backend,
                                                         const gguf::File& target);
  ~DraftModelDrafter() override;
  std::unique_ptr<SequenceDrafter> start(std::span<const int32_t> prompt) override;

  uint64_t weight_bytes() const { return model_->weight_bytes(); }
  const std::string& name() const { return name_; }

 private:
  class Sequence;
  DraftModelDrafter() = default;

  DraftModelOptions opt_;
  std::string name_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<KvCache> kv_;
  std::unique_ptr<ForwardExecutor> exec_;
};

// Bytes the draft model at `path` needs: its file and the K/V of `kv_tokens` tokens.
Result<uint64_t> draft_model_bytes(const std::string& path, int64_t kv_tokens, DType kv_type);

}  // namespace arc
