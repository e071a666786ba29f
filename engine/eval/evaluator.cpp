#include "arc/eval/evaluator.h"

#include <chrono>
#include <numeric>
#include <string>

namespace arc::eval {
namespace {

// One window's inputs: its tokens (BOS first when the model wants one) and the logit rows that
// predict its scored tokens (row i predicts token i + 1).
struct WindowInput {
  std::vector<int32_t> tokens;  // [ctx]
  std::vector<int32_t> rows;    // [n_scored]
};

WindowInput window_input(const EvalSetup& s, const EvalWindow& w) {
  WindowInput in;
  in.tokens.assign(s.tokens.begin() + w.begin, s.tokens.begin() + w.end);
  if (s.bos) in.tokens[0] = *s.bos;
  in.rows.resize(static_cast<size_t>(w.n_scored()));
  std::iota(in.rows.begin(), in.rows.end(), static_cast<int32_t>(w.score_begin - w.begin - 1));
  return in;
}

Status check_rows(const std::vector<float>& logits, size_t rows, int64_t n_vocab, const char* who) {
  if (logits.size() != rows * static_cast<size_t>(n_vocab)) {
    return internal_error(std::string(who) + " returned " + std::to_string(logits.size()) +
                          " logits for " + std::to_string(rows) + " rows of " +
                          std::to_string(n_vocab));
  }
  return ok_status();
}

}  // namespace

Result<EvalResult> run_eval(const EvalSetup& s) {
  if (!s.model) return invalid_argument("eval: no model to evaluate");
  if (s.reference && s.saved != nullptr) {
    return invalid_argument("eval: a reference model and saved reference logits at once");
  }
  if (s.n_vocab < 1) return invalid_argument("eval: n_vocab must be positive");
  for (int32_t t : s.tokens) {
    if (t < 0 || t >= s.n_vocab) {
      return invalid_argument("eval: token id " + std::to_string(t) +
                              " outside the model's vocabulary of " + std::to_string(s.n_vocab));
    }
  }
  ARC_ASSIGN_OR_RETURN(std::vector<EvalWindow> plan,
                       plan_windows(static_cast<int64_t>(s.tokens.size()), s.ctx, s.stride));
  int64_t n_windows = static_cast<int64_t>(plan.size());
  if (s.max_windows > 0) n_windows = std::min(n_windows, s.max_windows);
  if (s.saved != nullptr) {
    // The saved rows must be exactly those of the first saved_windows windows of this plan.
    int64_t all = 0;
    for (int64_t i = 0; i < s.saved_windows && i < static_cast<int64_t>(plan.size()); ++i) {
      all += plan[i].n_scored();
    }
    if (s.saved_windows > static_cast<int64_t>(plan.size()) || all != s.saved->n_rows()) {
      return invalid_argument("eval: the saved logits hold " + std::to_string(s.saved->n_rows()) +
                              " rows, not what " + std::to_string(s.saved_windows) +
                              " windows of this text score");
    }
    n_windows = std::min(n_windows, s.saved_windows);
  }
  const bool with_ref = static_cast<bool>(s.reference) || s.saved != nullptr;

  EvalResult out;
  out.windows_planned = n_windows;
  out.saved.k = s.save_top_k;
  out.saved.tail_target = s.save_tail_mass;
  out.saved.samples = s.save_tail_samples;
  const auto t0 = std::chrono::steady_clock::now();
  int64_t saved_row = 0;  // next row of s.saved
  double nll_sum = 0, kl_sum = 0;
  std::vector<float> q, r;  // this window's logits, reused across windows
  for (int64_t wi = 0; wi < n_windows; ++wi) {
    if (s.stop != nullptr && s.stop->load()) {
      out.interrupted = true;
      break;
    }
    const EvalWindow& w = plan[static_cast<size_t>(wi)];
    const WindowInput in = window_input(s, w);
    const size_t n = in.rows.size();
    const auto f0 = std::chrono::steady_clock::now();
    ARC_RETURN_IF_ERROR(s.model(in.tokens, in.rows, q));
    ARC_RETURN_IF_ERROR(check_rows(q, n, s.n_vocab, "the model"));
    if (s.reference) {
      ARC_RETURN_IF_ERROR(s.reference(in.tokens, in.rows, r));
      ARC_RETURN_IF_ERROR(check_rows(r, n, s.n_vocab, "the reference model"));
    }
    out.forward_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - f0).count();
    // Per-row figures, computed in parallel into this window's slots.
    const size_t base = out.nll.size();
    out.nll.resize(base + n);
    if (with_ref) {
      out.nll_ref.resize(base + n);
      out.kl.resize(base + n);
      out.top1.resize(base + n);
    }
    if (s.saved != nullptr) {
      out.kl_sampled.resize(base + n);
      out.kl_lo.resize(base + n);
      out.kl_hi.resize(base + n);
    }
    const size_t v = static_cast<size_t>(s.n_vocab);
    auto row_of = [&](const std::vector<float>& l, size_t i) {
      return std::span<const float>(l.data() + i * v, v);
    };
    kernels::parallel_for(s.pool, static_cast<int64_t>(n), 4, [&](int64_t b, int64_t e) {
      std::vector<double> scratch;
      ExpRow qe, re;
      for (int64_t i = b; i < e; ++i) {
        const size_t at = base + static_cast<size_t>(i);
        const int32_t target = s.tokens[static_cast<size_t>(w.score_begin + i)];
        const auto qr = row_of(q, static_cast<size_t>(i));
        exp_row(qr, qe);
        const double lse_q = qe.lse();
        out.nll[at] = lse_q - qr[static_cast<size_t>(target)];
        if (s.reference) {
          const auto rr = row_of(r, static_cast<size_t>(i));
          exp_row(rr, re);
          out.nll_ref[at] = re.lse() - rr[static_cast<size_t>(target)];
          out.kl[at] = kl_divergence(rr, re, qr, lse_q);
          out.top1[at] = argmax(qr) == argmax(rr);
        } else if (s.saved != nullptr) {
          const int64_t row = saved_row + i;
          out.nll_ref[at] = -static_cast<double>(s.saved->target_logp[row]);
          const KlBounds kb = kl_from_compressed(*s.saved, row, qr, qe, scratch);
          out.kl[at] = kb.estimate;
          out.kl_sampled[at] = kb.sampled;
          out.kl_lo[at] = kb.lo;
          out.kl_hi[at] = kb.hi;
          out.top1[at] = argmax(qr) == s.saved->ids[s.saved->begin[row]];
        }
      }
    });
    saved_row += static_cast<int64_t>(n);
    if (s.save_top_k > 0) {
      // Rows compressed in parallel into blocks, appended in order.
      const std::vector<float>& src = s.reference ? r : q;
      const int64_t n_blocks = std::min<int64_t>(static_cast<int64_t>(n), 16);
      std::vector<CompressedLogits> parts(static_cast<size_t>(n_blocks));
      kernels::parallel_for(s.pool, n_blocks, 1, [&](int64_t b, int64_t e) {
        CompressScratch scratch;
        for (int64_t blk = b; blk < e; ++blk) {
          CompressedLogits& part = parts[static_cast<size_t>(blk)];
          part.k = s.save_top_k;
          part.tail_target = s.save_tail_mass;
          part.samples = s.save_tail_samples;
          for (size_t i = n * blk / n_blocks; i < n * (blk + 1) / n_blocks; ++i) {
            const int32_t target = s.tokens[static_cast<size_t>(w.score_begin) + i];
            compress_row(row_of(src, i), target, part, scratch);
          }
        }
      });
      for (const CompressedLogits& part : parts) append_rows(out.saved, part);
    }
    for (size_t i = base; i < base + n; ++i) {
      nll_sum += out.nll[i];
      if (with_ref) kl_sum += s.saved != nullptr ? out.kl_sampled[i] : out.kl[i];
    }
    out.windows_done = wi + 1;
    out.tokens_fed += s.ctx;
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s.on_window) {
      EvalProgress p;
      p.windows_done = out.windows_done;
      p.windows_total = n_windows;
      p.tokens_scored = static_cast<int64_t>(out.nll.size());
      p.seconds = out.seconds;
      p.mean_nll = nll_sum / static_cast<double>(out.nll.size());
      p.mean_kl = with_ref ? kl_sum / static_cast<double>(out.nll.size()) : 0;
      s.on_window(p);
    }
  }
  return out;
}

}  // namespace arc::eval
