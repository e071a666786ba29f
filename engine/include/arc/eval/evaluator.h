// The evaluation loop: windows of the text through a model (and a reference model, or a
// reference's saved logits), per-token figures collected as each window finishes. Each window
// is one forward batch that returns logits for its scored positions only, so a window costs one
// prefill of ctx tokens.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "arc/eval/token_metrics.h"
#include "arc/eval/windows.h"
#include "arc/kernels/parallel.h"
#include "arc/status.h"

namespace arc::eval {

// Logits of one window: `tokens` [ctx] fed at positions 0..ctx-1 of a fresh sequence, logits
// for `rows` (indices into tokens, ascending) written to `logits` as [rows.size(), n_vocab]
// row-major. The evaluator hands the same vector back every window, so a source can swap its own
// buffer in and out (ForwardExecutor::wait does) instead of allocating ~100 MB of fresh,
// page-faulting memory per window at a real vocabulary.
using WindowLogits = std::function<Status(
    std::span<const int32_t> tokens, std::span<const int32_t> rows, std::vector<float>& logits)>;

struct EvalProgress {
  int64_t windows_done = 0;
  int64_t windows_total = 0;
  int64_t tokens_scored = 0;
  double seconds = 0;   // since the first window started
  double mean_nll = 0;  // of the model so far
  double mean_kl = 0;   // so far; 0 without a reference
};

struct EvalSetup {
  std::span<const int32_t> tokens;  // [n_tokens] the whole text, without BOS
  int64_t ctx = 512;
  int64_t stride = 256;
  int64_t max_windows = 0;     // 0: every window
  std::optional<int32_t> bos;  // replaces each window's first token (never scored)
  int64_t n_vocab = 0;         // width of every logit row
  WindowLogits model;          // required
  WindowLogits reference;      // a reference model, or empty
  // A reference's saved rows (the scored tokens of the first `saved_windows` windows of the same
  // plan), or null. Not together with `reference`.
  const CompressedLogits* saved = nullptr;
  int64_t saved_windows = 0;
  // > 0: keep the reference's rows compressed to at most this many entries (the model's rows
  // when there is no reference model) for write_reference_logits().
  int32_t save_top_k = 0;
  double save_tail_mass = 1e-4;    // CompressedLogits::tail_target of the saved rows
  int32_t save_tail_samples = 32;  // CompressedLogits::samples
  // Checked before each window: set (from a signal handler) to stop and keep what was measured.
  const std::atomic<bool>* stop = nullptr;
  kernels::Parallel* pool = nullptr;  // scores a window's rows in parallel when given
  std::function<void(const EvalProgress&)> on_window;
};

// Per scored token, in window order.
struct EvalResult {
  int64_t windows_planned = 0;
  int64_t windows_done = 0;
  int64_t tokens_fed = 0;      // window tokens through the model (ctx per window)
  double seconds = 0;          // wall time of the windows (forward and scoring)
  double forward_seconds = 0;  // of which in the forward callbacks (logits on the host)
  bool interrupted = false;
  std::vector<double> nll;         // the model's -log p(next token)
  std::vector<double> nll_ref;     // the reference's; empty without one
  std::vector<double> kl;          // KL(R||Q); from saved logits KlBounds::estimate
  std::vector<double> kl_sampled;  // saved logits only: KlBounds::sampled (for means)
  std::vector<double> kl_lo;       // saved logits only: the bounds the true KL lies within
  std::vector<double> kl_hi;
  std::vector<uint8_t> top1;  // 1 where the model's greedy token is the reference's
  CompressedLogits saved;     // save_top_k > 0
};

Result<EvalResult> run_eval(const EvalSetup& setup);

}  // namespace arc::eval
