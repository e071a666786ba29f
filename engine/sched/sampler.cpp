#include "sched/sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_map>

#include "arc/kernels/sampling.h"

namespace arc {

namespace {

// The k best ids of `logits` (k <= kernels::kMaxCandidates) into ids[k] / values[k], best first,
// lower id on ties: the linear-time heap of kernels::top_candidates (one compare rejects almost
// every token), in the order a sort by (value desc, id asc) gives.
void heap_top_k(std::span<const float> logits, int32_t k, int32_t* ids, float* values) {
  kernels::CandidateRow row;
  row.k = k;
  double stats[3];
  kernels::TopCandidatesArgs a;
  a.logits = logits.data();
  a.n_rows = 1;
  a.n_vocab = static_cast<int64_t>(logits.size());
  a.rows = &row;
  a.k_stride = k;
  a.ids = ids;
  a.values = values;
  a.stats = stats;
  kernels::top_candidates(a);
}

}  // namespace

int32_t argmax(std::span<const float> logits) {
  if (logits.empty() || std::isnan(logits[0])) return 0;  // nothing compares greater than a NaN
  const float mx = kernels::row_max(logits.data(), static_cast<int64_t>(logits.size()));
  for (size_t i = 0; i < logits.size(); ++i) {
    if (logits[i] == mx) return static_cast<int32_t>(i);
  }
  return 0;
}

float token_logprob(std::span<const float> logits, int32_t token) {
  if (token < 0 || static_cast<size_t>(token) >= logits.size()) return -INFINITY;
  const double lse = kernels::log_sum_exp(logits.data(), static_cast<int64_t>(logits.size()));
  return static_cast<float>(logits[static_cast<size_t>(token)] - lse);
}

std::vector<TokenScore> top_logprobs(std::span<const float> logits, int n) {
  const int64_t n_vocab = static_cast<int64_t>(logits.size());
  n = static_cast<int>(std::max<int64_t>(0, std::min<int64_t>(n, n_vocab)));
  std::vector<TokenScore> out;
  if (n == 0) return out;
  const double lse = kernels::log_sum_exp(logits.data(), n_vocab);
  std::vector<int32_t> idx(static_cast<size_t>(n));
  if (n <= kernels::kMaxCandidates) {
    std::vector<float> values(idx.size());
    heap_top_k(logits, n, idx.data(), values.data());
  } else {
    std::vector<int32_t> all(logits.size());
    std::iota(all.begin(), all.end(), 0);
    std::partial_sort(all.begin(), all.begin() + n, all.end(), [&](int32_t a, int32_t b) {
      return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
    });
    std::copy(all.begin(), all.begin() + n, idx.begin());
  }
  for (int32_t t : idx)
    out.push_back({t, static_cast<float>(logits[static_cast<size_t>(t)] - lse)});
  return out;
}

Sampler::Sampler(const SamplingParams& p)
    : p_(p), rng_(p.seed ? *p.seed : std::random_device{}()) {}

int32_t Sampler::sample(std::span<const float> logits, std::span<const int32_t> history,
                        int64_t n_prompt) {
  const size_t n_vocab = logits.size();
  if (n_vocab == 0) return 0;
  const bool penalise =
      p_.repetition_penalty != 1.0f || p_.presence_penalty != 0.0f || p_.frequency_penalty != 0.0f;
  std::span<const float> l = logits;
  if (penalise && !history.empty()) {
    work_.assign(logits.begin(), logits.end());
    std::unordered_map<int32_t, int> output_counts;
    for (size_t i = static_cast<size_t>(std::max<int64_t>(0, n_prompt)); i < history.size(); ++i) {
      output_counts[history[i]]++;
    }
    // kernels::penalised_logit is the arithmetic of the device candidates too (no FMA).
    if (p_.repetition_penalty != 1.0f) {
      std::unordered_map<int32_t, bool> seen;
      seen.reserve(history.size());
      for (int32_t t : history) {
        if (t < 0 || static_cast<size_t>(t) >= n_vocab || !seen.emplace(t, true).second) continue;
        float& x = work_[static_cast<size_t>(t)];
        x = kernels::penalised_logit(x, 0, p_.repetition_penalty, 0.0f, 0.0f);
      }
    }
    for (const auto& [t, count] : output_counts) {
      if (t < 0 || static_cast<size_t>(t) >= n_vocab) continue;
      float& x = work_[static_cast<size_t>(t)];
      x = kernels::penalised_logit(x, count, 1.0f, p_.presence_penalty, p_.frequency_penalty);
    }
    l = work_;
  }
  if (p_.temperature <= 0.0f || p_.top_k == 1) return argmax(l);
  if (p_.top_k > 0 && static_cast<size_t>(p_.top_k) < n_vocab) {
    return sample_top_k(l, static_cast<size_t>(p_.top_k));
  }
  return sample_row(l);
}

int32_t Sampler::sample_top_k(std::span<const float> l, size_t k) {
  auto by_logit = [&](int32_t a, int32_t b) { return l[a] > l[b] || (l[a] == l[b] && a < b); };
  if (k <= static_cast<size_t>(kernels::kMaxCandidates)) {
    idx_.resize(k);
    vals_.resize(k);
    heap_top_k(l, static_cast<int32_t>(k), idx_.data(), vals_.data());
  } else {
    idx_.resize(l.size());
    std::iota(idx_.begin(), idx_.end(), 0);
    std::nth_element(idx_.begin(), idx_.begin() + static_cast<int64_t>(k), idx_.end(), by_logit);
    idx_.resize(k);
    std::sort(idx_.begin(), idx_.end(), by_logit);
  }
  return draw_sorted(l, k);
}

int32_t Sampler::draw_sorted(std::span<const float> l, size_t k) {
  std::vector<double>& prob = prob_;
  prob.resize(k);
  const double mx = l[idx_[0]];
  double sum = 0.0;
  for (size_t i = 0; i < k; ++i) {
    prob[i] = std::exp((l[idx_[i]] - mx) / p_.temperature);
    sum += prob[i];
  }
  size_t keep = k;
  if (p_.top_p < 1.0f) {  // nucleus: the shortest prefix whose mass reaches top_p
    double acc = 0.0;
    for (size_t i = 0; i < k; ++i) {
      acc += prob[i] / sum;
      if (acc >= p_.top_p) {
        keep = i + 1;
        break;
      }
    }
  }
  if (p_.min_p > 0.0f) {  // drop tokens below min_p x the best token's probability
    const double floor = prob[0] * p_.min_p;
    size_t m = 1;
    while (m < keep && prob[m] >= floor) ++m;
    keep = m;
  }
  double total = 0.0;
  for (size_t i = 0; i < keep; ++i) total += prob[i];
  std::uniform_real_distribution<double> u(0.0, total);
  double r = u(rng_);
  for (size_t i = 0; i < keep; ++i) {
    r -= prob[i];
    if (r <= 0.0) return idx_[i];
  }
  return idx_[keep - 1];
}

int32_t Sampler::sample_row(std::span<const float> l) {
  const int64_t n_vocab = static_cast<int64_t>(l.size());
  const float mx = kernels::row_max(l.data(), n_vocab);
  if (!std::isfinite(mx)) {
    // Every logit -inf or NaN, or a +inf: the definition, sorting the row.
    idx_.resize(l.size());
    std::iota(idx_.begin(), idx_.end(), 0);
    std::sort(idx_.begin(), idx_.end(),
              [&](int32_t a, int32_t b) { return l[a] > l[b] || (l[a] == l[b] && a < b); });
    return draw_sorted(l, l.size());
  }
  // p_0 = exp(0) = 1: the walks' masses are the definition's probabilities over the best's.
  const double inv_t = 1.0 / static_cast<double>(p_.temperature);
  walk_.reset(l, mx, inv_t);
  RowWalk::Goal keep;  // where the kept prefix ends (-1: the whole row)
  double kept = walk_.total();
  if (p_.min_p > 0.0f) min_p_cut(l, mx, inv_t, keep.last, kept);
  if (p_.top_p < 1.0f) {
    // Nucleus: the first token where the running mass reaches top_p of the whole row's.
    const RowWalk::Stop s = walk_.walk({static_cast<double>(p_.top_p) * walk_.total(), keep.last});
    keep.last = s.token;
    kept = s.mass;
  }
  std::uniform_real_distribution<double> u(0.0, kept);
  keep.target = u(rng_);
  return walk_.walk(keep).token;
}

void Sampler::min_p_cut(std::span<const float> l, float mx, double inv_t, int32_t& last,
                        double& mass) {
  // The best token always stays; then every token with p >= min_p (p_0 = 1). Those lie above
  // the logit mx + T ln(min_p): collect a little below it and test each p exactly.
  const double floor = p_.min_p;
  const double at = mx + std::log(floor) / inv_t;
  const float lo = static_cast<float>(at - 1e-5 * (1.0 + std::abs(at)));
  const int64_t n = static_cast<int64_t>(l.size());
  std::vector<float>& cx = vals_;
  cx.resize(l.size() + 16);
  idx_.resize(l.size() + 16);
  const int64_t m =
      kernels::collect_range(l.data(), nullptr, n, lo, INFINITY, cx.data(), idx_.data());
  prob_.resize(static_cast<size_t>(m));
  kernels::tempered_probs(cx.data(), m, mx, inv_t, prob_.data());
  last = -1;
  mass = 0.0;
  float last_x = INFINITY;
  for (int64_t i = 0; i < m; ++i) {
    const size_t j = static_cast<size_t>(i);
    if (!(prob_[j] >= floor)) continue;
    mass += prob_[j];
    if (cx[j] <= last_x) {  // lowest value, and of equal ones the highest id (row order)
      last_x = cx[j];
      last = idx_[j];
    }
  }
  if (last < 0) {  // min_p above 1: the best token alone
    last = argmax(l);
    mass = 1.0;
  }
}

namespace {
// How far (relative to the total) a decision taken with the device's row mass must be from its
// edge. The mass differs from the host's sum in rounding only (a different summation order,
// exp within an ulp): under 1e-10 of it for any vocabulary.
constexpr double kMassMargin = 1e-8;
}  // namespace

bool Sampler::candidate_row(std::span<const int32_t> history, int64_t n_prompt, int64_t n_vocab,
                            int top_logprobs, kernels::CandidateRow& row,
                            std::vector<int32_t>& pen_tokens,
                            std::vector<int32_t>& pen_counts) const {
  if (n_vocab <= 0) return false;
  const bool penalise = (p_.repetition_penalty != 1.0f || p_.presence_penalty != 0.0f ||
                         p_.frequency_penalty != 0.0f) &&
                        !history.empty();
  if (penalise && top_logprobs >= 0) return false;
  const bool greedy = p_.temperature <= 0.0f || p_.top_k == 1;
  int64_t k = 1;
  uint32_t flags = top_logprobs >= 0 ? kernels::kCandidateLse : 0u;
  if (!greedy) {
    if (p_.top_k > 0 && p_.top_k < n_vocab) {
      k = p_.top_k;  // the sampler's sum runs over these k alone
    } else {
      k = std::min<int64_t>(kernels::kMaxCandidates, n_vocab);
      if (k < n_vocab) flags |= kernels::kCandidateMass;
    }
  }
  k = std::min<int64_t>(std::max<int64_t>(k, top_logprobs), n_vocab);
  if (k > kernels::kMaxCandidates) return false;
  row = kernels::CandidateRow{};
  row.k = static_cast<int32_t>(k);
  row.flags = flags;
  row.temperature = p_.temperature > 0.0f ? p_.temperature : 1.0f;
  row.pen_begin = row.pen_end = static_cast<int32_t>(pen_tokens.size());
  if (!penalise) return true;
  row.repetition_penalty = p_.repetition_penalty;
  row.presence_penalty = p_.presence_penalty;
  row.frequency_penalty = p_.frequency_penalty;
  // Distinct history tokens, each with its count in the output (in order of first appearance).
  std::unordered_map<int32_t, size_t> at;  // token -> index into pen_tokens
  at.reserve(history.size());
  const size_t first_output = static_cast<size_t>(std::max<int64_t>(0, n_prompt));
  for (size_t i = 0; i < history.size(); ++i) {
    const int32_t t = history[i];
    if (t < 0 || t >= n_vocab) continue;
    auto [it, added] = at.try_emplace(t, pen_tokens.size());
    if (added) {
      pen_tokens.push_back(t);
      pen_counts.push_back(0);
    }
    if (i >= first_output) pen_counts[it->second]++;
  }
  row.pen_end = static_cast<int32_t>(pen_tokens.size());
  return true;
}

std::optional<int32_t> Sampler::sample_candidates(const Candidates& c) {
  const size_t n = std::min(c.ids.size(), c.values.size());
  if (n == 0 || c.n_vocab <= 0) return std::nullopt;
  if (p_.temperature <= 0.0f || p_.top_k == 1) return c.ids[0];
  const size_t n_vocab = static_cast<size_t>(c.n_vocab);
  size_t k = n_vocab;
  if (p_.top_k > 0) k = std::min<size_t>(k, static_cast<size_t>(p_.top_k));
  // whole: every token sample() would weigh is a candidate, and this is sample()'s arithmetic
  // step by step. Otherwise k is the whole vocabulary and its sum is the device's mass.
  const bool whole = k <= n;
  if (!whole && (k != n_vocab || !(c.mass > 0.0) || !std::isfinite(c.mass))) return std::nullopt;
  const size_t m = whole ? k : n;
  prob_.resize(m);
  const double mx = c.values[0];
  double sum = 0.0;
  for (size_t i = 0; i < m; ++i) {
    prob_[i] = std::exp((c.values[i] - mx) / p_.temperature);
    sum += prob_[i];
  }
  if (!whole) sum = c.mass;
  const double margin = whole ? 0.0 : kMassMargin;
  size_t keep = k;  // > m: reaches past the candidates
  if (p_.top_p < 1.0f) {
    double acc = 0.0;
    bool found = false;
    for (size_t i = 0; i < m; ++i) {
      const double before = acc;
      acc += prob_[i] / sum;
      if (acc >= p_.top_p) {
        if (!whole && (acc - p_.top_p < margin || p_.top_p - before < margin)) return std::nullopt;
        keep = i + 1;
        found = true;
        break;
      }
    }
    if (!found && !whole && p_.top_p - acc < margin) return std::nullopt;
  }
  if (p_.min_p > 0.0f) {
    const double floor = prob_[0] * p_.min_p;
    const size_t limit = std::min(keep, m);
    size_t i = 1;
    while (i < limit && prob_[i] >= floor) ++i;
    if (i == limit && keep > m) return std::nullopt;  // the cut lies past the candidates
    keep = i;
  }
  if (keep <= m) {
    double total = 0.0;
    for (size_t i = 0; i < keep; ++i) total += prob_[i];
    std::uniform_real_distribution<double> u(0.0, total);
    double r = u(rng_);
    for (size_t i = 0; i < keep; ++i) {
      r -= prob_[i];
      if (r <= 0.0) return c.ids[i];
    }
    return c.ids[keep - 1];
  }
  // The nucleus is the whole vocabulary (top_p 1, no min_p cut among the candidates): draw over
  // the mass; a draw landing past the candidates, or too near an edge, is taken back.
  if (p_.top_p < 1.0f) return std::nullopt;
  const std::mt19937_64 saved = rng_;
  std::uniform_real_distribution<double> u(0.0, sum);
  double r = u(rng_);
  const double edge = margin * sum;
  for (size_t i = 0; i < m; ++i) {
    const double before = r;
    r -= prob_[i];
    if (r <= 0.0) {
      if (r > -edge || before < edge) break;
      return c.ids[i];
    }
  }
  rng_ = saved;
  return std::nullopt;
}

std::optional<float> candidate_logprob(const Candidates& c, int32_t token) {
  const size_t n = std::min(c.ids.size(), c.values.size());
  for (size_t i = 0; i < n; ++i) {
    if (c.ids[i] == token) return static_cast<float>(c.values[i] - c.lse);
  }
  return std::nullopt;
}

std::vector<TokenScore> candidate_top_logprobs(const Candidates& c, int n) {
  const size_t m = std::min({c.ids.size(), c.values.size(), static_cast<size_t>(std::max(n, 0))});
  std::vector<TokenScore> out;
  out.reserve(m);
  for (size_t i = 0; i < m; ++i) out.push_back({c.ids[i], static_cast<float>(c.values[i] - c.lse)});
  return out;
}

}  // namespace arc
