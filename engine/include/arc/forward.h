// The forward executor: one step over a flattened batch of tokens from several sequences, K/V
// read and written through the paged cache, logits returned for the requested tokens.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "arc/backend.h"
#include "arc/communicator.h"
#include "arc/kv_cache.h"
#include "arc/model.h"
#include "arc/step_candidates.h"

namespace arc {

struct ForwardBatch {
  std::span<const int32_t> tokens;     // [n_tokens]
  std::span<const int32_t> positions;  // [n_tokens] absolute position in its sequence
  std::span<const int32_t> seq_ids;    // [n_tokens] KvCache sequence id of each token
  // Tokens whose logits to return, as indices into tokens; empty: the last token of each
  // sequence, in order of the sequences' first appearance.
  std::span<const int32_t> logit_rows;

  // Image inputs (families with vision, qwen3vlmoe); all empty for text.
  // Rotary positions per axis t, h, w: [3, n_tokens], axis-major. Empty: `positions` on every
  // axis. The KV cache and causal order always follow `positions`.
  std::span<const int32_t> rope_positions;
  // Embeddings replacing token embeddings: embd_rows[i] is a row of `embd`, or -1 for token i's
  // own embedding. Empty: no replacement.
  std::span<const int32_t> embd_rows;  // [n_tokens]
  // [n_embd_rows, (1 + n_deepstack) * n_embd]: each row the embedding, then the deepstack
  // features added after layers 0 .. n_deepstack - 1 (ModelConfig::n_deepstack).
  std::span<const float> embd;

  // A multi-token-prediction block (Model::load_mtp) pairs each token with a hidden state:
  // [n_tokens, n_embd], the previous model's (or block's) output for the position before the
  // token's. Required there, empty elsewhere.
  std::span<const float> hidden;
};

class ForwardExecutor {
 public:
  ForwardExecutor(const Model& model, Backend& backend, KvCache& kv);
  ~ForwardExecutor();

  // Tensor parallelism: `model` is this rank's shard (arc/shard_plan.h); blocks all-reduce
  // through `comm`, and the output head's vocabulary rows [vocab_begin[r], vocab_begin[r + 1])
  // are all-gathered so every rank returns whole logits. Every rank runs the same batches.
  void set_tensor_parallel(Communicator* comm, std::vector<int64_t> vocab_begin);
  // MLA models: whether prefill chunks may take the plain form where it is cheaper (default
  // true). Tensor-parallel steps always take the absorbed form; on quantized files the two
  // forms round differently, so a one-rank oracle for a TP run turns it off.
  void set_mla_plain(bool allowed);

  // Enqueues one step. The caller must have reserved KV for every position in the batch.
  Status submit(const ForwardBatch& batch);
  // Waits for the step; logits: [n_rows, n_vocab] for the rows chosen by the batch.
  Status wait(std::vector<float>& logits, int64_t& n_rows);
  // submit + wait.
  Result<std::vector<float>> run(const ForwardBatch& batch);

  // ---- Device-side sampling (arc/step_candidates.h) ----
  // Enqueues one step whose logit rows come back as sampling candidates (sampling.rows: one per
  // logit row) rather than whole rows: on a backend with CandidateSelector they are selected where
  // the logits are; on others the rows are downloaded and selected on the host. Not with tensor
  // parallelism (every rank returns whole rows there: use submit()). Empty sampling.rows: nothing
  // comes back (a prefill chunk run for its K/V).
  Status submit(const ForwardBatch& batch, const StepSampling& sampling);
  // Waits for a step submitted with sampling.
  Status wait(StepCandidates& out);
  // Whole raw logit row `row` of the last step (after wait(StepCandidates&), until the next
  // submit): the fallback when the candidates cannot decide a token.
  Status fetch_row(int64_t row, std::vector<float>& out);
  // False when candidates are selected on the host from downloaded rows (no CandidateSelector):
  // every row comes back whole anyway, and a sampler finishing on the whole row is cheaper than
  // a wide candidate selection followed by that.
  bool selects_on_device() const;

  // The last step's final hidden states (the residual stream after the last layer, before the
  // output norm) of batch tokens [first, first + n): [n, n_embd]. Valid after wait() until the
  // next submit. Multi-token-prediction drafting reads the target's here (sched/mtp_drafter.h).
  Status fetch_hidden(int64_t first, int64_t n, std::vector<float>& out);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace arc
