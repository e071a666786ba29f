// Windows of an evaluation: the text's tokens are fed in windows of `ctx` tokens, and only the
// second half of each window is scored, so every scored token sees at least ctx/2 tokens before
// it (the scheme of llama.cpp's perplexity tool). Windows start every `stride` tokens; a token is
// scored once at most: a window scores only what the windows before it did not. A last window
// ends at the text's end when tokens past the last full stride remain.
#pragma once

#include <cstdint>
#include <vector>

#include "arc/status.h"

namespace arc::eval {

struct EvalWindow {
  int64_t begin = 0;        // first token fed (an index into the text's tokens)
  int64_t score_begin = 0;  // first token whose prediction is scored
  int64_t end = 0;          // one past the last token fed and scored; end - begin == ctx
  int64_t n_scored() const { return end - score_begin; }
};

// The windows over `n_tokens` tokens. Errors: ctx < 4, stride outside [1, ctx], or a text shorter
// than one window (the message says how long the text is and what --ctx would fit).
Result<std::vector<EvalWindow>> plan_windows(int64_t n_tokens, int64_t ctx, int64_t stride);

}  // namespace arc::eval
