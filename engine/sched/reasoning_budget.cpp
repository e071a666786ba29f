// A reasoning budget: closing the opened <think> block after a number of tokens.
#include "sched/reasoning_budget.h"

namespace arc {

ReasoningBudget::ReasoningBudget(int64_t budget, std::vector<int32_t> close,
                                 std::vector<int32_t> tag)
    : open_(budget >= 0 && !close.empty()),
      left_(budget),
      close_(std::move(close)),
      tag_(std::move(tag)) {}

std::optional<int32_t> ReasoningBudget::forced() const {
  if (!open_ || left_ > 0) return std::nullopt;
  return close_[written_];
}

void ReasoningBudget::accept(int32_t token) {
  if (!open_) return;
  if (left_ <= 0) {
    if (++written_ == close_.size()) open_ = false;
    return;
  }
  --left_;
  // The model's own "</think>": the reasoning is over, nothing to force.
  if (!tag_.empty()) {
    matched_ = token == tag_[matched_] ? matched_ + 1 : (token == tag_[0] ? 1 : 0);
    if (matched_ == tag_.size()) open_ = false;
  }
}

}  // namespace arc
