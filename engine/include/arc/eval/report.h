// The figures of an evaluation, as text for people and JSON for tools, with 95% confidence
// intervals (mean +- 1.96 standard errors of per-token values; arc/eval/stats.h says what they
// leave out).
#pragma once

#include <cstdint>
#include <string>

#include "arc/eval/evaluator.h"

namespace arc::eval {

struct ReportInfo {
  std::string model;
  std::string reference;       // file of the reference model or of its saved logits; "" if none
  std::string reference_kind;  // "model" or "saved logits"
  std::string text;            // "built-in" or the text file
  int64_t text_tokens = 0;
  int64_t ctx = 0;
  int64_t stride = 0;
  // Saved logits compared against: most entries per token, the tail target, entries per token.
  int32_t saved_top_k = 0;
  double saved_tail_target = 0;
  int32_t saved_tail_samples = 0;
  double saved_mean_entries = 0;
  std::string backend;
  int tp = 1;
};

std::string report_json(const ReportInfo& info, const EvalResult& r);
std::string report_text(const ReportInfo& info, const EvalResult& r);

}  // namespace arc::eval
