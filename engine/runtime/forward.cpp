// The forward executor: builds the step's batch description, enqueues embedding, every layer
// (through the family's layer function) and the output head on the backend.
#include "arc/forward.h"

#include <algorithm>
#include <string>

#include "model/arch/families.h"
#include "model/blocks.h"

namespace arc {

struct ForwardExecutor::Impl {
  const Model& model;
  Backend& be;
  KvCache& kv;
  int64_t capacity = 0;  // tokens the activation buffers hold
  int64_t n_out = 0;

  std::vector<std::unique_ptr<DeviceBuffer>> owned;
  StepBuffers buf;
  int32_t* d_tokens = nullptr;
  int32_t* d_pos = nullptr;
  int32_t* d_seq = nullptr;
  int32_t* d_slots = nullptr;
  int32_t* d_rows = nullptr;
  int32_t* d_tables = nullptr;
  int64_t tables_capacity = 0;  // int32 entries of d_tables
  float* d_sel = nullptr;       // [capacity, n_embd] selected rows
  float* d_logits = nullptr;    // [capacity, n_vocab]

  // Host copies kept until wait() (uploads read them asynchronously on a GPU).
  std::vector<int32_t> h_seq, h_slots, h_rows, h_tables;
  std::vector<float> h_logits;

  Impl(const Model& m, Backend& b, KvCache& k) : model(m), be(b), kv(k) {}

  template <typename T>
  Result<T*> make(int64_t count) {
    ARC_ASSIGN_OR_RETURN(auto b,
                         be.alloc(sizeof(T) * static_cast<size_t>(std::max<int64_t>(count, 1))));
    T* p = b->as<T>();
    owned.push_back(std::move(b));
    return p;
  }

  Status ensure(int64_t n_tokens, int64_t n_table) {
    if (n_tokens > capacity) {
      owned.clear();
      tables_capacity = 0;
      const ModelConfig& c = model.config();
      const int64_t n = std::max<int64_t>(n_tokens, 16);
      const int64_t ff = std::max({c.n_ff, c.n_ff_shexp, c.n_ff_exp, int64_t{1}});
      ARC_ASSIGN_OR_RETURN(buf.x, make<float>(n * c.n_embd));
      ARC_ASSIGN_OR_RETURN(buf.xn, make<float>(n * c.n_embd));
      ARC_ASSIGN_OR_RETURN(buf.q, make<float>(n * c.q_dim()));
      ARC_ASSIGN_OR_RETURN(buf.k, make<float>(n * c.kv_dim()));
      ARC_ASSIGN_OR_RETURN(buf.v, make<float>(n * c.kv_dim()));
      ARC_ASSIGN_OR_RETURN(buf.attn, make<float>(n * c.q_dim()));
      ARC_ASSIGN_OR_RETURN(buf.out, make<float>(n * c.n_embd));
      ARC_ASSIGN_OR_RETURN(buf.gate, make<float>(n * ff));
      ARC_ASSIGN_OR_RETURN(buf.up, make<float>(n * ff));
      ARC_ASSIGN_OR_RETURN(buf.router, make<float>(n * std::max<int64_t>(c.n_expert, 1)));
      ARC_ASSIGN_OR_RETURN(buf.expert_ids,
                           make<int32_t>(n * std::max<int64_t>(c.n_expert_used, 1)));
      ARC_ASSIGN_OR_RETURN(buf.expert_w, make<float>(n * std::max<int64_t>(c.n_expert_used, 1)));
      ARC_ASSIGN_OR_RETURN(buf.shexp_gate, make<float>(n));
      ARC_ASSIGN_OR_RETURN(d_tokens, make<int32_t>(n));
      ARC_ASSIGN_OR_RETURN(d_pos, make<int32_t>(n));
      ARC_ASSIGN_OR_RETURN(d_seq, make<int32_t>(n));
      ARC_ASSIGN_OR_RETURN(d_slots, make<int32_t>(n));
      ARC_ASSIGN_OR_RETURN(d_rows, make<int32_t>(n));
      ARC_ASSIGN_OR_RETURN(d_sel, make<float>(n * c.n_embd));
      ARC_ASSIGN_OR_RETURN(d_logits, make<float>(n * c.n_vocab));
      capacity = n;
    }
    if (n_table > tables_capacity) {
      const int64_t n = std::max<int64_t>(n_table, 64) * 2;
      ARC_ASSIGN_OR_RETURN(d_tables, make<int32_t>(n));
      tables_capacity = n;
    }
    return ok_status();
  }

