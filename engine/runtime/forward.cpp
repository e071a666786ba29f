// The forward executor: builds the step's batch description, enqueues embedding, every layer
// (through the family's layer function) and the output head on the backend.
#include "arc/forward.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <string>
#include <vector>

#include "arc/backend_caps.h"
#include "model/arch/families.h"
#include "model/blocks.h"

namespace arc {

namespace {

// Decode steps of up to this many sequences are recorded as graphs (backends with StepGraphs).
constexpr int64_t kMaxGraphBatch = 64;
// So are verify steps: each sequence's last token and up to 4 drafts (k + 1 = 2 .. 5).
constexpr int64_t kMaxGraphTokensPerSeq = 5;

int64_t bucket(int64_t n) {
  return static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(std::max<int64_t>(n, 1))));
}

uint64_t mix(uint64_t x) {  // splitmix64 finaliser
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

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
  int32_t* d_wslots = nullptr;  // [capacity] slots in the windowed pool (kv.window())
  int32_t* d_rows = nullptr;
  int32_t* d_tables = nullptr;
  int64_t tables_capacity = 0;  // int32 entries of d_tables
  float* d_sel = nullptr;       // [capacity, n_embd] selected rows
  float* d_logits = nullptr;    // [capacity, n_vocab]
  MlaPlainPlan mla_plain;       // MLA models: the plain form's step plan and buffers
  bool mla_plain_allowed = true;
  int64_t last_t = 0;  // tokens of the last step (fetch_hidden)
  // Hybrid models: each token's recurrent state slot and snapshot slot (arc/recurrent_state.h).
  int32_t* d_state = nullptr;
  int32_t* d_snap = nullptr;
  std::vector<int32_t> h_state, h_snap, h_even, h_odd;

  // A multi-token-prediction block (Model::load_mtp): its input is eh_proj([enorm(embedding);
  // hnorm(hidden)]) rather than the embedding.
  bool mtp = false;
  float* d_hidden = nullptr;     // [capacity, n_embd] the paired hidden states
  float* d_pair = nullptr;       // [2 * capacity, n_embd] normalised embeddings, then hidden states
  float* d_cat2 = nullptr;       // [capacity, 2 * n_embd] their concatenation per token
  int32_t* d_cat_idx = nullptr;  // [2 * capacity] rows of d_pair in concatenation order
  std::vector<int32_t> h_cat_idx;

  // Image inputs, allocated on the first batch that has them.
  std::vector<std::unique_ptr<DeviceBuffer>> mm_owned;
  int64_t mm_capacity = 0;
  float* d_cat = nullptr;            // [2 * mm_capacity, n_embd] token rows, then image rows
  int32_t* d_mix = nullptr;          // [mm_capacity] row of d_cat for each token
  float* d_ds = nullptr;             // [n_deepstack, mm_capacity, n_embd]
  int32_t* d_mrope = nullptr;        // [3, mm_capacity]
  float* d_mrope_factors = nullptr;  // [3, rot_dim / 2]
  std::vector<float> h_img, h_ds, h_factors;
  std::vector<int32_t> h_mix;

  // Host copies kept until wait() (uploads read them asynchronously on a GPU).
  std::vector<int32_t> h_tok, h_pos, h_seq, h_slots, h_wslots, h_rows, h_tables;
  std::vector<float> h_logits;
  Communicator* tp = nullptr;
  std::vector<int64_t> vocab_begin;  // [n_ranks + 1] with tensor parallelism
  std::vector<float> h_part;         // this rank's logits [n_out, vocab slice]
  std::vector<float> h_all;          // every rank's, rank after rank [n_out * n_vocab]
  float* d_all = nullptr;            // the same on the device (collectives on the stream)
  Status tp_status;

  // Graph replay (CUDA): decode steps padded to a batch bucket, recorded once per (batch bucket,
  // logit-row bucket, block-table width bucket) and replayed. Null on backends without graphs.
  StepGraphs* graphs = nullptr;

  // Device-side sampling (submit with StepSampling): candidates selected by the backend when it
  // is a CandidateSelector, else on the host from downloaded rows.
  CandidateSelector* selector = nullptr;
  bool sampled_step = false;  // the last submit had StepSampling
  std::vector<std::unique_ptr<DeviceBuffer>> cand_owned;
  int64_t cand_rows_cap = 0, cand_k_cap = 0, cand_pen_cap = 0, cand_work_rows = 0;
  kernels::CandidateRow* d_crow = nullptr;  // [cand_rows_cap]
  int32_t* d_pen_tok = nullptr;             // [cand_pen_cap]
  int32_t* d_pen_cnt = nullptr;             // [cand_pen_cap]
  int32_t* d_cids = nullptr;                // [cand_rows_cap, cand_k_cap]
  float* d_cvals = nullptr;                 // [cand_rows_cap, cand_k_cap]
  double* d_cstats = nullptr;               // [cand_rows_cap, 3]
  float* d_work = nullptr;                  // [cand_work_rows, n_vocab] penalised rows
  // Host side of the sampled step, kept until wait() (uploads and downloads are asynchronous).
  std::vector<kernels::CandidateRow> h_crow;
  std::vector<int32_t> h_pen_tok, h_pen_cnt;
  StepCandidates h_cand;

  Impl(const Model& m, Backend& b, KvCache& k)
      : model(m),
        be(b),
        kv(k),
        graphs(dynamic_cast<StepGraphs*>(&b)),
        selector(dynamic_cast<CandidateSelector*>(&b)) {
    mtp = m.config().n_layer == 1 && m.layer(0, TensorRole::kNextnEhProj).present();
  }
  ~Impl() {
    // Recorded graphs point into buffers this executor is about to free.
    if (graphs != nullptr) graphs->clear_graphs();
  }

  template <typename T>
  Result<T*> make(int64_t count) {
    ARC_ASSIGN_OR_RETURN(auto b,
                         be.alloc(sizeof(T) * static_cast<size_t>(std::max<int64_t>(count, 1))));
    T* p = b->as<T>();
    owned.push_back(std::move(b));
    return p;
  }

  Status ensure(int64_t n_tokens, int64_t n_table) {
    if ((n_tokens > capacity || n_table > tables_capacity) && graphs != nullptr) {
      graphs->clear_graphs();  // they point at the buffers reallocated below
    }
    if (n_tokens > capacity) {
      owned.clear();
      tables_capacity = 0;
      const ModelConfig& c = model.config();
      // With graphs, room for the largest graph bucket at once, so growing batches do not
      // reallocate (and invalidate every recorded graph) step after step.
      const int64_t n = std::max<int64_t>(n_tokens, graphs != nullptr ? kMaxGraphBatch : 16);
      const int64_t ff = std::max({c.n_ff, c.n_ff_shexp, c.n_ff_exp, int64_t{1}});
      ARC_ASSIGN_OR_RETURN(buf.x, make<float>(n * c.n_embd));
      ARC_ASSIGN_OR_RETURN(buf.xn, make<float>(n * c.n_embd));
      ARC_ASSIGN_OR_RETURN(buf.q, make<float>(n * c.q_dim()));
      ARC_ASSIGN_OR_RETURN(buf.k, make<float>(n * c.kv_dim()));
      ARC_ASSIGN_OR_RETURN(buf.v, make<float>(n * c.kv_dim()));
      ARC_ASSIGN_OR_RETURN(buf.attn, make<float>(n * std::max(c.q_dim(), c.n_head * c.v_head_dim)));
      if (c.mla()) {
        ARC_ASSIGN_OR_RETURN(buf.q_a, make<float>(n * c.q_lora_rank));
        ARC_ASSIGN_OR_RETURN(buf.lat, make<float>(n * c.kv_lora_rank));
        ARC_ASSIGN_OR_RETURN(buf.kpe, make<float>(n * c.rot_dim));
        ARC_ASSIGN_OR_RETURN(buf.q_lat, make<float>(n * c.n_head * c.kv_lora_rank));
        ARC_ASSIGN_OR_RETURN(buf.o_lat, make<float>(n * c.n_head * c.kv_lora_rank));
      }
      if (c.hybrid()) {
        const int64_t ch = c.ssm_conv_channels(), inner = c.ssm_inner();
        ARC_ASSIGN_OR_RETURN(buf.q_gated, make<float>(n * 2 * c.q_dim()));
        ARC_ASSIGN_OR_RETURN(buf.ssm_mix, make<float>(n * ch));
        ARC_ASSIGN_OR_RETURN(buf.ssm_conv, make<float>(n * ch));
        ARC_ASSIGN_OR_RETURN(buf.ssm_z, make<float>(n * inner));
        ARC_ASSIGN_OR_RETURN(buf.ssm_ba, make<float>(n * 2 * c.ssm_v_heads));
        ARC_ASSIGN_OR_RETURN(buf.ssm_ab, make<float>(n * 2 * c.ssm_v_heads));
        ARC_ASSIGN_OR_RETURN(buf.ssm_o, make<float>(n * inner));
        ARC_ASSIGN_OR_RETURN(d_state, make<int32_t>(n));
        ARC_ASSIGN_OR_RETURN(d_snap, make<int32_t>(n));
        // Row indices that split interleaved pairs of rows (q / gate, beta / alpha).
        const int64_t m = n * std::max(c.n_head, c.ssm_k_heads);
        h_even.resize(static_cast<size_t>(m));
        h_odd.resize(static_cast<size_t>(m));
        for (int64_t i = 0; i < m; ++i) {
          h_even[i] = static_cast<int32_t>(2 * i);
          h_odd[i] = static_cast<int32_t>(2 * i + 1);
        }
        ARC_ASSIGN_OR_RETURN(int32_t * even, make<int32_t>(m));
        ARC_ASSIGN_OR_RETURN(int32_t * odd, make<int32_t>(m));
        be.upload(even, h_even.data(), sizeof(int32_t) * h_even.size());
        be.upload(odd, h_odd.data(), sizeof(int32_t) * h_odd.size());
        buf.even_rows = even;
        buf.odd_rows = odd;
      }
      ARC_ASSIGN_OR_RETURN(buf.out, make<float>(n * c.n_embd));
      ARC_ASSIGN_OR_RETURN(buf.gate, make<float>(n * ff));
      ARC_ASSIGN_OR_RETURN(buf.up, make<float>(n * ff));
      ARC_ASSIGN_OR_RETURN(buf.router, make<float>(n * std::max<int64_t>(c.n_expert, 1)));
      ARC_ASSIGN_OR_RETURN(buf.expert_ids,
                           make<int32_t>(n * std::max<int64_t>(c.n_expert_used, 1)));
      ARC_ASSIGN_OR_RETURN(buf.expert_w, make<float>(n * std::max<int64_t>(c.n_expert_used, 1)));
      ARC_ASSIGN_OR_RETURN(buf.shexp_gate, make<float>(n));
      ARC_ASSIGN_OR_RETURN(buf.sumsq, make<float>(2 * n));
      if (tp) {
        ARC_ASSIGN_OR_RETURN(buf.partial, make<float>(n * c.n_embd));
      }
      buf.zeros = nullptr;
      const bool has_dense = c.ffn == FfnKind::kDense || c.n_dense_lead > 0;
      const bool none = (has_dense && c.n_ff == 0) || (c.is_moe() && c.n_ff_exp == 0) ||
                        (c.ffn == FfnKind::kMoeShared && c.n_ff_shexp == 0);
      if (tp && none) {
        ARC_ASSIGN_OR_RETURN(buf.zeros, make<float>(n * c.n_embd));
        const std::vector<float> z(static_cast<size_t>(n * c.n_embd), 0.0f);
        be.upload(buf.zeros, z.data(), sizeof(float) * z.size());
        ARC_RETURN_IF_ERROR(be.sync());
      }
      d_all = nullptr;
      if (tp && tp->on_stream()) {
        ARC_ASSIGN_OR_RETURN(d_all, make<float>(n * c.n_vocab));
      }
      ARC_ASSIGN_OR_RETURN(d_tokens, make<int32_t>(n));
      ARC_ASSIGN_OR_RETURN(d_pos, make<int32_t>(n));
      ARC_ASSIGN_OR_RETURN(d_seq, make<int32_t>(n));
      ARC_ASSIGN_OR_RETURN(d_slots, make<int32_t>(n));
      ARC_ASSIGN_OR_RETURN(d_wslots, make<int32_t>(n));
      ARC_ASSIGN_OR_RETURN(d_rows, make<int32_t>(n));
      ARC_ASSIGN_OR_RETURN(d_sel, make<float>(n * c.n_embd));
      ARC_ASSIGN_OR_RETURN(d_logits, make<float>(n * c.n_vocab));
      if (mtp) {
        ARC_ASSIGN_OR_RETURN(d_hidden, make<float>(n * c.n_embd));
        ARC_ASSIGN_OR_RETURN(d_pair, make<float>(2 * n * c.n_embd));
        ARC_ASSIGN_OR_RETURN(d_cat2, make<float>(2 * n * c.n_embd));
        ARC_ASSIGN_OR_RETURN(d_cat_idx, make<int32_t>(2 * n));
      }
      capacity = n;
      ARC_RETURN_IF_ERROR(mla_plain.ensure(model, be, n));
    }
    if (n_table > tables_capacity) {
      const int64_t n = std::max<int64_t>(n_table, 64) * 2;
      ARC_ASSIGN_OR_RETURN(d_tables, make<int32_t>(n));
      tables_capacity = n;
    }
    return ok_status();
  }

  Result<float*> make_mm(int64_t count) {
    ARC_ASSIGN_OR_RETURN(
        auto b, be.alloc(sizeof(float) * static_cast<size_t>(std::max<int64_t>(count, 1))));
    float* p = b->as<float>();
    mm_owned.push_back(std::move(b));
    return p;
  }

  Status ensure_mm(int64_t n_tokens) {
    if (n_tokens <= mm_capacity) return ok_status();
    const ModelConfig& c = model.config();
    mm_owned.clear();
    const int64_t n = std::max<int64_t>(n_tokens, 16);
    ARC_ASSIGN_OR_RETURN(d_cat, make_mm(2 * n * c.n_embd));
    ARC_ASSIGN_OR_RETURN(float* mix, make_mm(n));
    d_mix = reinterpret_cast<int32_t*>(mix);
    ARC_ASSIGN_OR_RETURN(d_ds, make_mm(std::max<int64_t>(c.n_deepstack, 1) * n * c.n_embd));
    ARC_ASSIGN_OR_RETURN(float* mp, make_mm(3 * n));
    d_mrope = reinterpret_cast<int32_t*>(mp);
    const int64_t half = (c.rot_dim > 0 ? c.rot_dim : c.head_dim) / 2;
    ARC_ASSIGN_OR_RETURN(d_mrope_factors, make_mm(3 * half));
    // Pair i belongs to h when i % 3 == 1 and i < 3 * sections[1], to w when i % 3 == 2 and
    // i < 3 * sections[2], else to t (the transformers definition of interleaved MRoPE).
    h_factors.assign(static_cast<size_t>(3 * half), std::numeric_limits<float>::infinity());
    for (int64_t i = 0; i < half; ++i) {
      int axis = 0;
      if (i % 3 == 1 && i < 3 * c.rope_sections[1]) axis = 1;
      if (i % 3 == 2 && i < 3 * c.rope_sections[2]) axis = 2;
      h_factors[axis * half + i] = 1.0f;
    }
    be.upload(d_mrope_factors, h_factors.data(), sizeof(float) * h_factors.size());
    mm_capacity = n;
    return ok_status();
  }

  // Validates the batch's image inputs; true when it has any.
  Result<bool> check_mm(const ForwardBatch& batch, int64_t t) const {
    const ModelConfig& c = model.config();
    const bool any = !batch.rope_positions.empty() || !batch.embd_rows.empty();
    if (!any) return false;
    if (!batch.rope_positions.empty()) {
      if (!c.mrope()) {
        return invalid_argument("forward: this model has no multi-axis rotary positions");
      }
      if (static_cast<int64_t>(batch.rope_positions.size()) != 3 * t) {
        return invalid_argument("forward: rope_positions must hold 3 positions per token");
      }
    }
    if (!batch.embd_rows.empty()) {
      const int64_t stride = (1 + c.n_deepstack) * c.n_embd;
      if (static_cast<int64_t>(batch.embd_rows.size()) != t ||
          static_cast<int64_t>(batch.embd.size()) % stride != 0) {
        return invalid_argument("forward: embd_rows must cover the batch and embd hold rows of " +
                                std::to_string(stride) + " values");
      }
      const int64_t n_rows = static_cast<int64_t>(batch.embd.size()) / stride;
      for (int32_t r : batch.embd_rows) {
        if (r < -1 || r >= n_rows) return invalid_argument("forward: embd row out of range");
      }
    }
    return true;
  }

  // Token embeddings with image rows swapped in (through d_cat and a gather), deepstack rows
  // and multi-axis positions uploaded.
  void embed_mm(const ForwardBatch& batch, int64_t t) {
    const ModelConfig& c = model.config();
    const Weight& emb = model.global(TensorRole::kTokEmbd);
    const int64_t e = c.n_embd;
    buf.mrope_pos = nullptr;
    buf.deepstack = nullptr;
    if (!batch.rope_positions.empty()) {
      be.upload(d_mrope, batch.rope_positions.data(), sizeof(int32_t) * 3 * t);
      buf.mrope_pos = d_mrope;
      buf.mrope_factors = d_mrope_factors;
    }
    bool has_rows = false;
    for (int32_t r : batch.embd_rows) has_rows = has_rows || r >= 0;
    if (!has_rows) {
      be.get_rows(emb.type, emb.data, c.n_vocab, e, d_tokens, t, buf.x);
      return;
    }
    const int64_t stride = (1 + c.n_deepstack) * e;
    h_img.clear();
    h_mix.resize(static_cast<size_t>(t));
    h_ds.assign(static_cast<size_t>(c.n_deepstack * t * e), 0.0f);
    int64_t m = 0;
    for (int64_t i = 0; i < t; ++i) {
      const int32_t r = batch.embd_rows[i];
      if (r < 0) {
        h_mix[i] = static_cast<int32_t>(i);
        continue;
      }
      const float* row = batch.embd.data() + r * stride;
      h_img.insert(h_img.end(), row, row + e);
      for (int64_t k = 0; k < c.n_deepstack; ++k) {
        std::copy(row + (1 + k) * e, row + (2 + k) * e, h_ds.begin() + (k * t + i) * e);
      }
      h_mix[i] = static_cast<int32_t>(t + m++);
    }
    be.get_rows(emb.type, emb.data, c.n_vocab, e, d_tokens, t, d_cat);
    be.upload(d_cat + t * e, h_img.data(), sizeof(float) * h_img.size());
    be.upload(d_mix, h_mix.data(), sizeof(int32_t) * t);
    be.gather(d_cat, d_mix, t, e, buf.x);
    if (c.n_deepstack > 0) {
      be.upload(d_ds, h_ds.data(), sizeof(float) * h_ds.size());
      buf.deepstack = d_ds;
    }
  }

  // h_tables: each sequence's block table as a row of `width` entries (unused ones 0), `rows`
  // rows (>= seqs; a recorded graph fixes where the second matrix starts), then, with a windowed
  // pool, the same rows of its windowed tables (released entries 0: the kernels never read
  // them, they lie behind every query's window).
  void fill_tables(const std::vector<int32_t>& seqs, int64_t width, int64_t rows) {
    const bool windowed = kv.window() != nullptr;
    const size_t n = static_cast<size_t>(width * rows);
    h_tables.assign(windowed ? 2 * n : n, 0);
    for (size_t r = 0; r < seqs.size(); ++r) {
      const auto& b = kv.blocks(seqs[r]);
      std::copy(b.begin(), b.end(), h_tables.begin() + static_cast<int64_t>(r) * width);
      if (!windowed) continue;
      const auto& w = kv.window_blocks(seqs[r]);
      for (size_t i = 0; i < w.size() && i < static_cast<size_t>(width); ++i) {
        h_tables[n + r * static_cast<size_t>(width) + i] = std::max(w[i], 0);
      }
    }
  }

  Status submit(const ForwardBatch& batch, const StepSampling* sampling = nullptr) {
    sampled_step = false;
    const ModelConfig& c = model.config();
    const int64_t t = static_cast<int64_t>(batch.tokens.size());
    if (t == 0) return invalid_argument("forward: empty batch");
    if (batch.positions.size() != batch.tokens.size() ||
        batch.seq_ids.size() != batch.tokens.size()) {
      return invalid_argument("forward: tokens, positions and seq_ids differ in length");
    }
    // Sequences in order of first appearance; each becomes a row of the block-table matrix.
    std::vector<int32_t> seqs;
    std::vector<int32_t> last;     // last token index of each sequence
    std::vector<int64_t> per_seq;  // tokens of each sequence in the step
    const bool windowed = kv.window() != nullptr;
    h_seq.resize(static_cast<size_t>(t));
    h_slots.resize(static_cast<size_t>(t));
    h_wslots.assign(static_cast<size_t>(t), 0);
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
        per_seq.push_back(0);
      }
      last[row] = static_cast<int32_t>(i);
      per_seq[row]++;
      h_seq[i] = static_cast<int32_t>(row);
      h_slots[i] = kv.slot(s, p);
      if (windowed) {
        h_wslots[i] = kv.window_slot(s, p);
        if (h_wslots[i] < 0) {
          return invalid_argument("forward: position " + std::to_string(p) + " of sequence " +
                                  std::to_string(s) +
                                  " lies behind the sliding window already released");
        }
      }
    }
    if (kv.state() != nullptr) ARC_RETURN_IF_ERROR(plan_state(batch, seqs, per_seq));
    int64_t max_blocks = 1;
    for (int32_t s : seqs) max_blocks = std::max<int64_t>(max_blocks, kv.blocks(s).size());
    int64_t table_rows = static_cast<int64_t>(seqs.size());
    fill_tables(seqs, max_blocks, table_rows);
    if (batch.logit_rows.empty()) {
      h_rows = last;
    } else {
      h_rows.assign(batch.logit_rows.begin(), batch.logit_rows.end());
      for (int32_t r : h_rows) {
        if (r < 0 || r >= t) return invalid_argument("forward: logit row outside the batch");
      }
    }
    n_out = static_cast<int64_t>(h_rows.size());
    if (sampling != nullptr) ARC_RETURN_IF_ERROR(check_sampling(*sampling));
    h_tok.assign(batch.tokens.begin(), batch.tokens.end());
    h_pos.assign(batch.positions.begin(), batch.positions.end());
    ARC_ASSIGN_OR_RETURN(const bool mm, check_mm(batch, t));
    if (mm) ARC_RETURN_IF_ERROR(ensure_mm(t));
    if (mtp != !batch.hidden.empty() ||
        (mtp && static_cast<int64_t>(batch.hidden.size()) != t * c.n_embd)) {
      return invalid_argument(mtp ? "forward: a multi-token-prediction step needs one hidden "
                                    "state of n_embd values per token"
                                  : "forward: hidden states are for multi-token-prediction "
                                    "blocks only");
    }
    last_t = t;

    // A decode step (one token per sequence) or a verify step (a few per sequence: the kernels
    // take each token's sequence and position from device buffers, so the recorded launches
    // depend only on the padded sizes) runs as a recorded graph when the backend has them. A
    // verify step wants every token's logits; a short prefill chunk (only its last row) is not
    // recorded: prompts come in too many shapes to be worth a capture each.
    // Under tensor parallelism too when the collectives are stream-ordered (NCCL): the graph
    // records them with the kernels. Ranks need not agree on recording or replaying: each rank
    // issues every collective of a step exactly once either way (a failed capture runs the step
    // eagerly instead, never both), so the collectives still pair up across ranks.
    const int64_t most = *std::max_element(per_seq.begin(), per_seq.end());
    // Not for hybrid models: padding copies would advance the recurrent state again.
    const bool graph = graphs != nullptr && graphs->graphs_enabled() && kv.state() == nullptr &&
                       (tp == nullptr || tp->on_stream()) && !mm && !mtp &&
                       (most == 1 || (most <= kMaxGraphTokensPerSeq && n_out == t)) &&
                       t <= kMaxGraphBatch && n_out <= kMaxGraphBatch;
    int64_t t_run = t, out_run = n_out;
    if (graph) {
      // Pad to the buckets with copies of the last token and row: a copy computes exactly what
      // its original does and writes the same K/V to the same slot, so results are unchanged.
      t_run = bucket(t);
      out_run = bucket(n_out);
      for (auto* v : {&h_tok, &h_pos, &h_seq, &h_slots, &h_rows}) {
        const int32_t copy = v->back();
        v->resize(static_cast<size_t>(v == &h_rows ? out_run : t_run), copy);
      }
      if (windowed) {
        const int32_t copy = h_wslots.back();
        h_wslots.resize(static_cast<size_t>(t_run), copy);
      }
      // Block tables with a bucketed row width (the recorded kernels use a fixed stride).
      max_blocks = bucket(max_blocks);
      table_rows = t_run;
      fill_tables(seqs, max_blocks, table_rows);
    }
    ARC_RETURN_IF_ERROR(ensure(t_run, static_cast<int64_t>(h_tables.size())));

    be.upload(d_tokens, h_tok.data(), sizeof(int32_t) * t_run);
    be.upload(d_pos, h_pos.data(), sizeof(int32_t) * t_run);
    be.upload(d_seq, h_seq.data(), sizeof(int32_t) * t_run);
    be.upload(d_slots, h_slots.data(), sizeof(int32_t) * t_run);
    if (windowed) be.upload(d_wslots, h_wslots.data(), sizeof(int32_t) * t_run);
    be.upload(d_rows, h_rows.data(), sizeof(int32_t) * out_run);
    be.upload(d_tables, h_tables.data(), sizeof(int32_t) * h_tables.size());
    if (mtp) {
      be.upload(d_hidden, batch.hidden.data(), sizeof(float) * batch.hidden.size());
      // Token i's concatenation is row i of the embeddings, then row t + i of the hidden states.
      h_cat_idx.resize(static_cast<size_t>(2 * t));
      for (int64_t i = 0; i < t; ++i) {
        h_cat_idx[2 * i] = static_cast<int32_t>(i);
        h_cat_idx[2 * i + 1] = static_cast<int32_t>(t + i);
      }
      be.upload(d_cat_idx, h_cat_idx.data(), sizeof(int32_t) * h_cat_idx.size());
    }
    if (kv.state() != nullptr) {
      be.upload(d_state, h_state.data(), sizeof(int32_t) * t);
      be.upload(d_snap, h_snap.data(), sizeof(int32_t) * t);
      buf.token_state = d_state;
      buf.token_snapshot = d_snap;
      for (size_t r = 0; r < seqs.size(); ++r) kv.state()->advance(seqs[r], per_seq[r]);
    }
    buf.pos = d_pos;
    buf.token_seq = d_seq;
    buf.slots = d_slots;
    buf.block_tables = d_tables;
    buf.max_blocks = max_blocks;
    buf.window_slots = windowed ? d_wslots : nullptr;
    buf.window_tables = windowed ? d_tables + table_rows * max_blocks : nullptr;
    // MLA: the plain form for prefill chunks where it is cheaper (one rank, not recorded).
    mla_plain.plan(model, be, kv, batch.seq_ids, batch.positions,
                   !graph && tp == nullptr && mla_plain_allowed, buf);

    if (graph) {
      const uint64_t key =
          mix(reinterpret_cast<uintptr_t>(this) ^
              mix(static_cast<uint64_t>(t_run) | static_cast<uint64_t>(out_run) << 16 |
                  static_cast<uint64_t>(max_blocks) << 32));
      if (!graphs->replay(key)) {
        if (!graphs->begin_capture()) {
          enqueue_step(t_run, out_run);
        } else {
          enqueue_step(t_run, out_run);
          if (!graphs->end_capture(key)) enqueue_step(t_run, out_run);  // not recorded: run it
        }
      }
    } else {
      enqueue_step(t_run, out_run, mm ? &batch : nullptr);
    }
    if (tp) return gather_logits();
    if (sampling != nullptr) return enqueue_candidates(*sampling);
    h_logits.resize(static_cast<size_t>(n_out * c.n_vocab));  // the real rows only
    be.download(h_logits.data(), d_logits, sizeof(float) * h_logits.size());
    return ok_status();
  }

  // Hybrid models: each token's state slot, and the snapshots this step takes. The recurrent
  // layers need every sequence's tokens as one run, in order, starting where its state stopped.
  // A run snapshots the state after the last two block boundaries it completes (prefix caching:
  // KvCache::commit files them under their blocks' hashes).
  Status plan_state(const ForwardBatch& batch, const std::vector<int32_t>& seqs,
                    const std::vector<int64_t>& per_seq) {
    RecurrentState& st = *kv.state();
    const int64_t t = static_cast<int64_t>(batch.tokens.size());
    const int64_t bs = kv.options().block_size;
    h_state.assign(static_cast<size_t>(t), -1);
    h_snap.assign(static_cast<size_t>(t), -1);
    int64_t i = 0;
    for (size_t r = 0; r < seqs.size(); ++r) {
      const int32_t s = seqs[r];
      const int64_t n = per_seq[r];
      const int32_t slot = st.slot(s);
      if (slot < 0) {
        return resource_exhausted("forward: sequence " + std::to_string(s) +
                                  " has no recurrent state slot (all " +
                                  std::to_string(st.options().n_seqs) + " in use)");
      }
      const int64_t p0 = st.consumed(s);
      for (int64_t j = 0; j < n; ++j) {
        if (batch.seq_ids[i + j] != s || batch.positions[i + j] != p0 + j) {
          return invalid_argument(
              "forward: a hybrid model's step must hold each sequence's tokens as one run of "
              "consecutive positions continuing its state (sequence " +
              std::to_string(s) + " expects position " + std::to_string(p0 + j) + ")");
        }
        h_state[i + j] = slot;
      }
      int taken = 0;
      for (int64_t p = p0 + n - 1; p >= p0 && taken < 2; --p) {
        if ((p + 1) % bs != 0) continue;
        h_snap[i + (p - p0)] = st.take(s, (p + 1) / bs);
        ++taken;
      }
      i += n;
    }
    return ok_status();
  }

  // Embedding, every layer and the output head for `t` tokens (inputs already uploaded) and
  // `rows` logit rows.
  // `mm`: the batch whose image rows and multi-axis positions enter (never inside a graph).
  void enqueue_step(int64_t t, int64_t rows, const ForwardBatch* mm = nullptr) {
    const ModelConfig& c = model.config();
    if (mm != nullptr) {
      embed_mm(*mm, t);
    } else {
      buf.mrope_pos = nullptr;
      buf.deepstack = nullptr;
      const Weight& emb = model.global(TensorRole::kTokEmbd);
      be.get_rows(emb.type, emb.data, c.n_vocab, c.n_embd, d_tokens, t, buf.x);
    }
    if (mtp) mtp_input(t);
    const arch::FamilyDef& fam = arch::family_def(c.family);
    LayerContext ctx{be, model, kv, buf, t, 0, tp, {}};
    for (int64_t l = 0; l < c.n_layer && ctx.tp_status.ok(); ++l) {
      ctx.layer = l;
      fam.layer(ctx);
    }
    tp_status = ctx.tp_status;
    // Only the requested rows go through the output head.
    be.gather(buf.x, d_rows, rows, c.n_embd, d_sel);
    be.rms_norm(d_sel, model.global(TensorRole::kOutputNorm).f32(), d_sel, rows, c.n_embd,
                c.rms_eps);
    linear(be, model.output(), d_sel, rows, d_logits);
  }

  // The nextn block's input (DeepSeek-V3's MTP module, GLM-4.5's nextn layer): x =
  // eh_proj([enorm(embedding); hnorm(hidden)]), the embedding first. buf.x holds the embeddings
  // [t, n_embd]; the result replaces them.
  void mtp_input(int64_t t) {
    const ModelConfig& c = model.config();
    const int64_t e = c.n_embd;
    be.rms_norm(buf.x, model.layer(0, TensorRole::kNextnEnorm).f32(), d_pair, t, e, c.rms_eps);
    be.rms_norm(d_hidden, model.layer(0, TensorRole::kNextnHnorm).f32(), d_pair + t * e, t, e,
                c.rms_eps);
    be.gather(d_pair, d_cat_idx, 2 * t, e, d_cat2);  // [2t, e] = [t, 2e]
    linear(be, model.layer(0, TensorRole::kNextnEhProj), d_cat2, t, buf.x);
  }

  Status check_sampling(const StepSampling& s) const {
    if (tp != nullptr) {
      return failed_precondition(
          "forward: sampling candidates are not available with tensor parallelism");
    }
    if (!s.rows.empty() && static_cast<int64_t>(s.rows.size()) != n_out) {
      return invalid_argument("forward: " + std::to_string(s.rows.size()) + " sampling rows for " +
                              std::to_string(n_out) + " logit rows");
    }
    if (s.pen_counts.size() != s.pen_tokens.size()) {
      return invalid_argument("forward: penalty tokens and counts differ in length");
    }
    for (const kernels::CandidateRow& r : s.rows) {
      if (r.k < 0 || r.k > kernels::kMaxCandidates || r.pen_begin < 0 || r.pen_end < r.pen_begin ||
          static_cast<size_t>(r.pen_end) > s.pen_tokens.size() ||
          ((r.flags & kernels::kCandidateMass) != 0 && !(r.temperature > 0.0f))) {
        return invalid_argument("forward: malformed sampling row");
      }
    }
    return ok_status();
  }

  template <typename T>
  Result<T*> make_cand(int64_t count) {
    ARC_ASSIGN_OR_RETURN(auto b,
                         be.alloc(sizeof(T) * static_cast<size_t>(std::max<int64_t>(count, 1))));
    T* p = b->as<T>();
    cand_owned.push_back(std::move(b));
    return p;
  }

  // Device buffers of the candidates; they never enter a recorded graph, so growing them is free.
  Status ensure_cand(int64_t rows, int64_t k, int64_t n_pen, int64_t work_rows) {
    const int64_t v = model.config().n_vocab;
    if (rows > cand_rows_cap || k > cand_k_cap) {
      cand_owned.clear();
      cand_pen_cap = cand_work_rows = 0;
      d_pen_tok = d_pen_cnt = nullptr;
      d_work = nullptr;
      cand_rows_cap = std::max(rows, cand_rows_cap);
      cand_k_cap = std::max(k, cand_k_cap);
      ARC_ASSIGN_OR_RETURN(d_crow, make_cand<kernels::CandidateRow>(cand_rows_cap));
      ARC_ASSIGN_OR_RETURN(d_cids, make_cand<int32_t>(cand_rows_cap * cand_k_cap));
      ARC_ASSIGN_OR_RETURN(d_cvals, make_cand<float>(cand_rows_cap * cand_k_cap));
      ARC_ASSIGN_OR_RETURN(d_cstats, make_cand<double>(cand_rows_cap * 3));
    }
    if (n_pen > cand_pen_cap) {
      cand_pen_cap = std::max<int64_t>(n_pen * 2, 1024);
      ARC_ASSIGN_OR_RETURN(d_pen_tok, make_cand<int32_t>(cand_pen_cap));
      ARC_ASSIGN_OR_RETURN(d_pen_cnt, make_cand<int32_t>(cand_pen_cap));
    }
    if (work_rows > cand_work_rows) {
      cand_work_rows = std::max(work_rows, cand_rows_cap);
      ARC_ASSIGN_OR_RETURN(d_work, make_cand<float>(cand_work_rows * v));
    }
    return ok_status();
  }

  // After the step's ops: the candidates (or, without a CandidateSelector, the whole rows).
  Status enqueue_candidates(const StepSampling& s) {
    const int64_t v = model.config().n_vocab;
    sampled_step = true;
    h_crow = s.rows;
    h_pen_tok = s.pen_tokens;
    h_pen_cnt = s.pen_counts;
    StepCandidates& c = h_cand;
    if (s.rows.empty()) {  // a step run for its K/V only (a prefill chunk): nothing comes back
      c = StepCandidates{};
      c.n_vocab = v;
      h_logits.clear();
      return ok_status();
    }
    c.n_rows = n_out;
    c.n_vocab = v;
    c.k_stride = 1;
    bool any_pen = false;
    c.k.assign(static_cast<size_t>(n_out), 0);
    c.full_at.assign(static_cast<size_t>(n_out), -1);
    int64_t n_full = 0;
    for (int64_t r = 0; r < n_out; ++r) {
      kernels::CandidateRow& row = h_crow[r];
      row.k = static_cast<int32_t>(std::min<int64_t>(row.k, v));
      c.k[r] = row.k;
      c.k_stride = std::max(c.k_stride, row.k);
      any_pen = any_pen || (row.k > 0 && row.pen_end > row.pen_begin);
      if (row.k == 0) c.full_at[r] = n_full++;
    }
    c.ids.resize(static_cast<size_t>(n_out * c.k_stride));
    c.values.resize(c.ids.size());
    c.stats.assign(static_cast<size_t>(n_out * 3), 0.0);
    if (selector == nullptr) {
      // Host selection at wait(): every row comes down.
      h_logits.resize(static_cast<size_t>(n_out * v));
      be.download(h_logits.data(), d_logits, sizeof(float) * h_logits.size());
      return ok_status();
    }
    ARC_RETURN_IF_ERROR(ensure_cand(n_out, c.k_stride, static_cast<int64_t>(h_pen_tok.size()),
                                    any_pen ? n_out : 0));
    be.upload(d_crow, h_crow.data(), sizeof(kernels::CandidateRow) * h_crow.size());
    if (!h_pen_tok.empty()) {
      be.upload(d_pen_tok, h_pen_tok.data(), sizeof(int32_t) * h_pen_tok.size());
      be.upload(d_pen_cnt, h_pen_cnt.data(), sizeof(int32_t) * h_pen_cnt.size());
    }
    kernels::TopCandidatesArgs a;
    a.logits = d_logits;
    a.n_rows = n_out;
    a.n_vocab = v;
    a.rows = d_crow;
    a.pen_tokens = d_pen_tok;
    a.pen_counts = d_pen_cnt;
    a.work = any_pen ? d_work : nullptr;
    a.k_stride = c.k_stride;
    a.ids = d_cids;
    a.values = d_cvals;
    a.stats = d_cstats;
    selector->top_candidates(a);
    be.download(c.ids.data(), d_cids, sizeof(int32_t) * c.ids.size());
    be.download(c.values.data(), d_cvals, sizeof(float) * c.values.size());
    be.download(c.stats.data(), d_cstats, sizeof(double) * c.stats.size());
    c.full.resize(static_cast<size_t>(n_full * v));
    for (int64_t r = 0; r < n_out; ++r) {
      if (c.full_at[r] < 0) continue;
      be.download(c.full.data() + c.full_at[r] * v, d_logits + r * v, sizeof(float) * v);
    }
    return ok_status();
  }

  // wait() of a sampled step, after the backend synchronised.
  void finish_candidates(StepCandidates& out) {
    StepCandidates& c = h_cand;
    if (selector == nullptr) {
      kernels::TopCandidatesArgs a;
      a.logits = h_logits.data();
      a.n_rows = c.n_rows;
      a.n_vocab = c.n_vocab;
      a.rows = h_crow.data();
      a.pen_tokens = h_pen_tok.data();
      a.pen_counts = h_pen_cnt.data();
      a.k_stride = c.k_stride;
      a.ids = c.ids.data();
      a.values = c.values.data();
      a.stats = c.stats.data();
      kernels::top_candidates(a);
      // Every row is here already: whole-row requests and fallbacks need no download.
      for (int64_t r = 0; r < c.n_rows; ++r) c.full_at[r] = r;
      c.full.swap(h_logits);
    }
    std::swap(out, c);
  }

  // Every rank computed [n_out, its vocabulary slice]; all of them get [n_out, n_vocab].
  Status gather_logits() {
    ARC_RETURN_IF_ERROR(tp_status);
    const int64_t n_ranks = static_cast<int64_t>(vocab_begin.size()) - 1;
    const int64_t v_all = vocab_begin.back();
    const int64_t v_mine = vocab_begin[tp->rank() + 1] - vocab_begin[tp->rank()];
    std::vector<int64_t> counts(static_cast<size_t>(n_ranks));
    for (int64_t r = 0; r < n_ranks; ++r) counts[r] = n_out * (vocab_begin[r + 1] - vocab_begin[r]);
    h_all.resize(static_cast<size_t>(n_out * v_all));
    if (tp->on_stream()) {
      // Gathered on the device after the output head, then one download; settle() waits for
      // the step under the collective deadline (a dead peer never leaves sync() blocked). It
      // comes before the download: a download larger than the pinned arena is a pageable copy,
      // which blocks the host until the stream (the gather included) is done, with no deadline.
      ARC_RETURN_IF_ERROR(tp->all_gather(d_logits, counts, d_all));
      Status settled = tp->settle();
      if (settled.ok()) be.download(h_all.data(), d_all, sizeof(float) * h_all.size());
      ARC_RETURN_IF_ERROR(be.sync());
      ARC_RETURN_IF_ERROR(settled);
    } else {
      h_part.resize(static_cast<size_t>(n_out * v_mine));
      be.download(h_part.data(), d_logits, sizeof(float) * h_part.size());
      ARC_RETURN_IF_ERROR(be.sync());
      ARC_RETURN_IF_ERROR(tp->all_gather(h_part.data(), counts, h_all.data()));
    }
    // h_all: rank blocks [n_out, v_r] one after another -> rows of [n_vocab].
    h_logits.resize(static_cast<size_t>(n_out * v_all));
    const float* src = h_all.data();
    for (int64_t r = 0; r < n_ranks; ++r) {
      const int64_t v_r = vocab_begin[r + 1] - vocab_begin[r];
      for (int64_t i = 0; i < n_out; ++i) {
        std::copy(src + i * v_r, src + (i + 1) * v_r,
                  h_logits.begin() + i * v_all + vocab_begin[r]);
      }
      src += n_out * v_r;
    }
    return ok_status();
  }
};

