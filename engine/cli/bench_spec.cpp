#include "bench_spec.h"

#include <algorithm>
#include <chrono>
#include <numeric>

namespace arc::cli {

Status spec_decode(TpDriver& drv, int32_t seq, std::vector<int32_t>& history, int64_t n_prompt,
                   int64_t n_gen, Sampler& sampler, SequenceDrafter& drafter, AdaptiveK& k,
                   SpecCounters& counters, ForwardExecutor* exec) {
  std::vector<float> hidden;
  const int64_t end = n_prompt + n_gen;
  std::vector<int32_t> draft, toks, pos, seqs, rows;
  const auto n_vocab_of = [](size_t n_values, size_t n_rows) { return n_values / n_rows; };
  while (static_cast<int64_t>(history.size()) < end) {
    const auto n = static_cast<int64_t>(history.size());
    draft.clear();
    const int64_t room = std::min<int64_t>(k.next(), end - n - 1);
    if (room > 0) drafter.propose(history, static_cast<int>(room), draft);
    if (static_cast<int64_t>(draft.size()) > room) draft.resize(static_cast<size_t>(room));
    // The last token (K/V not yet written) and the drafts, every position a logit row.
    toks.assign(1, history.back());
    toks.insert(toks.end(), draft.begin(), draft.end());
    pos.resize(toks.size());
    std::iota(pos.begin(), pos.end(), static_cast<int32_t>(n - 1));
    seqs.assign(toks.size(), seq);
    rows.resize(toks.size());
    std::iota(rows.begin(), rows.end(), 0);
    ARC_ASSIGN_OR_RETURN(auto logits, drv.step({toks, pos, seqs, rows}));
    const size_t n_vocab = n_vocab_of(logits.size(), rows.size());
    int accepted = 0;
    for (size_t i = 0; i < rows.size(); ++i) {
      const std::span<const float> row(logits.data() + i * n_vocab, n_vocab);
      const int32_t t = sampler.sample(row, history, n_prompt);
      history.push_back(t);
      if (static_cast<int64_t>(history.size()) >= end) break;
      if (i >= draft.size() || t != draft[i]) break;
      ++accepted;
    }
    if (exec != nullptr && drafter.wants_hidden()) {
      // The last token's and the accepted drafts' positions are confirmed.
      ARC_RETURN_IF_ERROR(exec->fetch_hidden(0, accepted + 1, hidden));
      drafter.observe_hidden(history, n - 1, hidden);
    }
    k.record(static_cast<int>(draft.size()), accepted);
    counters.drafted += draft.size();
    counters.accepted += static_cast<uint64_t>(accepted);
    counters.steps++;
  }
  return ok_status();
}

Result<std::vector<double>> verify_costs(TpDriver& drv, int32_t seq, int64_t at, int max_k,
                                         int repeats) {
  ARC_RETURN_IF_ERROR(drv.reserve(seq, at + max_k + 1));
  auto time_step = [&](int n) -> Result<double> {
    std::vector<double> t;
    std::vector<int32_t> toks(static_cast<size_t>(n)), pos(toks.size()), seqs(toks.size(), seq),
        rows(toks.size());
    for (int i = 0; i < n; ++i) toks[static_cast<size_t>(i)] = 100 + i;
    std::iota(pos.begin(), pos.end(), static_cast<int32_t>(at));
    std::iota(rows.begin(), rows.end(), 0);
    for (int r = 0; r < repeats; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      ARC_ASSIGN_OR_RETURN(auto logits, drv.step({toks, pos, seqs, rows}));
      t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  };
  // Alternating with the one-token step, so a drift of the host hits both alike.
  std::vector<double> out;
  for (int kk = 1; kk <= max_k; ++kk) {
    ARC_ASSIGN_OR_RETURN(const double one, time_step(1));
    ARC_ASSIGN_OR_RETURN(const double many, time_step(kk + 1));
    out.push_back(many / one);
  }
  return out;
}

}  // namespace arc::cli
