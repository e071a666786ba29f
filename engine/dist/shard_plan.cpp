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

bool is_kv(TensorRole r) {
  return r == TensorRole::kAttnK || r == TensorRole::kAttnV || r == TensorRole::kAttnKBias ||
         r == TensorRole::kAttnVBias || r == TensorRole::kAttnKNorm;  // full-width k norm
}

// The dimension a split divides: rows (shape[1]) or columns (shape[0]).
bool splits_columns(Split s) {
  return s == Split::kColsByHead || s == Split::kCols || s == Split::kExpertCols;
}

// The splits of the experts' intermediate dimension (rows of gate/up, columns of down, the
// gate/up biases): all cut at the same places.
bool splits_expert_width(const TensorRef& ref) {
  const Split s = ref.spec->split;
  const TensorRole r = ref.spec->role;
  return s == Split::kExpertRows || s == Split::kExpertCols || r == TensorRole::kFfnGateExpsBias ||
         r == TensorRole::kFfnUpExpsBias;
}

// Values of the expert width a rank's share must be a multiple of: the largest block of the
// tensors whose columns it cuts (down_exps), 1 without experts.
int64_t expert_unit(const ModelConfig& cfg, const TensorTypeFn& type_of) {
  int64_t unit = 1;
  for_each_tensor(cfg, [&](const TensorRef& ref) {
    if (ref.layer > 0 || ref.spec->split != Split::kExpertCols) return;
    const DTypeInfo* info = dtype_info(type_of(ref));
    if (info != nullptr) unit = std::max<int64_t>(unit, info->block_elems);
  });
  return unit;
}

// Whether the experts split in uneven ranges of whole blocks: an even split would cut a block
// (gpt-oss's 2880 over 4 ranks: 720 columns of 32-value MXFP4 blocks), and there are at least
// 4 blocks per rank, so no rank holds more than a quarter above another. Even splits stay even.
bool uneven_experts(const ModelConfig& cfg, int64_t unit, int n) {
  if (!cfg.is_moe() || n < 2) return false;
  const int64_t w = cfg.n_ff_exp;
  const bool even = w % n == 0 && (w / n) % unit == 0;
  return !even && w % unit == 0 && w / unit >= 4 * n;
}

// Checks one plan; empty string when it splits.
std::string check(const ModelConfig& cfg, const TensorTypeFn& type_of, int n) {
  if (n < 1) return "the rank count must be at least 1";
  if (n == 1) return {};
  if (cfg.n_head % n != 0) {
    return "the model's " + std::to_string(cfg.n_head) +
           " attention heads do not divide evenly "
           "over " +
           std::to_string(n) + " ranks";
  }
  if (cfg.n_kv_head >= n ? cfg.n_kv_head % n != 0 : n % cfg.n_kv_head != 0) {
    return "the model's " + std::to_string(cfg.n_kv_head) + " KV heads neither divide over " +
           std::to_string(n) + " ranks nor replicate evenly across them";
  }
  const bool uneven = uneven_experts(cfg, expert_unit(cfg, type_of), n);
  std::string why;
  for_each_tensor(cfg, [&](const TensorRef& ref) {
    if (!why.empty()) return;
    if (uneven && splits_expert_width(ref)) return;  // whole blocks per rank by construction
    const Split s = ref.spec->split;
    if (s == Split::kReplicated || s == Split::kVocab || s == Split::kRowsByHead ||
        s == Split::kHeads)
      return;
    const int64_t dim = splits_columns(s) ? ref.shape[0] : ref.shape[1];
    if (dim % n != 0) {
      why = "tensor '" + ref.name + "': dimension " + std::to_string(dim) +
            " does not divide over " + std::to_string(n) + " ranks";
      return;
    }
    if (splits_columns(s)) {
      const DType t = type_of(ref);
      const DTypeInfo* info = dtype_info(t);
      const int64_t part = dim / n;
      if (info == nullptr || part % info->block_elems != 0) {
        why = "tensor '" + ref.name + "' (" + std::string(dtype_name(kernels::row_major_type(t))) +
              "): " + std::to_string(dim) + " columns over " + std::to_string(n) + " ranks gives " +
              std::to_string(part) + " per rank, not a multiple of the " +
              std::to_string(info ? info->block_elems : 0) + "-value quantization block";
      }
    }
  });
  return why;
}

}  // namespace

