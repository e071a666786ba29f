// Shard plan from the family tables, and the rewrite of a loaded model into one rank's shard.
#include "arc/shard_plan.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "arc/kernels/repack.h"
#include "arc/log.h"
#include "arc/model.h"

namespace arc {
namespace {

// The dimension a split divides: rows (shape[1]) or columns (shape[0]); 1-D tensors (biases,
// norms, sinks) split their only dimension.
bool splits_columns(const TensorRef& ref) {
  const Split s = ref.spec->split;
  return s == Split::kColsByHead || s == Split::kCols || s == Split::kExpertCols ||
         ref.spec->n_dims == 1;
}

Dim split_dim(const TensorRef& ref) {
  return ref.spec->dims[splits_columns(ref) ? 0 : 1];
}

// Values per quantization block that a rank's columns of each split dimension must be whole
// multiples of: the largest block among the tensors cut by columns along it (the down
// projections along the FFN widths, attn_output along the Q heads), 1 when none is.
struct Units {
  int64_t q = 1, ff = 1, ff_exp = 1, ff_shexp = 1;
};
Units block_units(const ModelConfig& cfg, const TensorTypeFn& type_of) {
  Units u;
  for_each_tensor(cfg, [&](const TensorRef& ref) {
    const Split s = ref.spec->split;
    if (s == Split::kReplicated || !splits_columns(ref) || ref.spec->n_dims == 1) return;
    const DTypeInfo* info = dtype_info(kernels::row_major_type(type_of(ref)));
    const int64_t b = info != nullptr ? info->block_elems : 1;
    switch (split_dim(ref)) {
      case Dim::kQ:
      case Dim::kQv:  // MLA's attn_output: heads of v_head_dim
        u.q = std::max(u.q, b);
        break;
      case Dim::kFf:
        u.ff = std::max(u.ff, b);
        break;
      case Dim::kFfExp:
        u.ff_exp = std::max(u.ff_exp, b);
        break;
      case Dim::kFfShexp:
        u.ff_shexp = std::max(u.ff_shexp, b);
        break;
      default:
        break;
    }
  });
  return u;
}

// Appends `p` to `parts`, merging it into the last part when they continue each other.
void append(std::vector<ShardPart>& parts, ShardPart p) {
  if (!parts.empty()) {
    ShardPart& last = parts.back();
    if (last.zero && p.zero) {
      last.count += p.count;
      return;
    }
    if (!last.zero && !p.zero && last.begin + last.count == p.begin) {
      last.count += p.count;
      return;
    }
  }
  parts.push_back(p);
}

// The routed experts' tensors: whole experts per rank under expert parallelism.
bool expert_tensor(const TensorRef& ref) {
  switch (ref.spec->role) {
    case TensorRole::kFfnGateExps:
    case TensorRole::kFfnUpExps:
    case TensorRole::kFfnDownExps:
    case TensorRole::kFfnGateExpsBias:
    case TensorRole::kFfnUpExpsBias:
    case TensorRole::kFfnDownExpsBias:
      return true;
    default:
      return false;
  }
}

// The cuts of every split dimension of rank `rank`; the reason when the model cannot split.
Status plan_cuts(const ModelConfig& cfg, const TensorTypeFn& type_of, int n, int rank,
                 MoeSplitMode moe, ShardPlan& p) {
  const Units u = block_units(cfg, type_of);
  if (cfg.mla()) {
    ARC_ASSIGN_OR_RETURN(p.heads, split_latent_heads(cfg.n_head, cfg.v_head_dim, n, u.q));
  } else {
    ARC_ASSIGN_OR_RETURN(p.heads, split_heads(cfg.n_head, cfg.n_kv_head, cfg.head_dim, n, u.q));
  }
  auto width = [&](int64_t w, int64_t unit, const char* what, WidthSplit& out) -> Status {
    if (w <= 0) return ok_status();
    Result<WidthSplit> s = split_width(w, unit, n);
    if (!s.ok()) return failed_precondition(std::string(what) + ": " + s.status().message());
    out = *s;
    return ok_status();
  };
  ARC_RETURN_IF_ERROR(width(cfg.n_ff, u.ff, "the dense FFN", p.ff));
  if (cfg.is_moe() && cfg.n_ff_exp > 0) {
    // Block split or whole experts (arc/moe_split.h); either may be refused when forced.
    Result<WidthSplit> tp = split_width(cfg.n_ff_exp, u.ff_exp, n);
    if (!tp.ok()) tp = failed_precondition("the experts: " + std::string(tp.status().message()));
    Result<MoeSplitChoice> c = choose_moe_split(cfg.n_expert, cfg.n_expert_used, tp, n, moe);
    if (!c.ok()) return c.status();
    p.has_moe = true;
    p.moe = *c;
    if (!p.moe.ep) p.ff_exp = *tp;
  }
  ARC_RETURN_IF_ERROR(width(cfg.ffn == FfnKind::kMoeShared ? cfg.n_ff_shexp : 0, u.ff_shexp,
                            "the shared expert", p.ff_shexp));
  // This rank's slots: real slot v holds KV head v / kv_copies and Q heads
  // [v * q_per_slot, (v + 1) * q_per_slot); slots past the real ones are zero heads.
  const HeadSplit& h = p.heads;
  for (int64_t v = rank * h.slots_per_rank; v < (rank + 1) * h.slots_per_rank; ++v) {
    if (v < h.slots()) {
      append(p.q_parts, {v * h.q_per_slot, h.q_per_slot, false});
      append(p.kv_parts, {v / h.kv_copies, 1, false});
    } else {
      append(p.q_parts, {0, h.q_per_slot, true});
      append(p.kv_parts, {0, 1, true});
    }
  }
  return ok_status();
}

// The rank's range of one width (the whole width when the model has none of it).
std::vector<ShardPart> width_parts(const WidthSplit& w, int rank) {
  if (w.begin.empty()) return {};
  return {{w.begin[rank], w.count(rank), false}};
}

std::vector<ShardPart> scaled(const std::vector<ShardPart>& parts, int64_t k) {
  std::vector<ShardPart> out = parts;
  for (ShardPart& p : out) {
    p.begin *= k;
    p.count *= k;
  }
  return out;
}

}  // namespace

std::vector<std::string> ShardPlan::describe() const {
  std::vector<std::string> out = {arc::describe(heads)};
  if (!ff.begin.empty()) out.push_back(arc::describe(ff, "dense FFN width"));
  if (has_moe && n_ranks > 1) out.push_back(arc::describe(moe));
  if (!ff_exp.begin.empty()) out.push_back(arc::describe(ff_exp, "expert width"));
  if (!ff_shexp.begin.empty()) out.push_back(arc::describe(ff_shexp, "shared-expert width"));
  return out;
}

Result<ShardPlan> make_shard_plan(const ModelConfig& cfg, const TensorTypeFn& type_of, int n_ranks,
                                  int rank, MoeSplitMode moe) {
  if (n_ranks < 1) return invalid_argument("the rank count must be at least 1");
  if (rank < 0 || rank >= n_ranks) return invalid_argument("shard plan: rank out of range");
  if (cfg.hybrid() && n_ranks > 1) {
    return unimplemented(
        "--tp: qwen3next (hybrid Gated DeltaNet) models do not split across ranks yet; run "
        "them on one box");
  }
  ShardPlan p;
  if (Status s = plan_cuts(cfg, type_of, n_ranks, rank, moe, p); !s.ok()) {
    std::string ok;
    for (int n = 1; n <= 8; ++n) {
      ShardPlan q;
      if (plan_cuts(cfg, type_of, n, 0, moe, q).ok())
        ok += (ok.empty() ? "" : ", ") + std::to_string(n);
    }
    return failed_precondition("cannot split the model over " + std::to_string(n_ranks) +
                               " ranks: " + std::string(s.message()) +
                               ". Rank counts that split: " + (ok.empty() ? "none" : ok));
  }
  p.n_ranks = n_ranks;
  p.rank = rank;
  p.full = cfg;
  p.local = cfg;
  const int64_t n = n_ranks;
  p.local.n_head = p.heads.local_q();
  // MLA: one latent per token, computed and cached whole on every rank.
  p.local.n_kv_head = cfg.mla() ? cfg.n_kv_head : p.heads.slots_per_rank;
  for (const ShardPart& part : p.kv_parts) {
    if (!part.zero) {
      p.kv_head_begin = part.begin;
      break;
    }
  }
  if (n_ranks > 1 && cfg.qk_norm_full) {
    // The full-width norms divide the summed squares by the model's widths; zero heads add no
    // squares, and each KV head's squares arrive once per copy held.
    p.local.tp_norm_q_width = cfg.q_dim();
    p.local.tp_norm_k_width = cfg.kv_dim() * p.heads.kv_held();
  }
  if (!p.ff.begin.empty()) p.local.n_ff = p.ff.count(rank);
  if (!p.ff_exp.begin.empty()) {
    p.ff_exp_begin = p.ff_exp.begin[rank];
    p.local.n_ff_exp = p.ff_exp.count(rank);
  }
  if (!p.ff_shexp.begin.empty()) p.local.n_ff_shexp = p.ff_shexp.count(rank);
  if (p.ep()) {
    // Whole experts: the full expert width, a range of experts (the router still scores all).
    p.expert_begin = p.moe.experts.begin[rank];
    p.n_local_expert = p.moe.experts.count(rank);
    p.local.ep_expert_begin = p.expert_begin;
    p.local.ep_n_expert = p.n_local_expert;
  }
  p.vocab_begin.resize(static_cast<size_t>(n) + 1);
  for (int64_t r = 0; r <= n; ++r) p.vocab_begin[r] = cfg.n_vocab * r / n;
  return p;
}

Result<ShardPlan> make_shard_plan(const Model& model, int n_ranks, int rank, MoeSplitMode moe) {
  const gguf::File& f = model.file();
  return make_shard_plan(
      model.config(),
      [&f](const TensorRef& ref) {
        const gguf::TensorInfo* t = f.find_tensor(ref.name);
        return t != nullptr ? t->type : DType::F32;
      },
      n_ranks, rank, moe);
}

TensorShard tensor_shard(const ShardPlan& p, const TensorRef& ref) {
  TensorShard s;
  if (p.n_ranks == 1) return s;
  if (p.ep() && expert_tensor(ref)) {
    // Whole experts: slices of the 3-D weights [n_expert][rows][cols], rows of the 2-D biases
    // [n_expert rows] (the down bias too: each expert's owner adds it).
    s.whole = false;
    s.slices = ref.spec->n_dims == 3;
    s.columns = false;
    s.begin = p.expert_begin;
    s.count = p.n_local_expert;
    return s;
  }
  if (ref.spec->split == Split::kReplicated) return s;
  s.whole = false;
  s.columns = splits_columns(ref);
  const int64_t hd = p.full.head_dim;
  // Per-head slices (MLA's k_b, v_b) take the heads' parts, counted in slices.
  s.slices = ref.spec->split == Split::kHeadSlices;
  switch (s.slices ? Dim::kHead : split_dim(ref)) {
    case Dim::kVocab:
      s.parts = {{p.vocab_begin[p.rank], p.vocab_count(), false}};
      break;
    case Dim::kQ:
      s.parts = scaled(p.q_parts, hd);
      break;
    case Dim::kKv:
      s.parts = scaled(p.kv_parts, hd);
      break;
    case Dim::kHead:
      s.parts = p.q_parts;
      break;
    case Dim::kQv:
      s.parts = scaled(p.q_parts, p.full.v_head_dim);
      break;
    case Dim::kFf:
      s.parts = width_parts(p.ff, p.rank);
      break;
    case Dim::kFfExp:
      s.parts = width_parts(p.ff_exp, p.rank);
      break;
    case Dim::kFfShexp:
      s.parts = width_parts(p.ff_shexp, p.rank);
      break;
    default: {  // no family splits another dimension; an even split keeps it defined
      const int64_t dim = s.columns ? ref.shape[0] : ref.shape[1];
      s.parts = {{p.rank * dim / p.n_ranks, dim / p.n_ranks, false}};
    }
  }
  s.count = 0;
  for (const ShardPart& part : s.parts) s.count += part.count;
  if (s.parts.size() == 1 && !s.parts[0].zero) {  // one range: no gather
    s.begin = s.parts[0].begin;
    s.parts.clear();
  }
  return s;
}

void narrow_weight(Weight& w, const TensorShard& s) {
  if (s.whole) return;
  const int64_t n_slices = w.shape.size() > 2 ? w.shape[2] : 1;
  const int64_t rows = w.shape.size() > 1 ? w.shape[1] : 1;
  if (s.slices) {
    w.shape[2] = s.count;
    w.n_bytes = w.slice_bytes * static_cast<uint64_t>(s.count);
    return;
  }
  if (!s.columns) {
    w.shape[1] = s.count;
    w.slice_bytes = w.row_bytes * static_cast<size_t>(s.count);
    w.n_bytes = w.slice_bytes * static_cast<uint64_t>(n_slices);
    return;
  }
  const DTypeInfo* info = dtype_info(w.type);
  w.shape[0] = s.count;
  w.row_bytes = static_cast<size_t>(s.count / info->block_elems) * info->block_bytes;
  w.slice_bytes = w.row_bytes * static_cast<size_t>(rows);
  w.n_bytes = w.slice_bytes * static_cast<uint64_t>(n_slices);
}

void gather_shard(const uint8_t* whole, const Weight& w, const TensorShard& s, uint8_t* dst) {
  const int64_t n_slices = w.shape.size() > 2 ? w.shape[2] : 1;
  const int64_t rows = w.shape.size() > 1 ? w.shape[1] : 1;
  if (s.slices) {  // whole slices, or zero slices
    for (const ShardPart& part : s.parts) {
      const size_t len = static_cast<size_t>(part.count) * w.slice_bytes;
      if (part.zero) {
        std::memset(dst, 0, len);
      } else {
        std::memcpy(dst, whole + static_cast<size_t>(part.begin) * w.slice_bytes, len);
      }
      dst += len;
    }
    return;
  }
  if (!s.columns) {
    // [n_slices][parts' rows]: ranges of rows of each slice, or zero rows.
    for (int64_t e = 0; e < n_slices; ++e) {
      const uint8_t* slice = whole + static_cast<size_t>(e) * w.slice_bytes;
      for (const ShardPart& part : s.parts) {
        const size_t len = static_cast<size_t>(part.count) * w.row_bytes;
        if (part.zero) {
          std::memset(dst, 0, len);  // every block format decodes zero bytes to zeros
        } else {
          std::memcpy(dst, slice + static_cast<size_t>(part.begin) * w.row_bytes, len);
        }
        dst += len;
      }
    }
    return;
  }
  // Every row: its parts' block ranges, or zero blocks.
  const DTypeInfo* info = dtype_info(w.type);
  const int64_t total_rows = rows * n_slices;
  for (int64_t r = 0; r < total_rows; ++r) {
    const uint8_t* row = whole + static_cast<size_t>(r) * w.row_bytes;
    for (const ShardPart& part : s.parts) {
      const size_t len = static_cast<size_t>(part.count / info->block_elems) * info->block_bytes;
      if (part.zero) {
        std::memset(dst, 0, len);
      } else {
        std::memcpy(dst,
                    row + static_cast<size_t>(part.begin / info->block_elems) * info->block_bytes,
                    len);
      }
      dst += len;
    }
  }
}

Result<uint64_t> shard_model(Model& model, Backend& backend, const ShardPlan& plan) {
  uint64_t bytes = 0;
  Status first;
  auto take = [&](const TensorRef& ref, Weight& w) {
    const TensorShard s = tensor_shard(plan, ref);
    if (s.whole) {
      bytes += w.n_bytes;
      return;
    }
    const auto* base = static_cast<const uint8_t*>(w.data);
    const int64_t n_slices = w.shape.size() > 2 ? w.shape[2] : 1;
    const int64_t repack_unit = s.slices ? 1 : kernels::kRepackRows;  // slices: whole groups
    if (dtype_is_internal(w.type) &&
        (s.columns || s.gathered() || s.begin % repack_unit != 0 || s.count % repack_unit != 0 ||
         (s.slices && w.shape[1] % kernels::kRepackRows != 0))) {
      // Rearranged at load in groups of rows (arc/kernels/repack.h) that this split cuts: split
      // a row-major copy instead (host memory, as only CPU backends rearrange).
      const int64_t rows = (w.shape.size() > 1 ? w.shape[1] : 1) * n_slices;
      uint8_t* copy = model.keep_bytes(static_cast<size_t>(w.n_bytes));
      std::memcpy(copy, base, static_cast<size_t>(w.n_bytes));
      const DType file_type = kernels::row_major_type(w.type);
      if (!kernels::repack_rows(w.type, file_type, copy, rows, w.shape[0])) {
        first = internal_error("cannot split " + ref.name + ": its " +
                               std::string(dtype_name(w.type)) + " layout has no row-major form");
        return;
      }
      base = copy;
      w.type = file_type;
    }
    if (s.slices && !s.gathered()) {
      // One range of whole slices: offset the pointer (no copy).
      w.data = base + static_cast<size_t>(s.begin) * w.slice_bytes;
      w.shape[2] = s.count;
      w.n_bytes = w.slice_bytes * static_cast<uint64_t>(s.count);
      bytes += w.n_bytes;
      return;
    }
    if (!s.columns && !s.gathered()) {
      // Rows of every expert slice: offset the pointer, keep the expert stride (no copy).
      w.data = base + static_cast<size_t>(s.begin) * w.row_bytes;
      w.shape[1] = s.count;
      w.n_bytes = w.row_bytes * static_cast<uint64_t>(s.count * n_slices);
      bytes += w.n_bytes;
      return;  // slice_bytes stays: it is the stride between experts
    }
    // Column ranges, or gathered rows (padded or repeated heads): a per-rank copy.
    TensorShard g = s;
    if (!g.gathered()) g.parts = {{s.begin, s.count, false}};
    const Weight whole = w;
    narrow_weight(w, g);
    uint8_t* dst = model.keep_bytes(static_cast<size_t>(w.n_bytes));
    gather_shard(base, whole, g, dst);
    Result<const void*> mapped = backend.map_weights({dst, static_cast<size_t>(w.n_bytes)});
    if (!mapped.ok()) {
      first = mapped.status().with_context("mapping the shard of " + ref.name);
      return;
    }
    w.data = *mapped;
    bytes += w.n_bytes;
  };
  for_each_tensor(plan.full, [&](const TensorRef& ref) {
    if (first.ok()) take(ref, model.mutable_weight(ref.layer, ref.spec->role));
  });
  ARC_RETURN_IF_ERROR(first);
  return finish_shard(model, plan, bytes);
}

uint64_t finish_shard(Model& model, const ShardPlan& plan, uint64_t bytes) {
  if (plan.n_ranks > 1 && plan.full.tied_embeddings) {
    // The output head shares token_embd: this rank's vocabulary rows become its own output.
    Weight out = model.global(TensorRole::kTokEmbd);
    out.data = static_cast<const uint8_t*>(out.data) +
               static_cast<size_t>(plan.vocab_begin[plan.rank]) * out.row_bytes;
    out.shape[1] = plan.vocab_count();
    out.n_bytes = out.row_bytes * static_cast<uint64_t>(plan.vocab_count());
    out.slice_bytes = out.n_bytes;
    bytes += out.n_bytes;
    model.mutable_weight(-1, TensorRole::kOutput) = out;
  }
  model.mutable_config() = plan.local;
  model.set_weight_bytes(bytes);
  logger("dist")->info("rank {}/{}: {:.1f} MiB of weights", plan.rank, plan.n_ranks,
                       static_cast<double>(bytes) / (1 << 20));
  if (plan.n_ranks > 1 && plan.rank == 0) {
    for (const std::string& line : plan.describe()) logger("dist")->info("split: {}", line);
  }
  return bytes;
}

}  // namespace arc
