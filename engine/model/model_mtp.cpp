// The multi-token-prediction (nextn) block as a one-layer model, so the forward executor runs it
// like any model (sched/mtp_drafter.h). GLM-4.5/4.6 and DeepSeek-V3 append it after the forward
// layers: blk.<n_layer> holds an ordinary MoE layer plus eh_proj, enorm, hnorm and optionally
// embed_tokens, shared_head_norm and shared_head_head.
//
// Under tensor parallelism (`--tp N`) the block runs whole on rank 0, next to the scheduler that
// drafts with it, rather than sharded over the ranks like a target layer. A draft forward is one
// token through one layer: sharded it would cost each rank half the layer's bytes but add a step
// broadcast and two all-reduces per drafted token (the workers block on every one of them),
// whole it costs rank 0 one layer's weights (about 1/n_layer of the model) and, where the file's
// head is not tied, the whole output head (the target's is split by vocabulary), and no message.
// The protocol, the workers and the shard plan stay as they are.
#include <string>

#include "arc/log.h"
#include "arc/model.h"

namespace arc {

Result<std::unique_ptr<Model>> Model::load_mtp(gguf::File file, const Model& target,
                                               Backend& backend) {
  const ModelConfig& tc = target.config();
  if (tc.n_nextn <= 0) {
    return failed_precondition("the model has no multi-token-prediction (nextn) layers");
  }
  std::unique_ptr<Model> m(new Model(std::move(file)));
  // A target split over ranks holds this rank's part: its config counts the rank's heads and
  // FFN widths, its head the rank's vocabulary rows. The block is loaded whole, from the file's
  // config (the head: see below).
  const bool split = target.output().shape.size() == 2 && target.output().shape[1] != tc.n_vocab;
  ModelConfig whole = tc;
  if (split) {
    auto c = config_from_gguf(m->file_);
    if (!c.ok()) return c.status().with_context("the multi-token-prediction layer");
    whole = *c;
  }
  // One MoE layer (the block is never one of the leading dense layers).
  m->cfg_ = whole;
  m->cfg_.n_layer = 1;
  m->cfg_.n_dense_lead = 0;
  m->cfg_.n_nextn = 0;
  m->layers_.resize(1);
  m->globals_ = target.globals_;
  // Weights& of the block, from blk.<n_layer> (the first MTP layer).
  Weights& dst = m->layers_[0];
  Status first;
  // Maps one tensor of the file as the weight `w`.
  auto map = [&](const std::string& name, Weight& w) -> Status {
    const gguf::TensorInfo* t = m->file_.find_tensor(name);
    if (t == nullptr) return not_found("tensor '" + name + "' is missing");
    w.type = t->type;
    w.shape = t->shape;
    w.row_bytes = *dtype_row_bytes(t->type, static_cast<uint64_t>(t->shape[0]));
    w.slice_bytes = w.row_bytes * static_cast<size_t>(t->shape.size() > 1 ? t->shape[1] : 1);
    w.n_bytes = t->n_bytes;
    auto p = backend.map_weights(m->file_.tensor_data(*t));
    if (!p.ok()) return p.status().with_context("mapping " + name);
    w.data = *p;
    m->weight_bytes_ += w.n_bytes;
    return ok_status();
  };
  for_each_mtp_tensor(whole, [&](const TensorRef& ref) {
    if (!first.ok() || ref.layer != whole.n_layer) return;
    const gguf::TensorInfo* t = m->file_.find_tensor(ref.name);
    if (t == nullptr) {
      if (ref.spec->presence != Presence::kNextnOptional) {
        first = not_found("tensor '" + ref.name + "' is missing");
      }
      return;
    }
    if (t->shape != ref.shape) {
      first = invalid_argument("tensor '" + ref.name + "' does not have the target's shape");
      return;
    }
    Weight w;
    first = map(ref.name, w);
    if (first.ok()) dst[static_cast<size_t>(ref.spec->role)] = std::move(w);
  });
  if (!first.ok()) return first.with_context("the multi-token-prediction layer");
  // The head: the block's own where it has one, else the target's (output.weight, or token_embd
  // when tied: Model::output() would otherwise pick up the block's embed_tokens).
  auto own = [&](TensorRole r) { return dst[static_cast<size_t>(r)]; };
  m->globals_[static_cast<size_t>(TensorRole::kOutput)] = target.output();
  if (split && !own(TensorRole::kNextnSharedHeadHead).present()) {
    // The target's head is this rank's vocabulary rows: the whole one (token_embd is whole on
    // every rank).
    Weight& out = m->globals_[static_cast<size_t>(TensorRole::kOutput)];
    if (tc.tied_embeddings) {
      out = target.global(TensorRole::kTokEmbd);
    } else if (Status s = map("output.weight", out); !s.ok()) {
      return s.with_context("the multi-token-prediction layer's head");
    }
  }
  if (own(TensorRole::kNextnSharedHeadHead).present()) {
    m->globals_[static_cast<size_t>(TensorRole::kOutput)] = own(TensorRole::kNextnSharedHeadHead);
  }
  if (own(TensorRole::kNextnSharedHeadNorm).present()) {
    m->globals_[static_cast<size_t>(TensorRole::kOutputNorm)] =
        own(TensorRole::kNextnSharedHeadNorm);
  }
  if (own(TensorRole::kNextnEmbedTokens).present()) {
    m->globals_[static_cast<size_t>(TensorRole::kTokEmbd)] = own(TensorRole::kNextnEmbedTokens);
  }
  m->cfg_.tied_embeddings = false;  // the head is set explicitly above
  logger("model")->info("multi-token-prediction layer {} loaded ({:.1f} MiB of its own weights)",
                        whole.n_layer, static_cast<double>(m->weight_bytes_) / (1 << 20));
  return m;
}

}  // namespace arc
