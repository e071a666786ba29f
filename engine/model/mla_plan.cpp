// The host side of MLA's plain form (MlaPlainPlan in blocks.h): per step, the context rows of the
// step's sequences (positions 0..highest of each, one sequence after another), the op-count
// choice between the forms, and the uploads of the rows' cache slots and the tokens' first rows.
#include <algorithm>

#include "model/blocks.h"

namespace arc {

Status MlaPlainPlan::ensure(const Model& model, Backend& be, int64_t capacity) {
  const ModelConfig& c = model.config();
  // A model rewritten into a tensor-parallel shard keeps its derived k_b^T whole: absorbed only.
  const Weight& kbt = model.mla_k_b_t(0);
  if (!c.mla() || !be.has_mla_plain() || !kbt.present() || kbt.shape[2] != c.n_head) {
    max_rows_ = 0;
    return ok_status();
  }
  if (capacity <= max_tokens_) return ok_status();
  owned_.clear();
  max_rows_ = max_tokens_ = 0;
  // q_lat / o_lat hold capacity * n_head * kv_lora_rank floats each; the plain form puts the
  // rows' keys [rows, n_head, nope] and values [rows, n_head, v_head_dim] there.
  const int64_t rows =
      capacity * c.kv_lora_rank / std::max<int64_t>({c.qk_nope_dim(), c.v_head_dim, 1});
  auto make = [&](size_t bytes) -> Result<void*> {
    ARC_ASSIGN_OR_RETURN(auto b, be.alloc(std::max<size_t>(bytes, 4)));
    void* p = b->data();
    owned_.push_back(std::move(b));
    return p;
  };
  ARC_ASSIGN_OR_RETURN(void* slots, make(sizeof(int32_t) * static_cast<size_t>(rows)));
  ARC_ASSIGN_OR_RETURN(void* row0, make(sizeof(int32_t) * static_cast<size_t>(capacity)));
  ARC_ASSIGN_OR_RETURN(
      void* gathered,
      make(sizeof(float) * static_cast<size_t>(rows * (c.kv_lora_rank + c.rot_dim))));
  d_row_slots_ = static_cast<int32_t*>(slots);
  d_row0_ = static_cast<int32_t*>(row0);
  d_rows_ = static_cast<float*>(gathered);
  max_rows_ = rows;
  max_tokens_ = capacity;
  return ok_status();
}

void MlaPlainPlan::plan(const Model& model, Backend& be, const KvCache& kv,
                        std::span<const int32_t> seq_ids, std::span<const int32_t> positions,
                        bool eligible, StepBuffers& buf) {
  buf.mla_rows = 0;
  const int64_t t = static_cast<int64_t>(seq_ids.size());
  if (!eligible || max_rows_ == 0 || t > max_tokens_) return;
  // Highest position of each sequence, in order of first appearance.
  std::vector<int32_t> seqs, top;
  int64_t pairs = 0;
  for (int64_t i = 0; i < t; ++i) {
    auto it = std::find(seqs.begin(), seqs.end(), seq_ids[i]);
    if (it == seqs.end()) {
      seqs.push_back(seq_ids[i]);
      top.push_back(positions[i]);
    } else {
      int32_t& m = top[static_cast<size_t>(it - seqs.begin())];
      m = std::max(m, positions[i]);
    }
    pairs += positions[i] + 1;
  }
  int64_t rows = 0;
  for (int32_t p : top) rows += p + 1;
  if (rows > max_rows_ || !mla_plain_cheaper(model.config(), t, rows, pairs)) return;
  h_row_slots_.clear();
  std::vector<int64_t> base;
  for (size_t s = 0; s < seqs.size(); ++s) {
    base.push_back(static_cast<int64_t>(h_row_slots_.size()));
    for (int32_t p = 0; p <= top[s]; ++p) h_row_slots_.push_back(kv.slot(seqs[s], p));
  }
  h_row0_.resize(static_cast<size_t>(t));
  for (int64_t i = 0; i < t; ++i) {
    const size_t s =
        static_cast<size_t>(std::find(seqs.begin(), seqs.end(), seq_ids[i]) - seqs.begin());
    h_row0_[static_cast<size_t>(i)] = static_cast<int32_t>(base[s]);
  }
  be.upload(d_row_slots_, h_row_slots_.data(), sizeof(int32_t) * h_row_slots_.size());
  be.upload(d_row0_, h_row0_.data(), sizeof(int32_t) * h_row0_.size());
  buf.mla_rows = rows;
  buf.mla_row_slots = d_row_slots_;
  buf.mla_token_row0 = d_row0_;
  buf.mla_gathered = d_rows_;
}

}  // namespace arc
