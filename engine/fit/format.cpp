// Plain-text rendering of a fit report: the per-box table and the 1-4 box table.
#include <string>

#include <fmt/format.h>

#include "arc/fit.h"

namespace arc::fit {

namespace {

std::string gib(double bytes) {
  return fmt::format("{:9.2f} GiB", bytes / kGiB);
}

std::string context_text(int64_t ctx, bool capped) {
  if (ctx < 0) return "unknown";
  if (ctx == 0) return "none";
  return capped ? fmt::format("{} (model max)", ctx) : fmt::format("{}", ctx);
}

}  // namespace

std::string format_report_text(const Report& r) {
  const BoxBudget& b = r.per_box;
  std::string s;
  s += fmt::format("model      {}\n", r.model.name);
  s += fmt::format("weights    {} ({}), {}\n",
                   format_gib(static_cast<double>(r.model.weights_bytes)),
                   format_gb(static_cast<double>(r.model.weights_bytes)), r.model.weights_basis);
  if (r.model.ngram_table_bytes > 0) {
    s += fmt::format("n-gram     {} ({})\n",
                     format_gib(static_cast<double>(r.model.ngram_table_bytes)),
                     r.workload.ngram_on_disk ? "kept on disk" : "in memory");
  }
  s += fmt::format(
      "cluster    {} box(es), {:.1f} GiB usable and {:.0f} GB/s each, link {:.1f} GB/s\n",
      r.cluster.boxes, r.cluster.usable_gib, r.cluster.bandwidth_gbs, r.cluster.link_gbs);
  s += fmt::format("workload   context {} x {} sequence(s), KV {}\n", r.workload.context,
                   r.workload.concurrency, kv_dtype_name(r.workload.kv_dtype));
  s += "\nper box\n";
  s += fmt::format("  weights          {}\n", gib(static_cast<double>(b.weights)));
  if (b.ngram_tables > 0)
    s += fmt::format("  n-gram tables    {}\n", gib(static_cast<double>(b.ngram_tables)));
  s += fmt::format("  KV cache         {}{}\n", gib(static_cast<double>(b.kv)),
                   r.kv_known ? "" : "  (layout unknown)");
  if (b.recurrent_state > 0) {
    s += fmt::format("  recurrent state  {}\n", gib(static_cast<double>(b.recurrent_state)));
  }
  s += fmt::format("  workspaces       {}\n", gib(static_cast<double>(b.workspace)));
  s += fmt::format("  runtime          {}\n", gib(static_cast<double>(b.runtime)));
  s += fmt::format("  reserve          {}\n", gib(static_cast<double>(b.reserve)));
  s += fmt::format("  used             {}\n", gib(static_cast<double>(b.used)));
  s += fmt::format("  usable           {}\n", gib(static_cast<double>(b.usable)));
  s += fmt::format("  headroom         {}\n", gib(static_cast<double>(b.headroom)));
  s += fmt::format("\nverdict    {}: {}\n", verdict_name(r.verdict), r.reason);
  s += fmt::format("max context at {} sequence(s): {}\n", r.workload.concurrency,
                   context_text(r.max_context, r.max_context_capped));
  if (r.kv_known) {
    s += fmt::format("KV per token {:.0f} bytes ({})\n", r.kv_bytes_per_token,
                     kv_dtype_name(r.workload.kv_dtype));
    const Architecture& a = r.model.arch;
    if (a.sliding_window > 0 && a.sliding_layers > 0) {
      // The figure above is before the window cap; what one sequence really holds:
      s += fmt::format("KV per sequence at {} tokens {} ({} sliding-window layers hold {})\n",
                       r.workload.context,
                       format_gib(kv_bytes_for_tokens(a, r.workload.context, r.workload.kv_dtype)),
                       a.sliding_layers, a.sliding_window);
    }
  }
  s += fmt::format(
      "decode ceiling {:.1f} tok/s (one stream; reads {} of active weights per token, "
      "{} per box with KV)\n",
      r.decode_ceiling_tok_s, format_gb(r.active_bytes_per_token), format_gb(r.read_bytes_per_box));
  if (r.cluster.boxes > 1) {
    s += fmt::format("link       {:.2f} MB per token per box, {:.3f}% of the link at the ceiling\n",
                     r.link_bytes_per_token / 1e6, r.link_utilisation * 100.0);
  }
  s += "\nboxes  verdict        used per box  headroom per box  max context        ceiling tok/s\n";
  for (const BoxRow& row : r.by_boxes) {
    s += fmt::format("{:5}  {:<13} {}    {}  {:<17} {:8.1f}\n", row.boxes,
                     verdict_name(row.verdict), gib(static_cast<double>(row.per_box.used)),
                     gib(static_cast<double>(row.per_box.headroom)),
                     context_text(row.max_context, false), row.decode_ceiling_tok_s);
  }
  for (const std::string& w : r.warnings) s += "note: " + w + "\n";
  return s;
}

}  // namespace arc::fit
