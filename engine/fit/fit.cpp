// The fit report: per-box memory budget, verdict, largest context, decode ceiling and link load
// (formulas in arc/fit.h).
#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "arc/fit.h"

namespace arc::fit {

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kFits:
      return "fits";
    case Verdict::kTight:
      return "tight";
    case Verdict::kDoesNotFit:
      return "does not fit";
  }
  return "?";
}

std::string format_gib(double bytes) {
  return fmt::format("{:.1f} GiB", bytes / kGiB);
}
std::string format_gb(double bytes) {
  return fmt::format("{:.1f} GB", bytes / kGB);
}

namespace {

// Longest context the search tries when the model does not state its own limit.
constexpr int64_t kContextSearchCap = int64_t{1} << 26;

// Share of the whole-model KV one box holds (the worst box when heads do not divide evenly).
double kv_box_fraction(const Architecture& a, int boxes) {
  switch (a.attention) {
    case AttentionKind::kGqa: {
      if (a.kv_heads <= 0) return 1.0;
      const int64_t heads_per_box = (a.kv_heads + boxes - 1) / boxes;
      return static_cast<double>(heads_per_box) / static_cast<double>(a.kv_heads);
    }
    case AttentionKind::kMla:
      return 1.0;  // the latent is shared by all heads: replicated
    case AttentionKind::kUnknown:
      return 0.0;
  }
  return 0.0;
}

uint64_t to_bytes(double x) {
  return x <= 0 ? 0 : static_cast<uint64_t>(std::llround(x));
}

BoxBudget box_budget(const ModelSpec& m, const Cluster& c, const Workload& w, int boxes,
                     int64_t context) {
  BoxBudget b;
  const double n = boxes;
  b.weights = to_bytes(static_cast<double>(m.weights_bytes) / n);
  b.ngram_tables = w.ngram_on_disk ? 0 : to_bytes(static_cast<double>(m.ngram_table_bytes) / n);
  b.kv = to_bytes(kv_bytes_for_tokens(m.arch, context, w.kv_dtype) * w.concurrency *
                  kv_box_fraction(m.arch, boxes));
  // Hybrid models: the engine allocates a state slot per sequence, prefix-cache snapshots of
  // it (two per sequence, at least 8; sched/model_loader.cpp) and one zero slot.
  const double state_slots =
      m.arch.linear_layers > 0
          ? 1.0 + w.concurrency + std::max(8.0, 2.0 * static_cast<double>(w.concurrency))
          : 0.0;
  b.recurrent_state =
      to_bytes(static_cast<double>(recurrent_state_bytes(m.arch)) * state_slots / n);
  if (m.arch.hidden > 0) {
    // Activations of one micro-batch (about a dozen hidden-wide f32 buffers) + f32 logits for
    // every sequence, split by vocabulary like the output head.
    const double act = static_cast<double>(w.ubatch_tokens) * m.arch.hidden * 4.0 * 12.0;
    const double logits = static_cast<double>(w.concurrency) * m.arch.vocab * 4.0 / n;
    b.workspace = to_bytes(act + logits);
  }
  b.runtime = to_bytes(c.runtime_gib * kGiB);
  b.reserve = to_bytes(c.reserve_gib * kGiB);
  b.used =
      b.weights + b.ngram_tables + b.kv + b.recurrent_state + b.workspace + b.runtime + b.reserve;
  b.usable = to_bytes(c.usable_gib * kGiB);
  b.headroom = static_cast<int64_t>(b.usable) - static_cast<int64_t>(b.used);
  return b;
}

Verdict verdict_for(const BoxBudget& b, const Cluster& c) {
  if (b.headroom < 0) return Verdict::kDoesNotFit;
  if (static_cast<double>(b.headroom) < c.tight_below_gib * kGiB) return Verdict::kTight;
  return Verdict::kFits;
}

// Largest context with headroom >= 0 at the workload's concurrency; 0 when even one token does
// not fit. Sets `capped` when the model's own limit is what stops it.
int64_t largest_context(const ModelSpec& m, const Cluster& c, const Workload& w, int boxes,
                        bool* capped) {
  *capped = false;
  if (box_budget(m, c, w, boxes, 1).headroom < 0) return 0;
  const int64_t cap = m.arch.max_context > 0 ? m.arch.max_context : kContextSearchCap;
  if (m.arch.attention == AttentionKind::kUnknown) {
    // KV unknown: only the model's own limit is known, if any (-1: no limit known).
    *capped = m.arch.max_context > 0;
    return m.arch.max_context > 0 ? m.arch.max_context : -1;
  }
  if (box_budget(m, c, w, boxes, cap).headroom >= 0) {
    *capped = true;
    return cap;
  }
  int64_t lo = 1, hi = cap;  // lo fits, hi does not
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (box_budget(m, c, w, boxes, mid).headroom >= 0) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

double read_bytes_per_box(const ModelSpec& m, const Workload& w, int boxes, int64_t context) {
  return static_cast<double>(m.active_bytes_per_token) / boxes +
         kv_bytes_for_tokens(m.arch, context, w.kv_dtype) * kv_box_fraction(m.arch, boxes);
}

double ceiling(const ModelSpec& m, const Cluster& c, const Workload& w, int boxes,
               int64_t context) {
  const double read = read_bytes_per_box(m, w, boxes, context);
  return read > 0 ? c.bandwidth_gbs * kGB / read : 0.0;
}

double link_bytes(const ModelSpec& m, const Workload& w, int boxes) {
  if (boxes <= 1) return 0.0;
  const double ring = 2.0 * (boxes - 1) / boxes;
  return static_cast<double>(m.arch.layers) * 2.0 * static_cast<double>(m.arch.hidden) *
         w.activation_bytes * ring;
}

std::string size_pair(double bytes) {
  return fmt::format("{} ({})", format_gib(bytes), format_gb(bytes));
}

std::string make_reason(const Report& r) {
  const BoxBudget& b = r.per_box;
  const int boxes = r.cluster.boxes;
  const std::string per = boxes == 1 ? "on one box" : fmt::format("on each of {} boxes", boxes);
  if (r.verdict == Verdict::kDoesNotFit) {
    std::string s = fmt::format(
        "needs {} {}, {} more than the {} a box has", size_pair(static_cast<double>(b.used)), per,
        size_pair(static_cast<double>(-b.headroom)), size_pair(static_cast<double>(b.usable)));
    const uint64_t fixed = b.weights + b.ngram_tables + b.runtime + b.reserve + b.workspace;
    if (b.weights + b.ngram_tables > b.usable) {
      s += fmt::format("; the weights alone take {} a box", format_gib(b.weights + b.ngram_tables));
    } else if (fixed <= b.usable && r.max_context > 0 && r.kv_known) {
      s += fmt::format(
          "; the KV cache for {} tokens x {} sequences takes {} a box, and the "
          "largest context that fits is {} tokens",
          r.workload.context, r.workload.concurrency, format_gib(b.kv), r.max_context);
    }
    if (r.model.ngram_table_bytes > 0 && !r.workload.ngram_on_disk) {
      s += fmt::format("; keeping the n-gram tables on disk would free {} a box",
                       format_gib(static_cast<double>(b.ngram_tables)));
    }
    return s;
  }
  if (r.verdict == Verdict::kTight) {
    return fmt::format(
        "uses {} of the {} a box has {}, leaving only {} of headroom, under the "
        "{:.1f} GiB margin (a GB10 that runs out of memory freezes)",
        format_gib(b.used), format_gib(b.usable), per, format_gib(static_cast<double>(b.headroom)),
        r.cluster.tight_below_gib);
  }
  return fmt::format("uses {} of the {} a box has {}, leaving {} of headroom", format_gib(b.used),
                     format_gib(b.usable), per, format_gib(static_cast<double>(b.headroom)));
}

Status validate(const ModelSpec& m, const Cluster& c, const Workload& w) {
  if (c.boxes < 1)
    return invalid_argument(fmt::format("boxes must be at least 1, got {}", c.boxes));
  if (c.boxes > 64)
    return invalid_argument(fmt::format("boxes must be at most 64, got {}", c.boxes));
  if (w.context < 1) {
    return invalid_argument(fmt::format("context must be at least 1 token, got {}", w.context));
  }
  if (w.concurrency < 1) {
    return invalid_argument(
        fmt::format("concurrency must be at least 1 sequence, got {}", w.concurrency));
  }
  if (w.ubatch_tokens < 1) return invalid_argument("ubatch_tokens must be at least 1");
  if (!(c.usable_gib > 0)) {
    return invalid_argument(
        fmt::format("usable memory per box must be > 0 GiB, got {}", c.usable_gib));
  }
  if (!(c.bandwidth_gbs > 0)) {
    return invalid_argument(
        fmt::format("memory bandwidth per box must be > 0 GB/s, got {}", c.bandwidth_gbs));
  }
  if (!(c.link_gbs > 0)) {
    return invalid_argument(fmt::format("link bandwidth must be > 0 GB/s, got {}", c.link_gbs));
  }
  if (!(c.reserve_gib >= 0) || !(c.runtime_gib >= 0) || !(c.tight_below_gib >= 0)) {
    return invalid_argument("reserve, runtime and tight margin must be >= 0 GiB");
  }
  if (!(w.activation_bytes > 0)) return invalid_argument("activation bytes must be > 0");
  if (m.weights_bytes == 0) {
    return invalid_argument("model '" + m.name +
                            "' has no weights (0 bytes); check the file or "
                            "the catalog build");
  }
  return ok_status();
}

}  // namespace

Result<Report> compute(const ModelSpec& model, const Cluster& cluster, const Workload& workload) {
  ARC_RETURN_IF_ERROR(validate(model, cluster, workload));
  Report r;
  r.model = model;
  r.cluster = cluster;
  r.workload = workload;
  const int boxes = cluster.boxes;
  const Architecture& a = model.arch;

  r.kv_known = a.attention != AttentionKind::kUnknown;
  r.kv_bytes_per_token = kv_bytes_per_token(a, workload.kv_dtype);
  r.kv_bytes_total =
      to_bytes(kv_bytes_for_tokens(a, workload.context, workload.kv_dtype) * workload.concurrency);
  r.per_box = box_budget(model, cluster, workload, boxes, workload.context);
  r.verdict = verdict_for(r.per_box, cluster);
  r.max_context = largest_context(model, cluster, workload, boxes, &r.max_context_capped);

  r.active_bytes_per_token = static_cast<double>(model.active_bytes_per_token);
  r.read_bytes_per_box = read_bytes_per_box(model, workload, boxes, workload.context);
  r.decode_ceiling_tok_s = ceiling(model, cluster, workload, boxes, workload.context);
  r.link_bytes_per_token = link_bytes(model, workload, boxes);
  r.link_utilisation = r.link_bytes_per_token * r.decode_ceiling_tok_s / (cluster.link_gbs * kGB);

  for (int n = 1; n <= 4; ++n) {
    BoxRow row;
    row.boxes = n;
    row.per_box = box_budget(model, cluster, workload, n, workload.context);
    row.verdict = verdict_for(row.per_box, cluster);
    bool capped = false;
    row.max_context = largest_context(model, cluster, workload, n, &capped);
    row.decode_ceiling_tok_s = ceiling(model, cluster, workload, n, workload.context);
    r.by_boxes.push_back(row);
  }

  r.warnings = model.notes;
  if (!r.kv_known) {
    r.warnings.push_back(
        "the KV cache layout of this model is unknown (not published, or not in the file's "
        "metadata): KV is counted as 0, so the verdict covers weights, runtime and reserve only");
  }
  if (a.hidden <= 0) r.warnings.push_back("hidden size unknown: workspaces not estimated");
  if (a.layers <= 0 || a.hidden <= 0) {
    r.warnings.push_back("layers or hidden size unknown: link bytes per token not computed");
  }
  if (model.active_bytes_per_token == 0) {
    r.warnings.push_back("active bytes per token unknown: no decode ceiling");
  }
  if (a.max_context > 0 && workload.context > a.max_context) {
    r.warnings.push_back(fmt::format("context {} is longer than the model's {} tokens",
                                     workload.context, a.max_context));
  }
  if (workload.ngram_on_disk && model.ngram_table_bytes == 0) {
    r.warnings.push_back(
        "n-gram tables on disk requested, but this model lists no separate "
        "n-gram table size; nothing was taken off");
  }
  r.reason = make_reason(r);
  return r;
}

}  // namespace arc::fit
