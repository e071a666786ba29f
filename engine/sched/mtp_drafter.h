// `--spec mtp`: the model's own multi-token-prediction (nextn) block drafts the next tokens.
//
// GLM-4.5/4.6 and DeepSeek-V3 files append one transformer block trained to predict a token two
// ahead (DeepSeek-V3 report, section 2.2): for position p it takes the target's final hidden state
// h_p (before the output norm) and the embedding of token p + 1,
//
//   x_p = eh_proj([enorm(embed(t_{p+1})); hnorm(h_p)])      // [2 n_embd] -> [n_embd]
//   g_p = block(x_p)                                        // attention over x_0 .. x_p, MoE
//   logits_p = head(shared_head_norm(g_p))                  // the distribution of t_{p+2}
//
// with its own K/V per position. Drafting chains it: the pair at position p + 1 is (g_p, the
// drafted t_{p+2}), as vLLM's MTP proposer does (the block's output before the head's norm
// stands in for the target's hidden state). Drafts are greedy, so verification stays exact for
// greedy and sampled requests alike (sched/drafter.h).
//
// Each sequence's block entry p needs h_p: the scheduler hands the drafter the target's hidden
// states of every confirmed position (SequenceDrafter::observe_hidden). Entries computed from
// them are kept; the ones a chain writes past them (from the block's own g) are stale and written
// again when the target's arrive, so rejection rolls back by position like the target's KV.
// The block's K/V lives in its own paged pool with prefix reuse: entry p depends on tokens
// 0 .. p + 1, so its blocks are indexed by the tokens shifted by one, on a hash chain rooted in
// token 0. The target reuses no longer a cached prefix than the block's cache holds
// (SequenceDrafter::reusable_prefix), so the hidden states the block needs always arrive; when
// the block's pool is full a sequence stops drafting (its output is unchanged).
#pragma once

#include <memory>

#include "arc/backend.h"
#include "arc/forward.h"
#include "arc/kv_cache.h"
#include "arc/model.h"
#include "sched/drafter.h"

namespace arc {

struct MtpOptions {
  int64_t kv_tokens = 4096;  // the block's cache, all sequences together
  int64_t block_size = 16;
  DType kv_type = DType::F16;
};

class MtpDrafter final : public Drafter {
 public:
  // Loads the first nextn block of `target` (whose file is `file`, opened again) onto `backend`;
  // both must outlive the drafter.
  static Result<std::shared_ptr<MtpDrafter>> load(gguf::File file, const Model& target,
                                                  Backend& backend, const MtpOptions& opt);
  ~MtpDrafter() override;
  std::unique_ptr<SequenceDrafter> start(std::span<const int32_t> prompt) override;

  const Model& block() const { return *block_; }
  uint64_t weight_bytes() const { return block_->weight_bytes(); }

 private:
  class Sequence;
  MtpDrafter() = default;

  MtpOptions opt_;
  std::unique_ptr<Model> block_;
  std::unique_ptr<KvCache> kv_;
  std::unique_ptr<ForwardExecutor> exec_;
};

// Bytes the block needs beyond the target: its layer's weights and a K/V pool of `kv_tokens`.
uint64_t mtp_bytes(const gguf::File& file, const ModelConfig& target, int64_t kv_tokens,
                   DType kv_type);

}  // namespace arc
