// Summaries of per-token values: mean with its standard error, and order statistics.
//
// The standard error is that of the mean of the per-token values (sample standard deviation /
// sqrt(n)), as llama.cpp's perplexity and KL tools report it. Tokens of one text are not
// independent (a hard passage makes several neighbours hard), so it understates the spread a
// different text would give: read it as a lower bound of the uncertainty (docs/eval.md).
#pragma once

#include <cstdint>
#include <span>

namespace arc::eval {

struct Summary {
  int64_t n = 0;
  double mean = 0;
  double se = 0;  // standard error of the mean; 0 when n < 2
  double median = 0, p90 = 0, p99 = 0, max = 0;
};

// Percentiles interpolate linearly between order statistics (numpy's default, "type 7").
Summary summarize(std::span<const double> values);

// The z of a two-sided 95% interval of a normal distribution.
inline constexpr double kZ95 = 1.959963984540054;

}  // namespace arc::eval