  Status submit(const ForwardBatch& batch) {
    const ModelConfig& c = model.config();
    const int64_t t = static_cast<int64_t>(batch.tokens.size());
    if (t == 0) return invalid_argument("forward: empty batch");
    if (batch.positions.size() != batch.tokens.size() ||
        batch.seq_ids.size() != batch.tokens.size()) {
      return invalid_argument("forward: tokens, positions and seq_ids differ in length");
    }
    // Sequences in order of first appearance; each becomes a row of the block-table matrix.
    std::vector<int32_t> seqs;
    std::vector<int32_t> last;  // last token index of each sequence
    h_seq.resize(static_cast<size_t>(t));
    h_slots.resize(static_cast<size_t>(t));
    for (int64_t i = 0; i < t; ++i) {
      const int32_t tok = batch.tokens[i];
      if (tok < 0 || tok >= c.n_vocab) {
        return invalid_argument("forward: token id " + std::to_string(tok) +
                                " outside the vocabulary of " + std::to_string(c.n_vocab));
      }
      const int32_t s = batch.seq_ids[i];
      const int32_t p = batch.positions[i];
      if (s < 0 || p < 0 || p >= kv.capacity(s)) {
        return invalid_argument("forward: position " + std::to_string(p) + " of sequence " +
                                std::to_string(s) + " has no reserved KV block");
      }
      auto it = std::find(seqs.begin(), seqs.end(), s);
      size_t row = static_cast<size_t>(it - seqs.begin());
      if (it == seqs.end()) {
        seqs.push_back(s);
        last.push_back(0);
      }
      last[row] = static_cast<int32_t>(i);
      h_seq[i] = static_cast<int32_t>(row);
      h_slots[i] = kv.slot(s, p);
    }
    int64_t max_blocks = 1;
    for (int32_t s : seqs) max_blocks = std::max<int64_t>(max_blocks, kv.blocks(s).size());
    h_tables.assign(static_cast<size_t>(max_blocks) * seqs.size(), 0);
    for (size_t r = 0; r < seqs.size(); ++r) {
      const auto& b = kv.blocks(seqs[r]);
      std::copy(b.begin(), b.end(), h_tables.begin() + static_cast<int64_t>(r) * max_blocks);
    }
    if (batch.logit_rows.empty()) {
      h_rows = last;
    } else {
      h_rows.assign(batch.logit_rows.begin(), batch.logit_rows.end());
      for (int32_t r : h_rows) {
        if (r < 0 || r >= t) return invalid_argument("forward: logit row outside the batch");
      }
    }
    n_out = static_cast<int64_t>(h_rows.size());
    ARC_RETURN_IF_ERROR(ensure(t, static_cast<int64_t>(h_tables.size())));

    be.upload(d_tokens, batch.tokens.data(), sizeof(int32_t) * t);
    be.upload(d_pos, batch.positions.data(), sizeof(int32_t) * t);
    be.upload(d_seq, h_seq.data(), sizeof(int32_t) * t);
    be.upload(d_slots, h_slots.data(), sizeof(int32_t) * t);
    be.upload(d_rows, h_rows.data(), sizeof(int32_t) * n_out);
    be.upload(d_tables, h_tables.data(), sizeof(int32_t) * h_tables.size());
    buf.pos = d_pos;
    buf.token_seq = d_seq;
    buf.slots = d_slots;
    buf.block_tables = d_tables;
    buf.max_blocks = max_blocks;

    const Weight& emb = model.global(TensorRole::kTokEmbd);
    be.get_rows(emb.type, emb.data, c.n_vocab, c.n_embd, d_tokens, t, buf.x);
    const arch::FamilyDef& fam = arch::family_def(c.family);
    LayerContext ctx{be, model, kv, buf, t, 0};
    for (int64_t l = 0; l < c.n_layer; ++l) {
      ctx.layer = l;
      fam.layer(ctx);
    }
    // Only the requested rows go through the output head.
    be.gather(buf.x, d_rows, n_out, c.n_embd, d_sel);
    be.rms_norm(d_sel, model.global(TensorRole::kOutputNorm).f32(), d_sel, n_out, c.n_embd,
                c.rms_eps);
    linear(be, model.output(), d_sel, n_out, d_logits);
    h_logits.resize(static_cast<size_t>(n_out * c.n_vocab));
    be.download(h_logits.data(), d_logits, sizeof(float) * h_logits.size());
    return ok_status();
  }
};

ForwardExecutor::ForwardExecutor(const Model& model, Backend& backend, KvCache& kv)
    : impl_(std::make_unique<Impl>(model, backend, kv)) {}
ForwardExecutor::~ForwardExecutor() = default;

Status ForwardExecutor::submit(const ForwardBatch& batch) {
  return impl_->submit(batch);
}

Status ForwardExecutor::wait(std::vector<float>& logits, int64_t& n_rows) {
  ARC_RETURN_IF_ERROR(impl_->be.sync());
  logits.swap(impl_->h_logits);
  n_rows = impl_->n_out;
  return ok_status();
}

Result<std::vector<float>> ForwardExecutor::run(const ForwardBatch& batch) {
  Status s = submit(batch);
  if (!s.ok()) {
    (void)impl_->be.sync();
    return s;
  }
  std::vector<float> logits;
  int64_t n = 0;
  ARC_RETURN_IF_ERROR(wait(logits, n));
  return logits;
}

}  // namespace arc
