#include "arc/eval/windows.h"

#include <algorithm>
#include <string>

namespace arc::eval {

Result<std::vector<EvalWindow>> plan_windows(int64_t n_tokens, int64_t ctx, int64_t stride) {
  if (ctx < 4) return invalid_argument("--ctx must be at least 4 tokens");
  if (stride < 1 || stride > ctx) {
    return invalid_argument("--stride must be between 1 and --ctx (" + std::to_string(ctx) + ")");
  }
  if (n_tokens < ctx) {
    return invalid_argument("the text has " + std::to_string(n_tokens) +
                            " tokens, fewer than one window of --ctx " + std::to_string(ctx) +
                            ": give a longer text or --ctx " +
                            std::to_string(std::max<int64_t>(4, n_tokens)) + " or less");
  }
  std::vector<EvalWindow> out;
  int64_t scored_end = 0;  // tokens before this one have been scored (or skipped by the stride)
  auto add = [&](int64_t begin) {
    EvalWindow w;
    w.begin = begin;
    w.end = begin + ctx;
    w.score_begin = std::max(begin + ctx / 2, scored_end);
    if (w.score_begin < w.end) {
      out.push_back(w);
      scored_end = w.end;
    }
  };
  int64_t begin = 0;
  for (; begin + ctx <= n_tokens; begin += stride) add(begin);
  // Tokens past the last full stride: one more window ending at the text's end.
  if (scored_end < n_tokens && n_tokens - ctx > out.back().begin) add(n_tokens - ctx);
  return out;
}

}  // namespace arc::eval
