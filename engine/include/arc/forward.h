// The forward executor: one step over a flattened batch of tokens from several sequences, K/V
// read and written through the paged cache, logits returned for the requested tokens.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "arc/backend.h"
#include "arc/kv_cache.h"
#include "arc/model.h"

namespace arc {

struct ForwardBatch {
  std::span<const int32_t> tokens;     // [n_tokens]
  std::span<const int32_t> positions;  // [n_tokens] absolute position in its sequence
  std::span<const int32_t> seq_ids;    // [n_tokens] KvCache sequence id of each token
  // Tokens whose logits to return, as indices into tokens; empty: the last token of each
  // sequence, in order of the sequences' first appearance.
  std::span<const int32_t> logit_rows;
};

class ForwardExecutor {
 public:
  ForwardExecutor(const Model& model, Backend& backend, KvCache& kv);
  ~ForwardExecutor();

  // Enqueues one step. The caller must have reserved KV for every position in the batch.
  Status submit(const ForwardBatch& batch);
  // Waits for the step; logits: [n_rows, n_vocab] for the rows chosen by the batch.
  Status wait(std::vector<float>& logits, int64_t& n_rows);
  // submit + wait.
  Result<std::vector<float>> run(const ForwardBatch& batch);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace arc
