// A reasoning budget (llama-server's thinking_budget_tokens, Anthropic's thinking.budget_tokens):
// once a reply that starts inside the <think> block its template opened has written `budget`
// tokens of reasoning without closing it, the engine writes the closing tokens itself, so the
// answer (or a forced tool call) follows. A model that closes the block earlier is left alone.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace arc {

class ReasoningBudget {
 public:
  ReasoningBudget() = default;
  // budget < 0: none. close: the tokens written at the budget ("\n</think>\n\n"); tag: the
  // tokens of "</think>" alone, which end the reasoning when the model writes them.
  ReasoningBudget(int64_t budget, std::vector<int32_t> close, std::vector<int32_t> tag);

  // The token the budget forces next, or none (sample as usual).
  std::optional<int32_t> forced() const;
  // Every generated token, forced or sampled, in order.
  void accept(int32_t token);
  bool open() const { return open_; }

 private:
  bool open_ = false;
  int64_t left_ = 0;
  std::vector<int32_t> close_, tag_;
  size_t written_ = 0;  // of close_, once forcing
  size_t matched_ = 0;  // of tag_ in the model's own tokens
};

}  // namespace arc
