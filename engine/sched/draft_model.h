// `--spec draft:PATH`: a small model with the target's vocabulary drafts the next tokens.
//
// It runs on the target's backend with its own KV pool. Each sequence keeps the tokens whose
// K/V its draft cache holds; a step first catches up with what the target accepted (at most
// catch_up_chunk tokens per step, so a long prompt never stalls the batch: no drafts until it
// has caught up), then decodes k tokens greedily. The step's sequences run together, batched
// like the target's: one forward holds every sequence's catch-up (and gives each drafting
// sequence's first draft), then one forward per further draft position holds each sequence's
// latest draft, so N sequences drafting k tokens cost k forwards, not N * k. Greedy drafts are a
// deterministic function of the sequence, so the verification stays exact for greedy and sampled
// requests alike (sched/drafter.h). The draft cache shares prefixes between sequences like the
// target's.
#pragma once

#include <memory>
#include <optional>
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
  // Tokens of a step's first draft forward, all sequences together (the catch-ups).
  int64_t max_batch_tokens = 1024;
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
  void propose_all(std::span<const DraftRequest> reqs) override;

  // Forwards the draft model ran (tests: batching).
  uint64_t forwards() const { return forwards_; }
  uint64_t weight_bytes() const { return model_->weight_bytes(); }
  const std::string& name() const { return name_; }

 private:
  class Sequence;
  DraftModelDrafter() = default;
  // Runs toks_ / pos_ / seqs_ with logits of rows_; nullopt (logged) when the forward fails.
  std::optional<std::vector<float>> run();

  DraftModelOptions opt_;
  std::string name_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<KvCache> kv_;
  std::unique_ptr<ForwardExecutor> exec_;
  uint64_t forwards_ = 0;
  std::vector<int32_t> toks_, pos_, seqs_, rows_;  // the batch being built
};

// Bytes the draft model at `path` needs: its file and the K/V of `kv_tokens` tokens.
Result<uint64_t> draft_model_bytes(const std::string& path, int64_t kv_tokens, DType kv_type);

}  // namespace arc
