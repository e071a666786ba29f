// The choice between the expert width's block split and whole experts per rank (arc/moe_split.h).
#include "arc/moe_split.h"

#include <algorithm>

#include <fmt/format.h>

namespace arc {
namespace {

// C(n, x) in double (n up to a few thousand, x up to k: well inside double's range).
double choose(int64_t n, int64_t x) {
  if (x < 0 || x > n) return 0.0;
  double c = 1.0;
  for (int64_t i = 1; i <= x; ++i) c = c * static_cast<double>(n - x + i) / static_cast<double>(i);
  return c;
}

std::string counts(const ExpertSplit& s) {
  std::string out;
  bool even = true;
  for (int r = 0; r < s.ranks(); ++r) {
    out += (r == 0 ? "" : " + ") + std::to_string(s.count(r));
    even = even && s.count(r) == s.count(0);
  }
  return even ? fmt::format("{} per rank", s.count(0)) : out;
}

}  // namespace

Result<MoeSplitMode> parse_moe_split(std::string_view s) {
  if (s == "auto") return MoeSplitMode::kAuto;
  if (s == "tp") return MoeSplitMode::kTp;
  if (s == "ep") return MoeSplitMode::kEp;
  return invalid_argument("--moe-split takes tp, ep or auto, not '" + std::string(s) + "'");
}

std::string_view moe_split_name(MoeSplitMode m) {
  switch (m) {
    case MoeSplitMode::kTp:
      return "tp";
    case MoeSplitMode::kEp:
      return "ep";
    default:
      return "auto";
  }
}

ExpertSplit split_experts(int64_t n_expert, int ranks) {
  ExpertSplit s;
  s.n_expert = n_expert;
  s.begin.resize(static_cast<size_t>(std::max(ranks, 1)) + 1);
  // Rounded up: the larger shares on the first ranks (128 over 3: 43 + 43 + 42).
  for (int r = 0; r <= ranks; ++r) s.begin[r] = (n_expert * r + ranks - 1) / ranks;
  return s;
}

double expected_busiest_experts(const ExpertSplit& s, int64_t k) {
  k = std::min(k, s.n_expert);
  if (k <= 0) return 0.0;
  const double all = choose(s.n_expert, k);
  // E[max] = sum over m >= 0 of P(max > m); P(max <= m) counts the k-subsets that put at most m
  // experts on every rank: the z^k coefficient of prod_r sum_{x <= m} C(count_r, x) z^x.
  double expected = 0.0;
  for (int64_t m = 0; m < k; ++m) {
    std::vector<double> ways(static_cast<size_t>(k) + 1, 0.0);
    ways[0] = 1.0;
    for (int r = 0; r < s.ranks(); ++r) {
      std::vector<double> next(ways.size(), 0.0);
      for (int64_t j = 0; j <= k; ++j) {
        if (ways[j] == 0.0) continue;
        for (int64_t x = 0; x <= std::min(m, s.count(r)) && j + x <= k; ++x) {
          next[j + x] += ways[j] * choose(s.count(r), x);
        }
      }
      ways = std::move(next);
    }
    expected += 1.0 - ways[k] / all;
  }
  return expected;
}

Result<MoeSplitChoice> choose_moe_split(int64_t n_expert, int64_t k, const Result<WidthSplit>& tp,
                                        int ranks, MoeSplitMode mode) {
  MoeSplitChoice c;
  c.requested = mode;
  c.k = k;
  c.experts = split_experts(n_expert, ranks);
  const bool ep_ok = n_expert >= ranks && ranks > 1;
  if (tp.ok()) {
    c.tp = *tp;
    c.tp_prefill = c.tp.largest_share();
    c.tp_decode = static_cast<double>(k) * c.tp_prefill;
  }
  if (ep_ok) {
    c.ep_decode = expected_busiest_experts(c.experts, k);
    c.ep_prefill = static_cast<double>(c.experts.count(0)) / static_cast<double>(n_expert);
  }
  switch (mode) {
    case MoeSplitMode::kTp:
      if (!tp.ok()) return tp.status();
      return c;
    case MoeSplitMode::kEp:
      if (ranks <= 1) return c;  // one rank: nothing to split
      if (!ep_ok) {
        return failed_precondition(fmt::format(
            "--moe-split ep: {} experts cannot be held whole by {} ranks (each needs one); use "
            "--moe-split tp",
            n_expert, ranks));
      }
      c.ep = true;
      return c;
    default:
      break;
  }
  if (!tp.ok()) {
    if (!ep_ok) return tp.status();
    c.ep = true;
    return c;
  }
  // A small tolerance: equal loads (up to rounding) keep the block split.
  constexpr double kEps = 1e-9;
  c.ep = ep_ok && c.ep_decode < c.tp_decode - kEps && c.ep_prefill <= c.tp_prefill + kEps;
  return c;
}

std::string describe(const MoeSplitChoice& c) {
  const std::string tp_text = c.tp.begin.empty() ? std::string("the block split (impossible)")
                                                 : describe(c.tp, "the expert width");
  const std::string head =
      c.ep ? fmt::format("routed experts: expert parallelism, {} of {} whole experts",
                         counts(c.experts), c.experts.n_expert)
           : "routed experts: block split, a share of every expert per rank";
  if (c.requested != MoeSplitMode::kAuto) {
    return fmt::format(
        "{} (--moe-split {}; busiest rank reads {:.2f} of {} routed experts per "
        "token, {:.2f} the other way)",
        head, moe_split_name(c.requested), c.ep ? c.ep_decode : c.tp_decode, c.k,
        c.ep ? c.tp_decode : c.ep_decode);
  }
  if (c.tp.begin.empty()) return head + " (auto: the expert width does not split)";
  if (c.ep_decode == 0.0) return head + " (auto: fewer experts than ranks)";
  return fmt::format(
      "{} (auto: busiest rank reads {:.2f} of {} routed experts per token with whole experts vs "
      "{:.2f} with {}; prefill {:.0f}% vs {:.0f}%; the link carries the same all-reduce)",
      head, c.ep_decode, c.k, c.tp_decode, tp_text, 100.0 * c.ep_prefill, 100.0 * c.tp_prefill);
}

}  // namespace arc