void ForwardExecutor::set_tensor_parallel(Communicator* comm, std::vector<int64_t> vocab_begin) {
  impl_->tp = comm != nullptr && comm->size() > 1 ? comm : nullptr;
  impl_->vocab_begin = std::move(vocab_begin);
  impl_->capacity = 0;  // reallocate with the partial-sum buffer
}

void ForwardExecutor::set_mla_plain(bool allowed) {
  impl_->mla_plain_allowed = allowed;
}

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

Status ForwardExecutor::submit(const ForwardBatch& batch, const StepSampling& sampling) {
  return impl_->submit(batch, &sampling);
}

Status ForwardExecutor::wait(StepCandidates& out) {
  ARC_RETURN_IF_ERROR(impl_->be.sync());
  if (!impl_->sampled_step) {
    return failed_precondition("forward: the last step was submitted without sampling rows");
  }
  impl_->finish_candidates(out);
  return ok_status();
}

bool ForwardExecutor::selects_on_device() const {
  return impl_->selector != nullptr;
}

Status ForwardExecutor::fetch_row(int64_t row, std::vector<float>& out) {
  Impl& m = *impl_;
  if (row < 0 || row >= m.n_out || m.d_logits == nullptr) {
    return out_of_range("forward: logit row " + std::to_string(row) + " is not in the last step");
  }
  const int64_t v = m.model.config().n_vocab;
  out.resize(static_cast<size_t>(v));
  m.be.download(out.data(), m.d_logits + row * v, sizeof(float) * static_cast<size_t>(v));
  return m.be.sync();
}

Status ForwardExecutor::fetch_hidden(int64_t first, int64_t n, std::vector<float>& out) {
  Impl& m = *impl_;
  if (first < 0 || n < 0 || first + n > m.last_t || m.buf.x == nullptr) {
    return out_of_range("forward: hidden rows [" + std::to_string(first) + ", " +
                        std::to_string(first + n) + ") are not in the last step");
  }
  const int64_t e = m.model.config().n_embd;
  out.resize(static_cast<size_t>(n * e));
  if (n == 0) return ok_status();
  m.be.download(out.data(), m.buf.x + first * e, sizeof(float) * static_cast<size_t>(n * e));
  return m.be.sync();
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