Result<ShardPlan> make_shard_plan(const ModelConfig& cfg, const TensorTypeFn& type_of, int n_ranks,
                                  int rank) {
  if (cfg.mla() && n_ranks > 1) {
    return unimplemented(
        "deepseek2 (multi-head latent attention) runs on one rank for now: its tensor-parallel "
        "split is not implemented yet");
  }
  if (std::string why = check(cfg, type_of, n_ranks); !why.empty()) {
    std::string ok;
    for (int n = 1; n <= 8; ++n) {
      if (check(cfg, type_of, n).empty()) ok += (ok.empty() ? "" : ", ") + std::to_string(n);
    }
    return failed_precondition("cannot split the model over " + std::to_string(n_ranks) +
                               " ranks: " + why + ". Rank counts that split evenly: " + ok);
  }
  if (rank < 0 || rank >= n_ranks) return invalid_argument("shard plan: rank out of range");
  ShardPlan p;
  p.n_ranks = n_ranks;
  p.rank = rank;
  p.full = cfg;
  p.local = cfg;
  const int64_t n = n_ranks;
  p.local.n_head = cfg.n_head / n;
  if (cfg.n_kv_head >= n) {
    p.local.n_kv_head = cfg.n_kv_head / n;
    p.kv_head_begin = rank * p.local.n_kv_head;
  } else {  // a group of n / n_kv_head ranks shares each KV head
    p.local.n_kv_head = 1;
    p.kv_head_begin = rank * cfg.n_kv_head / n;
  }
  p.local.n_ff = cfg.n_ff / n;
  p.local.n_ff_exp = cfg.n_ff_exp / n;
  p.ff_exp_begin = rank * p.local.n_ff_exp;
  if (const int64_t unit = expert_unit(cfg, type_of); uneven_experts(cfg, unit, n_ranks)) {
    const int64_t units = cfg.n_ff_exp / unit;
    p.ff_exp_begin = units * rank / n * unit;
    p.local.n_ff_exp = units * (rank + 1) / n * unit - p.ff_exp_begin;
  }
  p.local.n_ff_shexp = cfg.n_ff_shexp / n;
  p.vocab_begin.resize(static_cast<size_t>(n) + 1);
  for (int64_t r = 0; r <= n; ++r) p.vocab_begin[r] = cfg.n_vocab * r / n;
  return p;
}

Result<ShardPlan> make_shard_plan(const Model& model, int n_ranks, int rank) {
  const gguf::File& f = model.file();
  return make_shard_plan(
      model.config(),
      [&f](const TensorRef& ref) {
        const gguf::TensorInfo* t = f.find_tensor(ref.name);
        return t != nullptr ? t->type : DType::F32;
      },
      n_ranks, rank);
}

TensorShard tensor_shard(const ShardPlan& p, const TensorRef& ref) {
  TensorShard s;
  const Split split = ref.spec->split;
  if (p.n_ranks == 1 || split == Split::kReplicated) return s;
  s.whole = false;
  s.columns = splits_columns(split);
  const int64_t dim = s.columns ? ref.shape[0] : (ref.shape.size() > 1 ? ref.shape[1] : 1);
  const int64_t hd = p.full.head_dim;
  switch (split) {
    case Split::kRowsByHead:
      if (is_kv(ref.spec->role)) {
        s.begin = p.kv_head_begin * hd;
        s.count = p.local.n_kv_head * hd;
      } else {
        s.begin = p.rank * p.local.n_head * hd;
        s.count = p.local.n_head * hd;
      }
      break;
    case Split::kHeads:
      s.begin = p.rank * p.local.n_head;
      s.count = p.local.n_head;
      break;
    case Split::kVocab:
      s.begin = p.vocab_begin[p.rank];
      s.count = p.vocab_count();
      break;
    default:
      if (splits_expert_width(ref)) {  // the plan's range, even or uneven
        s.begin = p.ff_exp_begin;
        s.count = p.local.n_ff_exp;
        break;
      }
      s.count = dim / p.n_ranks;
      s.begin = p.rank * s.count;
  }
  // 1-D tensors (biases) split their only dimension: treat it as rows of one value.
  if (ref.shape.size() == 1) s.columns = true;
  return s;
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
    if (dtype_is_internal(w.type) &&
        (s.columns || s.begin % kernels::kRepackRows != 0 || s.count % kernels::kRepackRows != 0)) {
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
    if (!s.columns) {
      // Rows of every expert slice: offset the pointer, keep the expert stride (no copy).
      w.data = base + static_cast<size_t>(s.begin) * w.row_bytes;
      w.shape[1] = s.count;
      w.n_bytes = w.row_bytes * static_cast<uint64_t>(s.count * n_slices);
      bytes += w.n_bytes;
      return;  // slice_bytes stays: it is the stride between experts
    }
    // Columns: repack every row's block range into a per-rank copy.
    const DTypeInfo* info = dtype_info(w.type);
    const size_t col_off = static_cast<size_t>(s.begin / info->block_elems) * info->block_bytes;
    const size_t new_row = static_cast<size_t>(s.count / info->block_elems) * info->block_bytes;
    const int64_t rows = (w.shape.size() > 1 ? w.shape[1] : 1) * n_slices;
    uint8_t* dst = model.keep_bytes(new_row * static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) {
      std::memcpy(dst + static_cast<size_t>(r) * new_row,
                  base + static_cast<size_t>(r) * w.row_bytes + col_off, new_row);
    }
    Result<const void*> mapped = backend.map_weights({dst, new_row * static_cast<size_t>(rows)});
    if (!mapped.ok()) {
      first = mapped.status().with_context("mapping the shard of " + ref.name);
      return;
    }
    w.data = *mapped;
    w.shape[0] = s.count;
    w.row_bytes = new_row;
    w.slice_bytes = new_row * static_cast<size_t>(w.shape.size() > 1 ? w.shape[1] : 1);
    w.n_bytes = new_row * static_cast<uint64_t>(rows);
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
  return bytes;
}

}  // namespace arc
